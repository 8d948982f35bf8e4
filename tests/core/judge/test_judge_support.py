"""Shared builders for the judge, evaluator and triage tests (no tests here).

Runs are written straight into a temporary store (fast and exact), except where a test wants
the engine itself; the judge is a scripted loopback server (`tests/support/fake_openai.py`)
whose plan is chosen from the prompt it receives, so it behaves like a judge with a rule.
"""

from __future__ import annotations

import re
from pathlib import Path

from compare_tui.catalogue import Catalogue, ModelEntry, write_catalogue
from compare_tui.engine.retry import RetryPolicy
from compare_tui.goldset import load_golden_set
from compare_tui.store import AttemptRecord, RunRecord, Store
from tests.support.builders import write_set
from tests.support.fake_openai import text

FAST_RETRY = RetryPolicy(max_retries=1, base_s=0.01, cap_s=0.02)
TASKS = {f"t{i}": "billing" for i in range(1, 7)}
"""Six tasks; the right answer to each is `billing`."""
GOOD, BAD = "billing", "bug"


def golden(tmp_path: Path, tasks: dict[str, str] = TASKS):
    return load_golden_set(write_set(tmp_path / "set", tasks))


def entry(name: str, url: str = "http://127.0.0.1:9/v1", model: str | None = None) -> ModelEntry:
    """A hosted catalogue entry (pins present, no key) named `name`, model id `model or name`."""
    return ModelEntry.model_validate(
        {
            "name": name,
            "kind": "hosted",
            "endpoint": url,
            "model": model or name,
            "revision": "2026-12-01",
            "weights_digest": "sha256:" + "0" * 64,
            "cost": {
                "basis": "token_price",
                "usd_per_mtok_input": 1.0,
                "usd_per_mtok_output": 2.0,
                "captured": "2026-12-01",
                "source": "test",
            },
        }
    )


def add_run(store: Store, goldset, model: str, answers: dict[str, tuple[str, str] | AttemptRecord | None]) -> str:
    """A completed run of `goldset` by `model` whose task answers are `(outcome, text)`; None
    records an errored attempt (no answer)."""
    model_entry = entry(model)
    run = store.create_run(
        RunRecord(
            status="completed",
            goldset_id=goldset.manifest.workload_id,
            goldset_name=goldset.manifest.name,
            goldset_version=goldset.manifest.version,
            goldset_digest=goldset.digest,
            goldset_path=str(goldset.root),
            model_name=model,
            model_entry=model_entry.pins(),
            provenance="provenance by host attestation, not verified",
            cost_basis=model_entry.cost.model_dump(mode="json"),
            task_count=len(goldset.tasks),
        )
    )
    records = []
    for task_id, answer in answers.items():
        if isinstance(answer, AttemptRecord):
            records.append(answer.model_copy(update={"run_id": run.id, "id": f"{run.id}:{task_id}:1"}))
        elif answer is None:
            records.append(
                AttemptRecord(
                    run_id=run.id, task_id=task_id, attempt=1, outcome="error", error_class="http_5xx", error="HTTP 500"
                )
            )
        else:
            records.append(
                AttemptRecord(
                    run_id=run.id,
                    task_id=task_id,
                    attempt=1,
                    outcome=answer[0],
                    answer_text=answer[1],
                    score_detail=f"scored {answer[0]}",
                )
            )
    store.record_attempts(records)
    return run.id


def scored(answer_text: str) -> tuple[str, str]:
    """An answer and the outcome the exact scorer would give it against `billing`."""
    return ("pass" if answer_text.strip().lower() == GOOD else "fail", answer_text)


_FENCE = re.compile(r"<<<(ANSWER A|ANSWER B|ANSWER|REQUEST)\n(.*?)\n\1>>>", re.DOTALL)


def fenced(body: dict) -> dict[str, str]:
    """The fenced parts of the judge prompt in a request body (REQUEST, ANSWER A/B, ANSWER)."""
    user = next(m["content"] for m in body["messages"] if m["role"] == "user")
    return {m.group(1): m.group(2) for m in _FENCE.finditer(user)}


def first_position_judge(body: dict, count: int):
    """Always prefers whatever is shown first: every pair must come out inconsistent."""
    return text("Answer A reads better.\nVERDICT: A")


def consistent_judge(body: dict, count: int):
    """Prefers the answer that says `billing`, whatever the order (a tie when both or neither do)."""
    parts = fenced(body)
    if "ANSWER" in parts:  # a grade
        return text(
            "It names the right label.\nVERDICT: PASS" if GOOD in parts["ANSWER"] else "Wrong label.\nVERDICT: FAIL"
        )
    a, b = GOOD in parts["ANSWER A"], GOOD in parts["ANSWER B"]
    verdict = "TIE" if a == b else "A" if a else "B"
    return text(f"The better answer names the right label.\nVERDICT: {verdict}")


def write_models(path: Path, *entries: ModelEntry) -> Path:
    return write_catalogue(Catalogue(models=tuple(entries)), path)

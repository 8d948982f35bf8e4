"""Per-task details for a bundle: the input, the expected outcome, each model's answer per
attempt with the scorer's detail, and a person's review. The one reader of answers for
`publish` (the figures come from the report); secrets are masked on the way in.

Answers are read with the store's narrow column read (no record validation): at 2 × 10,000
tasks validating whole attempt records alone would take most of the write budget.
"""

from __future__ import annotations

import json
import os
import re
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from compare_tui.catalogue.keys import REDACTED, mask_provider_keys
from compare_tui.goldset.models import Task
from compare_tui.goldset.text import expected_text, input_text
from compare_tui.report import GoldsetRead
from compare_tui.scoring.result import Answer, ToolCall
from compare_tui.store import AttemptCells, Store
from compare_tui.store.records import RunRecord
from compare_tui.vocabulary import Outcome, ReviewVerdict

_KEY_PREFIX = re.compile(r"sk-|sk_|AIza|gsk_|xai-|hf_|r8_|pplx-|fw_|AKIA|ASIA|ghp_|github_pat_|gh[ousr]_")
_COLUMNS = (
    "task_id",
    "attempt",
    "outcome",
    "answer_text",
    "tool_calls",
    "reasoning",
    "score_detail",
    "error_class",
    "error",
    "ttft_ms",
    "e2e_ms",
)


@dataclass(frozen=True, slots=True)
class AttemptDetail:
    attempt: int
    outcome: Outcome
    answer: str
    detail: str
    error: str
    ttft_ms: float | None
    e2e_ms: float | None


@dataclass(frozen=True, slots=True)
class ReviewDetail:
    verdict: ReviewVerdict
    note: str
    reviewer: str
    at: str


@dataclass(frozen=True, slots=True)
class TaskDetail:
    """Everything a reader of one task sees, for every model (by run id)."""

    task_id: str
    input: str
    expected: str
    scorer: str
    attempts: Mapping[str, tuple[AttemptDetail, ...]]
    reviews: Mapping[str, ReviewDetail]


class Masker:
    """Masks provider keys (by prefix) and the values of the runs' virtual-key variables when
    they are set here, so no key reaches a bundle even if a model echoed one."""

    def __init__(self, runs: Iterable[RunRecord], environ: Mapping[str, str] | None = None) -> None:
        env = os.environ if environ is None else environ
        names = {str(r.model_entry.get("key_env")) for r in runs if r.model_entry and r.model_entry.get("key_env")}
        values = sorted((env[n] for n in names if len(env.get(n, "")) >= 8), key=len, reverse=True)
        self._pattern = re.compile("|".join(re.escape(v) for v in values)) if values else None

    def __call__(self, text: str) -> str:
        if not text:
            return text
        if _KEY_PREFIX.search(text):  # a fast pre-check: every provider pattern starts so
            text = mask_provider_keys(text)
        return self._pattern.sub(REDACTED, text) if self._pattern is not None else text


def _answer(row: AttemptCells) -> str:
    stored_calls = row["tool_calls"]
    if not stored_calls or stored_calls == "[]":
        # Most answers call no tool: the text is the rendered answer (no JSON to parse).
        return str(row["answer_text"] or "")
    try:
        calls = json.loads(stored_calls)
    except ValueError:
        calls = []
    tool_calls = tuple(
        ToolCall(name=str(c.get("name", "")), arguments=str(c.get("arguments", "")))
        for c in calls
        if isinstance(c, dict)
    )
    return Answer(text=row["answer_text"] or "", tool_calls=tool_calls).rendered()


def _goldset_tasks(
    runs: Sequence[RunRecord], goldsets: Mapping[str, GoldsetRead]
) -> tuple[dict[str, Task], dict[str, str]]:
    """Tasks by id and their scorer's kind, from the runs' golden sets as the report read them
    (`load_report_inputs(…, goldsets=…)`); a set it could not read is left out (the report
    carries a note saying so)."""
    from compare_tui.goldset import GoldenSet

    tasks: dict[str, Task] = {}
    scorers: dict[str, str] = {}
    for path in dict.fromkeys(run.goldset_path for run in runs if run.goldset_path):
        goldset = goldsets.get(path)
        if not isinstance(goldset, GoldenSet):
            continue
        for task in goldset.tasks:
            if task.id not in tasks:
                tasks[task.id] = task
                scorers[task.id] = goldset.scorer_for(task).kind
    return tasks, scorers


def task_details(
    store: Store, runs: Sequence[RunRecord], task_ids: Sequence[str], mask: Masker, goldsets: Mapping[str, GoldsetRead]
) -> tuple[TaskDetail, ...]:
    """One `TaskDetail` per task id, in order. `goldsets` are the sets the report read."""
    tasks, scorers = _goldset_tasks(runs, goldsets)
    attempts: dict[str, dict[str, list[AttemptDetail]]] = {}
    reviews: dict[str, dict[str, ReviewDetail]] = defaultdict(dict)
    for run in runs:
        per_task: dict[str, list[AttemptDetail]] = defaultdict(list)
        for row in store.attempt_columns(run.id, _COLUMNS):
            error = f"{row['error_class'] or 'unclassified'}: {row['error']}" if row["error"] else ""
            per_task[row["task_id"]].append(
                AttemptDetail(
                    row["attempt"],
                    row["outcome"],
                    mask(_answer(row)),
                    mask(row["score_detail"] or ""),
                    mask(error),
                    row["ttft_ms"],
                    row["e2e_ms"],
                )
            )
        attempts[run.id] = per_task
        for task_id, review in store.reviews_for_run(run.id).items():
            reviews[task_id][run.id] = ReviewDetail(review.verdict, mask(review.note), review.reviewer, review.at)
    out = []
    for task_id in task_ids:
        task = tasks.get(task_id)
        out.append(
            TaskDetail(
                task_id=task_id,
                input=mask(input_text(task)) if task is not None else "",
                expected=mask(expected_text(task)) if task is not None else "",
                scorer=scorers.get(task_id, ""),
                attempts={run.id: tuple(attempts[run.id].get(task_id, ())) for run in runs},
                reviews=dict(reviews.get(task_id, {})),
            )
        )
    return tuple(out)

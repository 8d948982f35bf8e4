"""The insights' one reader: a comparison (or run) reference → `InsightInputs`.

The comparison, its runs, baseline and golden set are found by the report's loader
(`report.load_report_inputs`), so `insights` and `report` always read the same runs; then one
narrow read per run takes what a cause is told from (answers' first characters, finish reason,
scorer data), decoding scorer data only for failed attempts.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from compare_tui.insights.causes import HEAD_CHARS, FailedAttempt, regex_miss
from compare_tui.insights.language import detect_language
from compare_tui.insights.model import InsightInputs, ModelAttempts
from compare_tui.insights.traffic import LoggedReply
from compare_tui.report import GoldsetRead, load_report_inputs
from compare_tui.report.inputs import ReportInputs, RunInput
from compare_tui.store import Store
from compare_tui.vocabulary import Outcome

if TYPE_CHECKING:
    from compare_tui.goldset import Task

_COLUMNS = (
    "task_id",
    "attempt",
    "outcome",
    "answer_text",
    "tool_calls",
    "finish_reason",
    "error_class",
    "score_detail",
    "score_data",
    "error",
)
_FAILED = frozenset({Outcome.FAIL, Outcome.ERROR})


def load_insight_inputs(store: Store, ref: str) -> InsightInputs:
    """The inputs of the insights of `ref` (a comparison or run id, a prefix, or `latest`).
    Raises the report loader's `ReportNotFoundError` when there is nothing to read."""
    goldsets: dict[str, GoldsetRead] = {}
    return insight_inputs_for(store, load_report_inputs(store, ref, goldsets=goldsets), goldsets)


def insight_inputs_for(store: Store, report: ReportInputs, goldsets: Mapping[str, GoldsetRead]) -> InsightInputs:
    """The insights' inputs for a report already loaded (`report --format md`: its runs and
    baseline, `--baseline` included), with the golden sets its loader read (`goldsets`: path →
    set, or the error that kept it unread), so nothing is read twice."""
    tags: dict[str, tuple[str, ...]] = {}
    tasks: dict[str, Task] = {}
    logged: list[LoggedReply] | None = None
    skips: Counter[str] = Counter()
    for path, goldset in goldsets.items():
        if isinstance(goldset, Exception):
            continue
        for task in goldset.tasks:
            tags.setdefault(task.id, tuple(task.tags))
            tasks.setdefault(task.id, task)
        sampled = _sample_info(Path(path))
        if sampled is not None:
            logged = (logged or []) + [
                LoggedReply(t.id, t.expected.text, request_text(t))
                for t in goldset.tasks
                if t.expected.text is not None
            ]
            skips.update({reason: int(entry.get("count", 0)) for reason, entry in sampled.get("skipped", {}).items()})
    languages = _RequestLanguages(tasks)
    names = _names(list(report.runs))
    models = tuple(
        _model_attempts(store, run, name, report.task_kinds, languages)
        for run, name in zip(report.runs, names, strict=True)
    )
    return InsightInputs(
        ref=report.comparison_id or report.runs[0].run.id,
        models=models,
        baseline=report.baseline,
        comparison_name=report.comparison_name,
        task_tags=tags,
        notes=report.notes,
        logged=tuple(logged) if logged is not None else None,
        logged_skips=dict(skips),
    )


def _sample_info(folder: Path) -> dict[str, Any] | None:
    """A sampled set's `sample.json` (None: not a sampled set, or unreadable)."""
    try:
        info = json.loads((folder / "sample.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return info if isinstance(info, dict) else None


def _names(runs: list[RunInput]) -> list[str]:
    seen = Counter(r.run.model_name for r in runs)
    return [r.run.model_name if seen[r.run.model_name] == 1 else f"{r.run.model_name}@{r.run.id[:8]}" for r in runs]


class _RequestLanguages:
    """task id → its request's language, told once per task and only for tasks that failed."""

    def __init__(self, tasks: Mapping[str, Task]) -> None:
        self._tasks = tasks
        self._told: dict[str, str | None] = {}

    def get(self, task_id: str) -> str | None:
        if task_id not in self._told:
            task = self._tasks.get(task_id)
            self._told[task_id] = detect_language(request_text(task)) if task is not None else None
        return self._told[task_id]


def request_text(task: Task) -> str:
    """What the person asked: the task's prompt, else its last user message's text (the system
    prompt and earlier turns are left out: they are often in English whatever the user writes)."""
    given = task.input
    if given.prompt is not None:
        return str(given.prompt)
    for message in reversed(given.messages or []):
        if message.role != "user":
            continue
        if isinstance(message.content, str):
            return message.content
        parts = message.content or []
        return " ".join(str(p.get("text", "")) for p in parts if isinstance(p, dict))
    return ""


def _model_attempts(
    store: Store, run: RunInput, name: str, kinds: Mapping[str, str], languages: _RequestLanguages
) -> ModelAttempts:
    outcomes: dict[str, list[Outcome]] = defaultdict(list)
    failed = []
    for row in store.attempt_columns(run.run.id, _COLUMNS):
        outcome = row["outcome"]
        outcomes[row["task_id"]].append(outcome)
        if outcome not in _FAILED:
            continue
        score_data = json.loads(row["score_data"]) if row["score_data"] else {}
        kind = kinds.get(row["task_id"], "")
        miss = regex_miss(score_data, row["answer_text"] or "") if kind == "regex" and outcome is Outcome.FAIL else ""
        failed.append(
            FailedAttempt(
                task_id=row["task_id"],
                attempt=row["attempt"],
                outcome=outcome,
                scorer_kind=kind,
                answer_head=(row["answer_text"] or "")[:HEAD_CHARS],
                has_tool_calls=row["tool_calls"] not in (None, "", "[]"),
                finish_reason=row["finish_reason"],
                error_class=row["error_class"],
                detail=row["score_detail"] or row["error"] or "",
                score_data=score_data,
                request_language=languages.get(row["task_id"]),
                regex_miss=miss,
            )
        )
    return ModelAttempts(
        model=name,
        run_id=run.run.id,
        outcomes={task: tuple(outs) for task, outs in outcomes.items()},
        failed=tuple(failed),
        verdicts=run.verdicts,
    )

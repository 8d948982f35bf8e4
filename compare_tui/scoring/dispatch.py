"""One entry point for all six scorers: `score(task, spec, answer, set_root=...)`."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from compare_tui.goldset.models import Task
from compare_tui.scoring.command import score_command
from compare_tui.scoring.human import score_human
from compare_tui.scoring.json_scorer import score_json
from compare_tui.scoring.result import Answer, Outcome, ScoreResult
from compare_tui.scoring.text import score_exact, score_regex
from compare_tui.scoring.tool_call import score_tool_call

PURE_SCORERS: dict[str, Callable[[Task, Any, Answer], ScoreResult]] = {
    "exact": score_exact,
    "regex": score_regex,
    "json": score_json,
    "tool_call": score_tool_call,
    "human": score_human,
}
"""kind -> pure function `(task, spec, answer) -> ScoreResult` (no IO, no side effects)."""


def score(task: Task, spec: Any, answer: Answer, *, set_root: Path) -> ScoreResult:
    """Score one answer with the scorer `spec` (any of the six spec models, picked by `kind`).

    Never raises: a scorer bug or an unknown kind becomes `Outcome.ERROR` with the reason,
    because an error is a recorded outcome, not a lost attempt. `set_root` is the golden
    set's folder; only the `command` scorer uses it. Blocking for `command` (it runs a
    program): async callers use `asyncio.to_thread`.
    """
    kind = getattr(spec, "kind", None)
    try:
        if kind == "command":
            return score_command(task, spec, answer, set_root)
        scorer = PURE_SCORERS.get(str(kind))
        if scorer is None:
            return ScoreResult(Outcome.ERROR, f"task {task.id}: unknown scorer kind {kind!r}")
        return scorer(task, spec, answer)
    except Exception as exc:  # noqa: BLE001 - the safety net described above
        return ScoreResult(Outcome.ERROR, f"task {task.id}: {kind} scorer failed: {type(exc).__name__}: {exc}")

"""The `human` scorer: a person decides, so the outcome is always `review`."""

from __future__ import annotations

from compare_tui.goldset.models import HumanScorer, Task
from compare_tui.scoring.result import Answer, Outcome, ScoreResult


def score_human(task: Task, spec: HumanScorer, answer: Answer) -> ScoreResult:
    """Always `Outcome.REVIEW`; the detail carries the set's instructions for the reviewer."""
    instructions = spec.instructions.strip()
    detail = f"needs a person: {instructions}" if instructions else "needs a person to decide"
    return ScoreResult(Outcome.REVIEW, detail, {"instructions": spec.instructions})

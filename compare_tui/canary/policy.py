"""What the canary may do now, from its paired evidence: pure, so every surface (watch, status,
advance, the TUI) reads the same assessment.

The rule: the automatic step may only hold or roll back. `worse` (the anytime-valid sequence's
upper bound below 0 with its lower bound at or below −M) rolls back at once, whatever the step.
Advancing needs `better` or `no worse` on all the canary's pairs *and* at least `min_pairs`
new pairs since the current step began (thin data never advances), and then a person (`canary
advance`) unless the canary was started with `--auto-advance`. Everything else holds.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from compare_tui.judge.pair.figures import PairResult
from compare_tui.report.decision import Verdict
from compare_tui.report.formatting import number, plural
from compare_tui.report.sequential import StreamLook, stream_look
from compare_tui.store import CanaryPair, CanaryRecord
from compare_tui.vocabulary import CanaryState, PairGrader, PairSkip


class Move(StrEnum):
    """What the assessment allows."""

    HOLD = "hold"
    ROLL_BACK = "roll back"
    READY = "ready"
    """The evidence allows the next step; it waits for a person unless auto-advance."""
    DONE = "done"
    """The canary has ended (rolled back, promoted or stopped)."""


@dataclass(frozen=True)
class Assessment:
    look: StreamLook
    pairs: int
    """Paired outcomes (all steps)."""
    new_pairs: int
    """Paired outcomes since the current step began."""
    skipped: dict[str, int]
    move: Move
    reason: str
    graders: dict[str, Any] = field(default_factory=dict)
    """The evidence split by what graded it (`graders`)."""

    def evidence(self) -> dict[str, object]:
        """The figures behind a change, as stored with it and shown by `status --json`."""
        return {
            "pairs": self.pairs,
            "new_pairs_at_step": self.new_pairs,
            "skipped": self.skipped,
            "low_pp": round(self.look.low * 100, 1),
            "high_pp": round(self.look.high * 100, 1),
            "verdict": self.look.verdict.value,
            "alpha_side": self.look.alpha_side,
            "graders": self.graders,
        }


def graders(pairs: Sequence[CanaryPair]) -> dict[str, Any]:
    """The pairs by what graded them: `check` (paired by the golden set's checks), one entry per
    judge model and grader under `judges` (its pairs in the verdict, and its results: pairwise,
    `candidate`/`baseline`/`tie` preferred alike in both orders, `inconsistent` and `failed` left
    out; a similarity grade, `tie` as close as A's answer and `baseline` departed from it), and
    `no_check`, the requests nothing graded."""
    judges: dict[tuple[str, str], Counter[str]] = {}
    for pair in pairs:
        if pair.grader in JUDGED and pair.judge:
            key = (pair.judge, PairGrader(pair.grader).value)
            judges.setdefault(key, Counter())[pair.judge_result or PairResult.FAILED.value] += 1
    by_judge = [
        {
            "model": model,
            "grader": grader,
            "pairs": sum(1 for p in pairs if (p.judge, p.grader) == (model, grader) and p.paired is not None),
            **{result: counts[result] for result in JUDGE_RESULTS},
        }
        for (model, grader), counts in judges.items()
    ]
    return {
        # A pair stored before the canary had a judge has no grader: only checks graded then.
        "check": sum(1 for p in pairs if p.grader not in JUDGED and p.paired is not None),
        "judges": by_judge,
        "no_check": sum(1 for p in pairs if p.skipped is PairSkip.NO_CHECK),
    }


JUDGED = (PairGrader.JUDGE, PairGrader.SIMILARITY)
"""The graders that are a judge (the rest: the golden set's checks)."""
JUDGE_RESULTS = tuple(
    r.value
    for r in (PairResult.CANDIDATE, PairResult.BASELINE, PairResult.TIE, PairResult.INCONSISTENT, PairResult.FAILED)
)
"""A judged pair's results as `graders` counts them (`judge.pair.figures.PairResult` values)."""


def graders_words(split: dict[str, Any]) -> str:
    """`12 pairs by the golden set's checks, 30 by judge X (both orders asked: B preferred 3, A
    preferred 20, tie 7; 4 inconsistent, left out)`: the evidence by grader, in words."""
    checked = split.get("check", 0)
    parts = [f"{plural(checked, 'pair')} by the golden set's checks"]
    for judge in split.get("judges", []):
        left_out = [
            f"{judge[k]} {words}"
            for k, words in (
                (PairResult.INCONSISTENT.value, "inconsistent (the orders disagreed: a tie, no evidence)"),
                (PairResult.FAILED.value, "failed"),
            )
            if judge.get(k)
        ]
        if judge.get("grader") == PairGrader.SIMILARITY:
            how = f"similarity to A's answer: as close {judge['tie']}, departed {judge['baseline']}"
        else:
            how = (
                f"both orders asked: B preferred {judge['candidate']}, A preferred {judge['baseline']}, "
                f"tie {judge['tie']}"
            )
        parts.append(
            f"{judge['pairs']} by judge {judge['model']} ({how}"
            + (f"; {', '.join(left_out)}" if left_out else "")
            + ")"
        )
    return ", ".join(parts)


def verdict_words(verdict: Verdict | str) -> str:
    """A verdict as the canary's lines say it (a `Verdict` or its stored spelling): an
    inconclusive one is "not yet"."""
    return "not yet" if verdict == Verdict.INCONCLUSIVE else str(verdict)


def bounds_words(low_pp: float, high_pp: float, digits: int = 1) -> str:
    """`[−16.8, +16.8]`: the confidence sequence's bounds in points, each with its sign (a real minus)."""
    return f"[{number(low_pp, f'+.{digits}f')}, {number(high_pp, f'+.{digits}f')}]"


def assess(canary: CanaryRecord, pairs: Sequence[CanaryPair]) -> Assessment:
    outcomes = [p.paired for p in pairs if p.paired is not None]
    skipped = dict(sorted(Counter(PairSkip(p.skipped).value for p in pairs if p.skipped).items()))
    look = stream_look(outcomes, margin_pp=canary.margin_pp)
    new = max(0, len(outcomes) - canary.pairs_at_step)
    bounds = f"B − A in {bounds_words(look.low * 100, look.high * 100)} points on {len(outcomes)} pairs"

    split = graders(pairs)

    def made(move: Move, reason: str) -> Assessment:
        return Assessment(look, len(outcomes), new, skipped, move, reason, split)

    if not canary.active:
        return made(Move.DONE, f"the canary has ended ({canary.state.value})")
    if not outcomes:
        return made(Move.HOLD, "no paired evidence yet: holding")
    if look.verdict is Verdict.WORSE:
        return made(Move.ROLL_BACK, f"B is worse than A beyond the {canary.margin_pp:g}-point margin ({bounds})")
    if look.verdict is Verdict.INCONCLUSIVE:
        return made(Move.HOLD, f"verdict not yet ({bounds}): holding")
    if new < canary.min_pairs:
        return made(
            Move.HOLD,
            f"verdict {look.verdict.value} ({bounds}), but only {new} new pairs at this step "
            f"(at least {canary.min_pairs} before a step): holding",
        )
    if canary.state is CanaryState.SHADOW or canary.step + 1 < len(canary.steps):
        return made(Move.READY, f"verdict {look.verdict.value} ({bounds}): the next step is allowed")
    return made(Move.READY, f"verdict {look.verdict.value} ({bounds}): B may take all the traffic")

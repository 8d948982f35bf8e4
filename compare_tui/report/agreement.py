"""Where the rule's rating and the paired test beside it disagree, found once for every reader.

The rule (`report.rule`) rates the winner's lead by its size and a few conditions; the paired
test (`report.paired`: exact McNemar on the tasks both scored) asks whether the same lead is
larger than noise, and the decision (`report.decision`) picks a model by that test. They
disagree when

- the rating is **medium** or **high** while the test finds the winner's lead over the
  runner-up within noise (the rating measures the lead's size alone);
- the rating is **low**, whatever its reason, while the test finds that lead larger than noise;
- the decision picks another model than the rule's winner (or switches where the rule names
  no single winner).

`RuleCheck` carries what was found; its `note` is the one sentence every surface prints under
the rule's line, and `gate.check_gate` turns it into a warning (or a failure) of the rule-based
gates `--require-confidence` and `--require-winner`. The test read is the one on the page:
the decision's own pair when the winner and the runner-up are the baseline and a candidate
(at the decision's level), else the report's paired comparison of the two; only when neither
is on the page is it computed here (and said to be for that pair alone).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from compare_tui.report import formatting as fmt
from compare_tui.report.decision import Decision, DecisionAction
from compare_tui.report.figures import ModelFigures
from compare_tui.report.paired import PairedComparison, paired
from compare_tui.report.rule import Recommendation

RATING_SIZE = {"high": "10 points or more", "medium": "5 points or more, under 10"}


@dataclass(frozen=True, slots=True)
class LeadTest:
    """The paired test of the rule's winner against its runner-up, as the page reads it."""

    within_noise: bool
    mcnemar_p: float
    level: float
    tasks: int
    on_page: bool
    """The pair's interval is on the page (False: computed for the note alone, at 95 %)."""


@dataclass(frozen=True, slots=True)
class RuleCheck:
    """The rule's recommendation against the paired test and the decision."""

    winner: str | None
    runner_up: str | None
    confidence: str | None
    reasons: tuple[str, ...]
    """The rule's reasons for its confidence."""
    lead: LeadTest | None
    """The paired test of winner against runner-up (None: no winner, no runner-up, or no task
    both scored)."""
    picked: str | None
    """The model the decision goes with (the candidate it switches to, else the baseline it
    keeps); None without a decision."""
    switches: bool
    """The decision switches to `picked` (False: it keeps the baseline, or there is none)."""

    @property
    def rating_disagrees(self) -> bool:
        """Medium or high beside a lead within noise, or low beside a lead larger than noise."""
        if self.lead is None or self.confidence is None:
            return False
        return (self.confidence != "low") == self.lead.within_noise

    @property
    def pick_disagrees(self) -> bool:
        """The decision goes with another model than the rule's winner (or switches to one where
        the rule names no single winner)."""
        if self.picked is None:
            return False
        if self.winner is None:
            return self.switches
        return self.picked != self.winner

    @property
    def elsewhere(self) -> str:
        """`; the decision above keeps A, and it is the one that answers whether to switch`, or ''."""
        if not self.pick_disagrees:
            return ""
        verb = "switches to" if self.switches else "keeps"
        return f"; the decision above {verb} {self.picked}, and it is the one that answers whether to switch"

    @property
    def test_words(self) -> str:
        """`McNemar p = 0.25`, with the level where it is not 95 % and `for this pair alone` when
        the pair's interval is not on the page."""
        lead = self.lead
        if lead is None:
            return ""
        words = f"McNemar p = {lead.mcnemar_p:.2g}"
        if lead.level != 0.95:
            words += f", at {fmt.level(lead.level)}"
        if not lead.on_page:
            words += ", for this pair alone"
        return words

    @property
    def note(self) -> str | None:
        """The sentence for every disagreement found, or None when the rule and the test agree."""
        winner, lead = self.winner, self.lead
        if winner is None:
            if self.pick_disagrees:
                return (
                    "The rule names no single winner; the decision above switches to "
                    f"{self.picked}, and it is the one that answers whether to switch."
                )
            return None
        if self.rating_disagrees and lead is not None and self.confidence in RATING_SIZE:
            return (
                f"Confidence “{self.confidence}” is the rule's rating of the lead's size alone "
                f"({RATING_SIZE[self.confidence]}): the paired test on the same tasks finds {winner}'s lead over "
                f"{self.runner_up} within noise ({self.test_words}), so it is not evidence that {winner} is "
                f"better{self.elsewhere}."
            )
        if self.rating_disagrees and lead is not None:
            return (
                f"Confidence “low” comes from the rule's conditions ({'; '.join(self.reasons)}), not from a "
                f"test: the paired test on the same tasks finds {winner}'s lead over {self.runner_up} "
                f"larger than noise ({self.test_words}), so “low” does not mean the difference could be "
                f"noise{self.elsewhere}."
            )
        if self.pick_disagrees:
            return f"The rule recommends {winner} on pass rate alone{self.elsewhere}."
        return None


def rule_check(
    recommendation: Recommendation,
    rows: Sequence[ModelFigures],
    pairs: Sequence[PairedComparison],
    decision: Decision | None,
) -> RuleCheck:
    """The rule's recommendation read against the paired test on the page and the decision."""
    picked = None
    switches = False
    if decision is not None:
        switches = decision.action is DecisionAction.SWITCH
        picked = decision.chosen if switches else decision.baseline
    return RuleCheck(
        recommendation.winner,
        recommendation.runner_up,
        recommendation.confidence,
        recommendation.reasons,
        _lead_test(recommendation, rows, pairs),
        picked,
        switches,
    )


def _lead_test(
    recommendation: Recommendation, rows: Sequence[ModelFigures], pairs: Sequence[PairedComparison]
) -> LeadTest | None:
    winner, runner_up = recommendation.winner, recommendation.runner_up
    if winner is None or runner_up is None:
        return None
    found = next((p for p in pairs if {p.model_a, p.model_b} == {winner, runner_up}), None)
    on_page = found is not None
    if found is None:
        a = next((r for r in rows if r.label == winner), None)
        b = next((r for r in rows if r.label == runner_up), None)
        if a is None or b is None:
            return None
        found = paired(a, b, plan=False)
    if found.within_noise is None or found.mcnemar_p is None:
        return None
    return LeadTest(found.within_noise, found.mcnemar_p, found.level, found.tasks, on_page)

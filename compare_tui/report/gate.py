"""The CI gate: hold a report to a verdict, a pass rate, or the rule's confidence or winner.

- `--require-verdict better|no-worse [--candidate B]`: against the baseline, B's verdict (or,
  without `--candidate`, some candidate's) must be at least that (`better` meets `no-worse`).
  This is the gate that acts on the paired test, the one to use for "may we switch". In a
  `--stop-when-settled` comparison the verdict is the confidence sequence's (anytime-valid,
  so holding it at any look keeps its guarantee).
- `--fail-under X`: the best pass rate in the report (the recommended model's; the only
  model's for a single run) must be at least X. X is a share (0–1) or a percentage (1–100,
  with or without `%`): `0.8`, `80` and `80%` mean the same; `1` means 100 %.
- `--require-confidence medium|high`: the rule's confidence must be at least that.
- `--require-winner MODEL`: the rule must recommend MODEL (a tie recommends no one).

The last two follow the seed's fixed rule, not a test. Where one passes while the paired test
beside it disagrees (`report.agreement`: the winner's lead within noise, or a decision that
goes with another model), the gate says so: a warning in `GateResult.warnings` (stderr, and
the JSON and JUnit outputs), or, with `strict` (`--fail-on-disagreement`), a failure.

Comparisons are exact (fractions), so 8/10 meets `--fail-under 0.8`.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from compare_tui.report.decision import Versus
from compare_tui.report.model import Report
from compare_tui.report.rule import CONFIDENCE_ORDER, meets

EXIT_OK = 0
EXIT_GATE_FAILED = 3


@dataclass(frozen=True, slots=True)
class GateCheck:
    """One option of the gate and what it found."""

    option: str
    """The option as given: `--require-verdict no-worse`."""
    reasons: tuple[str, ...]
    """Why it is not met (empty: met)."""
    warnings: tuple[str, ...] = ()
    """Met by the seed's rule while the paired test disagrees (without `strict`)."""


@dataclass(frozen=True, slots=True)
class GateResult:
    """Whether the report met every condition given, and why not."""

    checks: tuple[GateCheck, ...]
    """One per option given, `--require-verdict` first."""

    @property
    def passed(self) -> bool:
        return not self.reasons

    @property
    def reasons(self) -> tuple[str, ...]:
        """One line per condition not met (empty when `passed`)."""
        return tuple(r for c in self.checks for r in c.reasons)

    @property
    def warnings(self) -> tuple[str, ...]:
        """One line per rule-based gate met while the paired test disagrees."""
        return tuple(w for c in self.checks for w in c.warnings)

    @property
    def exit_code(self) -> int:
        return EXIT_OK if self.passed else EXIT_GATE_FAILED


def parse_pass_rate(text: str) -> Fraction:
    """A pass-rate threshold as an exact share in [0, 1]; `ValueError` says what was wrong."""
    raw = str(text).strip()
    percent = raw.endswith("%")
    try:
        value = Fraction(raw.rstrip("%").strip())
    except (ValueError, ZeroDivisionError):
        raise ValueError(f"--fail-under expects a pass rate such as 0.8, 80 or 80% (got {text!r})") from None
    if percent or value > 1:
        value /= 100
    if not 0 <= value <= 1:
        raise ValueError(f"--fail-under must be between 0 and 1, or 0 and 100 % (got {text!r})")
    return value


VERDICT_LEVELS = {"better": ("better",), "no-worse": ("better", "no worse")}


def check_gate(
    report: Report,
    *,
    fail_under: Fraction | float | str | None = None,
    require_confidence: str | None = None,
    require_winner: str | None = None,
    require_verdict: str | None = None,
    candidate: str | None = None,
    strict: bool = False,
) -> GateResult:
    """Check every condition given; a condition left as None is not checked. `strict`: a
    rule-based gate met while the paired test disagrees fails instead of warning."""
    checks: list[GateCheck] = []
    if require_verdict is not None:
        option = f"--require-verdict {require_verdict}" + (f" --candidate {candidate}" if candidate else "")
        checks.append(GateCheck(option, tuple(_verdict_reasons(report, require_verdict, candidate))))
    if fail_under is not None:
        threshold = fail_under if isinstance(fail_under, Fraction) else parse_pass_rate(str(fail_under))
        checks.append(GateCheck(f"--fail-under {fail_under}", tuple(_pass_rate_reasons(report, threshold))))
    if require_confidence is not None:
        if require_confidence not in CONFIDENCE_ORDER:
            raise ValueError(
                f"--require-confidence expects one of {', '.join(CONFIDENCE_ORDER)} (got {require_confidence!r})"
            )
        confidence = report.recommendation.confidence
        option = f"--require-confidence {require_confidence}"
        if not meets(confidence, require_confidence):
            reason = (
                f"confidence is {confidence or 'none (no recommendation)'}, below the required {require_confidence}"
            )
            checks.append(GateCheck(option, (reason,)))
        else:
            checks.append(_rule_gate(option, _confidence_disagreements(report, require_confidence), strict))
    if require_winner is not None:
        option = f"--require-winner {require_winner}"
        reasons = _winner_reasons(report, require_winner)
        if reasons:
            checks.append(GateCheck(option, tuple(reasons)))
        else:
            checks.append(_rule_gate(option, _winner_disagreements(report, require_winner), strict))
    return GateResult(tuple(checks))


def _rule_gate(option: str, disagreements: list[str], strict: bool) -> GateCheck:
    """A rule-based gate that its rule meets: its disagreements with the test warn, or fail."""
    if strict:
        return GateCheck(option, tuple(f"{d} (--fail-on-disagreement)" for d in disagreements))
    return GateCheck(option, (), tuple(disagreements))


def _winner_reasons(report: Report, required: str) -> list[str]:
    winner = report.recommendation.winner
    if winner == required:
        return []
    known = {row.label for row in report.models} | {row.model_name for row in report.models}
    if required not in known:
        return [
            f"{required} is not a model in this report "
            f"(models: {', '.join(row.label for row in report.models) or 'none'})"
        ]
    if winner is None:
        return [f"the report recommends no single model, not {required}: {report.recommendation.summary}"]
    return [f"the recommended model is {winner}, not {required}"]


STEER = "--require-verdict acts on the paired test"


def _confidence_disagreements(report: Report, required: str) -> list[str]:
    check = report.rule_check
    if check is None or check.lead is None or not check.lead.within_noise:
        return []
    return [
        f"--require-confidence {required} is met by the rule's rating ({check.confidence}, the lead's size alone), "
        f"but the paired test finds {check.winner}'s lead over {check.runner_up} within noise ({check.test_words}); "
        f"{STEER}"
    ]


def _winner_disagreements(report: Report, required: str) -> list[str]:
    check = report.rule_check
    if check is None:
        return []
    found = []
    if check.pick_disagrees:
        verb = "switches to" if check.switches else "keeps"
        found.append(
            f"--require-winner {required} is met by the rule (highest pass rate), but the decision against the "
            f"baseline {verb} {check.picked}; {STEER}"
        )
    if check.lead is not None and check.lead.within_noise:
        found.append(
            f"--require-winner {required} is met by the rule (highest pass rate), but the paired test finds its lead "
            f"over {check.runner_up} within noise ({check.test_words}); {STEER}"
        )
    return found


def _verdict_reasons(report: Report, required: str, candidate: str | None) -> list[str]:
    if required not in VERDICT_LEVELS:
        raise ValueError(f"--require-verdict expects better or no-worse (got {required!r})")
    decision = report.decision
    if decision is None:
        return ["there is no baseline to hold a verdict to: name one with --baseline (or promote one for the workload)"]
    wanted = VERDICT_LEVELS[required]
    if candidate is not None:
        found = decision.for_candidate(candidate)
        if found is None:
            names = ", ".join(v.candidate for v in decision.versus) or "none"
            return [f"{candidate} is not a candidate against the baseline {decision.baseline} (candidates: {names})"]
        if str(found.verdict) in wanted:
            return []
        return [
            f"{found.candidate}'s verdict against {decision.baseline} is {_verdict(found)}, "
            f"not {required.replace('-', ' ')}"
        ]
    if any(str(v.verdict) in wanted for v in decision.versus):
        return []
    verdicts = ", ".join(f"{v.candidate} {_verdict(v)}" for v in decision.versus) or "no candidate"
    return [f"no candidate is {required.replace('-', ' ')} against {decision.baseline} ({verdicts})"]


def _verdict(v: Versus) -> str:
    """The verdict the gate holds, and, for a sequential one, where its sequence stands."""
    if v.verdict is None:
        return "none"
    return str(v.verdict) if v.sequential is None else f"{v.verdict} ({v.sequential.words})"


def _pass_rate_reasons(report: Report, threshold: Fraction) -> list[str]:
    rated = [row for row in report.models if row.pass_rate.scored]
    if not rated:
        return ["no model has a pass rate (no scored task), so --fail-under cannot be met"]
    best = max(rated, key=lambda row: Fraction(row.pass_rate.passed, row.pass_rate.scored))
    rate = Fraction(best.pass_rate.passed, best.pass_rate.scored)
    if rate >= threshold:
        return []
    return [
        f"the best pass rate, {best.label}'s {best.pass_rate.passed}/{best.pass_rate.scored} "
        f"({float(rate) * 100:.1f} %), is under the required {float(threshold) * 100:.1f} %"
    ]


def gate_document(gate: GateResult) -> dict[str, object]:
    """The gate as JSON-ready data (`report --format json` adds it as `gate` when a gate is given)."""
    return {
        "passed": gate.passed,
        "checks": [
            {"option": c.option, "passed": not c.reasons, "reasons": list(c.reasons), "warnings": list(c.warnings)}
            for c in gate.checks
        ],
    }

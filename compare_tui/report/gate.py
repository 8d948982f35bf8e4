"""The CI gate: hold a report to a pass rate, a confidence or a winner.

- `--fail-under X`: the best pass rate in the report (the recommended model's; the only
  model's for a single run) must be at least X. X is a share (0–1) or a percentage (1–100,
  with or without `%`): `0.8`, `80` and `80%` mean the same; `1` means 100 %.
- `--require-confidence medium|high`: the rule's confidence must be at least that.
- `--require-winner MODEL`: the rule must recommend MODEL (a tie recommends no one).
- `--require-verdict better|no-worse [--candidate B]`: against the baseline, B's verdict (or,
  without `--candidate`, some candidate's) must be at least that (`better` meets `no-worse`).

Comparisons are exact (fractions), so 8/10 meets `--fail-under 0.8`.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from compare_tui.report.model import Report
from compare_tui.report.rule import CONFIDENCE_ORDER, meets

EXIT_OK = 0
EXIT_GATE_FAILED = 3


@dataclass(frozen=True, slots=True)
class GateResult:
    """Whether the report met every condition given, and why not."""

    passed: bool
    reasons: tuple[str, ...]
    """One line per condition not met (empty when `passed`)."""

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
) -> GateResult:
    """Check every condition given; a condition left as None is not checked."""
    reasons = []
    if fail_under is not None:
        threshold = fail_under if isinstance(fail_under, Fraction) else parse_pass_rate(str(fail_under))
        reasons += _pass_rate_reasons(report, threshold)
    if require_confidence is not None:
        if require_confidence not in CONFIDENCE_ORDER:
            raise ValueError(
                f"--require-confidence expects one of {', '.join(CONFIDENCE_ORDER)} (got {require_confidence!r})"
            )
        confidence = report.recommendation.confidence
        if not meets(confidence, require_confidence):
            reasons.append(
                f"confidence is {confidence or 'none (no recommendation)'}, below the required {require_confidence}"
            )
    if require_winner is not None:
        winner = report.recommendation.winner
        if winner != require_winner:
            known = {row.label for row in report.models} | {row.model_name for row in report.models}
            if require_winner not in known:
                reasons.append(
                    f"{require_winner} is not a model in this report "
                    f"(models: {', '.join(row.label for row in report.models) or 'none'})"
                )
            elif winner is None:
                reasons.append(
                    f"the report recommends no single model, not {require_winner}: {report.recommendation.summary}"
                )
            else:
                reasons.append(f"the recommended model is {winner}, not {require_winner}")
    if require_verdict is not None:
        reasons += _verdict_reasons(report, require_verdict, candidate)
    return GateResult(not reasons, tuple(reasons))


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
            f"{found.candidate}'s verdict against {decision.baseline} is {found.verdict or 'none'}, "
            f"not {required.replace('-', ' ')}"
        ]
    if any(str(v.verdict) in wanted for v in decision.versus):
        return []
    verdicts = ", ".join(f"{v.candidate} {v.verdict or 'none'}" for v in decision.versus) or "no candidate"
    return [f"no candidate is {required.replace('-', ' ')} against {decision.baseline} ({verdicts})"]


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

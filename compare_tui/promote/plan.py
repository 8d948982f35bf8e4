"""Planning a promotion (`plan_promotion`): the decision record to write, or `PromotionRefused`
with why. Pure: the one write (`Store.record_decision`) is the caller's."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from compare_tui.errors import CompareTuiError
from compare_tui.report import ReportInputs, build_report, report_document
from compare_tui.report import formatting as fmt
from compare_tui.report.decision import Verdict
from compare_tui.report.model import Report
from compare_tui.store import DecisionRecord
from compare_tui.store.decisions import DecisionKind
from compare_tui.vocabulary import BaselineSource

ALLOWED = (Verdict.BETTER, Verdict.NO_WORSE)


class PromotionRefused(CompareTuiError):
    """The promotion cannot be planned as asked (the message says why and what would)."""


class VerdictRefused(PromotionRefused):
    """The candidate's verdict does not allow the promotion (`promote` exits 3, as a failed gate)."""


@dataclass(frozen=True, slots=True)
class Promotion:
    """What `promote` will record, and the figures it was decided on."""

    record: DecisionRecord
    report: Report
    verdict: Verdict | None
    """The candidate's verdict against the baseline (None for an initial baseline)."""
    summary: str
    """One sentence: what will happen, with the verdict and its interval."""


def plan_promotion(
    inputs: ReportInputs,
    model: str,
    *,
    current_baseline: str | None,
    force: bool = False,
    reason: str = "",
    initial: bool = False,
    canary_percent: float | None = None,
    decided_by: str = "",
) -> Promotion:
    """The decision to record for making `model` the workload's baseline, or `PromotionRefused`."""
    if force and not reason.strip():
        raise PromotionRefused('--force needs --reason "…": a forced promotion records why')
    if current_baseline is not None and current_baseline == model:
        raise PromotionRefused(f"{model} is already the workload's baseline: there is nothing to promote")
    against, report = _judged(inputs, model, current_baseline)
    row = report.figures_for(model) or next((r for r in report.models if r.model_name == model), None)
    if row is None:
        shown = ", ".join(r.label for r in report.models) or "none"
        raise PromotionRefused(f"{model} is not a shown model of this comparison (its models: {shown})")
    kind, verdict, summary = _verdict_kind(
        report, row.model_name, row.label, model, inputs.baseline, against, current_baseline, force, initial
    )
    pins = _pins(inputs, {row.model_name, *(m for m in (against, current_baseline) if m)})
    if canary_percent is not None:
        summary += _canary_words(canary_percent, current_baseline, pins, report.goldset.workload_id, row.model_name)
    record = DecisionRecord(
        workload_id=report.goldset.workload_id,
        model=row.model_name,
        previous_model=current_baseline,
        comparison_id=report.comparison_id,
        goldset_digest=report.goldset.digest,
        kind=kind,
        reason=reason.strip(),
        decided_by=decided_by,
        canary_percent=canary_percent,
        pins=pins,
        figures=_figures(report, row.label),
    )
    return Promotion(record, report, verdict, summary)


def _judged(inputs: ReportInputs, model: str, current_baseline: str | None) -> tuple[str | None, Report]:
    """The baseline `model` is judged against (None when there is none) and the report built
    against it: the comparison's baseline, unless that is the model promoted; then the
    workload's current baseline."""
    named = inputs.baseline
    against = (
        named
        if named and named != model
        else (current_baseline if current_baseline and current_baseline != model else None)
    )
    source = inputs.baseline_source if against == named else BaselineSource.WORKLOAD
    report = build_report(
        replace(inputs, baseline=against, baseline_source=source) if against else replace(inputs, baseline=None)
    )
    return against, report


def _verdict_kind(
    report: Report,
    name: str,
    label: str,
    model: str,
    named: str | None,
    against: str | None,
    current_baseline: str | None,
    force: bool,
    initial: bool,
) -> tuple[DecisionKind, Verdict | None, str]:
    """The promotion's kind, the verdict it rests on and its sentence, or `PromotionRefused`
    (`VerdictRefused` where the verdict is what refuses):
    initial (no baseline to judge against), forced (no verdict, or one that does not allow it)
    or promoted."""
    workload = report.goldset.workload_id
    if against is None:
        if current_baseline == name:
            raise PromotionRefused(f"{name} is already the baseline of workload {workload}")
        if not initial:
            why = (
                f"{model} is this comparison's own baseline" if named == model else "this comparison names no baseline"
            )
            raise PromotionRefused(
                f"workload {workload} has no baseline yet and {why}, so there is no verdict for {model}: give "
                "--initial to make it the workload's first baseline, or re-frame the comparison with "
                "`report --baseline`"
            )
        return "initial", None, f"{name} becomes workload {workload}'s first baseline (initial; no verdict)."
    if report.decision is None:
        words = (
            f"without a verdict: the workload's baseline {against} is not in this comparison (compare the two "
            f"with `run SET --baseline {against} --model {name}`)"
        )
        if not force:
            raise VerdictRefused(f'refused: {name} is {words}; promote it only with --force --reason "…"')
        return "forced", None, f"{_takes_over(name, current_baseline, workload)} (forced): {name} is {words}."
    decision = report.decision
    versus = decision.for_candidate(label)
    verdict = versus.verdict if versus else None
    words = _verdict_words(versus, decision.margin_pp, against)
    kind: DecisionKind
    if verdict in ALLOWED:
        kind = "promoted"
    elif force:
        kind = "forced"
    else:
        raise VerdictRefused(
            f'refused: {name} is {words}; promote it only with --force --reason "…" (recorded as forced)'
        )
    return kind, verdict, f"{_takes_over(name, current_baseline, workload)} ({kind}): {name} is {words}."


def _canary_words(
    canary_percent: float, current_baseline: str | None, pins: dict[str, Any], workload: str, name: str
) -> str:
    """The summary's canary sentence, or `PromotionRefused` when no canary can split traffic."""
    if not 0 < canary_percent < 100:
        raise PromotionRefused(f"--canary is a share of traffic between 0 and 100 % (got {canary_percent:g})")
    if current_baseline is None:
        raise PromotionRefused(
            f"--canary splits traffic between the workload's current baseline and the new model, but workload "
            f"{workload} has no baseline yet: promote without --canary (--initial for a first baseline)"
        )
    if current_baseline not in pins:
        raise PromotionRefused(
            f"--canary splits traffic with the current baseline {current_baseline}, which is not one of this "
            f"comparison's models: compare the two first (`run SET --baseline {current_baseline} --model "
            f"{name}`)"
        )
    return f" Canary: {canary_percent:g}% of traffic to {name}, {100 - canary_percent:g}% stays on {current_baseline}."


def _takes_over(model: str, current_baseline: str | None, workload: str) -> str:
    """Who the promotion replaces: the workload's current baseline, which may differ from the
    model the verdict was judged against (the comparison's own baseline)."""
    if current_baseline is None:
        return f"{model} becomes workload {workload}'s baseline"
    return f"{model} replaces {current_baseline} as workload {workload}'s baseline"


def _verdict_words(versus: Any, margin_pp: float, baseline: str) -> str:
    if versus is None or versus.verdict is None:
        return f"without a verdict against {baseline} (no task scored by both)"
    return (
        f"{versus.verdict} against {baseline} ({fmt.signed(versus.delta_pp, ' pts')}, {fmt.level(versus.level)} CI "
        f"{fmt.points_interval(versus.interval_pp)}, margin {margin_pp:g})"
    )


def _pins(inputs: ReportInputs, names: set[str]) -> dict[str, Any]:
    """Each named model's pins as its run recorded them (the catalogue may change later)."""
    out: dict[str, Any] = {}
    for run_input in inputs.runs:
        run = run_input.run
        if run.model_name in names and run.model_name not in out:
            entry = dict(run.model_entry)
            entry.pop("key_env", None)
            out[run.model_name] = {"run_id": run.id, **entry}
    return out


def _figures(report: Report, label: str) -> dict[str, Any]:
    """The decision's figures at this moment, in the report's JSON shape."""
    document = report_document(report)
    decision = document.get("decision") or {}
    versus = next((v for v in decision.get("versus", []) if v["candidate"] == label), None)
    row = next((m for m in document["models"] if m["label"] == label), None)
    return {
        "schema_version": document["schema_version"],
        "summary": decision.get("summary"),
        "margin_pp": decision.get("margin_pp"),
        "versus": versus,
        "pass_rate": row["pass_rate"] if row else None,
    }

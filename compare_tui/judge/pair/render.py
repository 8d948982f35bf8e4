"""A pairwise judging's report as plain text and as JSON-ready data (one computation, two forms)."""

from __future__ import annotations

from typing import Any

from compare_tui.judge.pair.figures import RESULT_WORDS, PairConclusion, PairFigures
from compare_tui.judge.pair.report import PairReport, PairRow
from compare_tui.judge.run.usage import JudgeUsage

_MARK = {"candidate": "▲", "baseline": "▼", "tie": "=", "inconsistent": "≠", "failed": "!", "not judged": "·"}


def percent(value: float | None) -> str:
    return "—" if value is None else f"{value * 100:.1f}%"


def usage_text(usage: JudgeUsage, apart: str = "not part of either model's figures") -> str:
    """One paragraph on the judge's own cost and latency, which are `apart` from the judged
    models' (said in the parenthesis)."""
    lat = usage.latency_ms
    latency = "—" if lat.p50 is None or lat.p95 is None else f"p50 {lat.p50 / 1000:.2f} s, p95 {lat.p95 / 1000:.2f} s"
    cost = "not shown" if usage.cost is None else f"{usage.cost:.6f} {usage.currency}"
    missing = f" ({usage.usage_missing} call(s) reported no tokens)" if usage.usage_missing else ""
    return (
        f"Judge cost and latency ({apart}): {usage.calls} calls, {usage.failed} failed; "
        f"tokens {usage.prompt_tokens:,} in / {usage.completion_tokens:,} out{missing}; latency per call {latency}; "
        f"cost {cost} — {usage.cost_note}."
    )


def _verdict(row: PairRow, which: str) -> str:
    judgement = row.ab if which == "ab" else row.ba
    if judgement is None:
        return "—"
    if judgement.failed:
        return f"failed ({judgement.error_class})"
    return f"{judgement.verdict} ({judgement.preferred})"


def _verdict_line(f: PairFigures, ci: str) -> str:
    if f.conclusion == PairConclusion.NO_USABLE_VERDICT:
        return (
            f"No win rate: {f.conclusion}. {f.inconsistent} of {f.judged} pairs were inconsistent (the two "
            f"orderings disagreed; it chose the first-shown answer in {f.first_position_picks} of "
            f"{f.decided_calls} decided calls), so it did not tell the answers apart."
        )
    return (
        f"Candidate win rate {percent(f.win_rate)} (95% CI {ci}, trinomial score interval; a tie counts half) → {f.conclusion}"
        + (": the interval includes 50%" if f.conclusion == PairConclusion.INCONCLUSIVE else "")
    )


def render_pair_text(report: PairReport) -> str:
    j, f = report.judging, report.figures
    lines = [
        f"Pairwise judge {j.judge_model} ({j.provenance or 'provenance unknown'}) · judging {j.id}",
        f"baseline  {report.baseline.model_name} (run {report.baseline.id})",
        f"candidate {report.candidate.model_name} (run {report.candidate.id})",
        f"golden set {report.baseline.goldset_name or report.baseline.goldset_id} {report.baseline.goldset_version}"
        f" · mode {j.mode} · {j.reply_form} replies · rubric {j.rubric_digest[:19]}…",
        "",
        f"{'task':24} {'scorer b/c':13} {'baseline first':22} {'candidate first':22} result",
    ]
    for row in report.rows:
        scorer = f"{row.baseline.outcome if row.baseline else '—'}/{row.candidate.outcome if row.candidate else '—'}"
        label = f"  [person: {row.label.label}]" if row.label and row.label.label != "skip" else ""
        lines.append(
            f"{row.task_id[:24]:24} {scorer:13} {_verdict(row, 'ab')[:22]:22} {_verdict(row, 'ba')[:22]:22} "
            f"{_MARK[row.result]} {RESULT_WORDS[row.result]}{label}" + (f" — {row.reason}" if row.reason else "")
        )
    interval = f.interval
    ci = "—" if interval is None else f"{percent(interval.low)}–{percent(interval.high)}"
    lines += [
        "",
        f"Pairs: {f.judged} judged · candidate wins {f.wins} · baseline wins {f.losses} · ties {f.all_ties} "
        f"(consistent {f.ties}, inconsistent {f.inconsistent}) · judge call failed {f.failed} · not judged {f.not_judged}",
        _verdict_line(f, ci),
    ]
    if report.labelled:
        lines.append(f"Judge agrees with people on {report.agreed} of {report.labelled} labelled pairs.")
    lines += ["", usage_text(report.usage), "", "Caveats:"] + [f"  - {c}" for c in report.caveats]
    return "\n".join(lines) + "\n"


def pair_json(report: PairReport) -> dict[str, Any]:
    j, f, u = report.judging, report.figures, report.usage
    interval = f.interval
    return {
        "schema": "compare-tui/judge-pairs",
        "schema_version": 1,
        "judging": {
            "id": j.id,
            "judge": j.judge_model,
            "provenance": j.provenance,
            "mode": j.mode,
            "reply_form": j.reply_form,
            "rubric_digest": j.rubric_digest,
        },
        "baseline": {"run": report.baseline.id, "model": report.baseline.model_name},
        "candidate": {"run": report.candidate.id, "model": report.candidate.model_name},
        "figures": {
            "judged": f.judged,
            "candidate_wins": f.wins,
            "baseline_wins": f.losses,
            "ties": f.all_ties,
            "consistent_ties": f.ties,
            "inconsistent": f.inconsistent,
            "failed": f.failed,
            "not_judged": f.not_judged,
            "win_rate": f.win_rate,
            "win_rate_ci95": None if interval is None else [interval.low, interval.high],
            "conclusion": f.conclusion,
            "labelled_pairs": report.labelled,
            "agreed_with_people": report.agreed,
        },
        "judge_usage": {
            "calls": u.calls,
            "failed": u.failed,
            "prompt_tokens": u.prompt_tokens,
            "completion_tokens": u.completion_tokens,
            "latency_p50_ms": u.latency_ms.p50,
            "latency_p95_ms": u.latency_ms.p95,
            "cost": u.cost,
            "currency": u.currency,
            "cost_note": u.cost_note,
        },
        "rows": [
            {
                "task": r.task_id,
                "result": r.result,
                "reason": r.reason,
                "scorer": [r.baseline.outcome if r.baseline else None, r.candidate.outcome if r.candidate else None],
                "orderings": {
                    o: None
                    if x is None
                    else {"verdict": x.verdict, "preferred": x.preferred, "rationale": x.rationale, "error": x.error}
                    for o, x in (("ab", r.ab), ("ba", r.ba))
                },
                "label": None if r.label is None else r.label.label,
            }
            for r in report.rows
        ],
        "caveats": list(report.caveats),
    }

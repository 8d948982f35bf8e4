"""The report as Markdown (for a pull request, a wiki, an issue). Formatting only."""

from __future__ import annotations

from compare_tui.report import columns
from compare_tui.report import formatting as fmt
from compare_tui.report.model import Report
from compare_tui.report.serving import SECTION_TITLE


def _cell(text: str) -> str:
    # A pipe inside a table cell would end the cell.
    return text.replace("|", "\\|").replace("\n", " ")


def render_md(report: Report) -> str:
    """The whole report as one Markdown document (ending in a newline)."""
    rec = report.recommendation
    lines = [f"# {report.title}", ""]
    goldset = report.goldset
    lines += [
        f"Golden set `{goldset.workload_id}` {goldset.version} ({goldset.digest or 'no digest'}); "
        f"runs {', '.join(f'`{r}`' for r in report.run_ids) or 'none'}.",
        "",
    ]
    lines += _decision(report)
    lines += ["## Recommendation", ""]
    if report.rating_note:
        lines += [f"> ⚠ {report.rating_note}", ""]
    lines += [f"**{rec.summary}**", "", f"_{rec.label}_", ""]
    lines += [f"- {reason}" for reason in rec.reasons] + [""]
    if report.models:
        lines += _figures(report)
        lines += [f"- {check.line()}" for check in report.server_latency] + ([""] if report.server_latency else [])
        lines += _costs(report)
        lines += _grid(report)
    if report.trajectories:
        lines += _runs(report)
    if report.refused:
        lines += ["## Not shown", ""]
        lines += [f"- **{r.label}** (run `{r.run_id}`): {r.reason}" for r in report.refused] + [""]
    if report.paired:
        heading, label = columns.paired_heading(report)
        lines += [f"## {heading}", "", *([f"_{label}_", ""] if label else [])]
        lines += [
            "| A | B | tasks | both pass | only A | only B | neither | McNemar p |",
            "|---|---|---:|---:|---:|---:|---:|---:|",
        ]
        for p in report.paired:
            p_value = "–" if p.mcnemar_p is None else f"{p.mcnemar_p:.3g}"
            lines.append(
                f"| {_cell(p.model_a)} | {_cell(p.model_b)} | {p.tasks} | {p.both} | {p.only_a} | "
                f"{p.only_b} | {p.neither} | {p_value} |"
            )
        lines.append("")
        lines += [p.sentence for p in report.paired] + [""]
    lines += _serving(report)
    if report.caveats:
        lines += ["## Caveats", ""] + [f"- {c.text}" for c in report.caveats] + [""]
    return "\n".join(lines)


def _decision(report: Report) -> list[str]:
    decision = report.decision
    if decision is None:
        return ["## Decision", "", report.decision_note, ""] if report.decision_note else []
    lines = ["## Decision", "", f"**{decision.summary}**", ""]
    if decision.versus:
        lines += [
            f"| candidate | verdict | Δ pass | {fmt.level(decision.level)} CI | McNemar p | tasks | Δ TTFT p50 | Δ E2E p50 | Δ E2E p95 "
            "| Δ tokens | Δ cost/task |",
            "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for v in decision.versus:
            p_value = "–" if v.paired.mcnemar_p is None else f"{v.paired.mcnemar_p:.3g}"
            lines.append(
                f"| {_cell(v.candidate)} | {columns.verdict_cell(v)} | {fmt.signed(v.delta_pp, ' pts')} | "
                f"{fmt.points_interval(v.interval_pp, marks=(-decision.margin_pp,))} | {p_value} | {v.paired.tasks} | "
                f"{fmt.signed(v.ttft_p50_pct, '%', 0)} | {fmt.signed(v.e2e_p50_pct, '%', 0)} | "
                f"{fmt.signed(v.e2e_p95_pct, '%', 0)} | {fmt.signed(v.tokens_paired_pct, '%', 0)} | "
                f"{fmt.signed(v.cost.change_pct, '%', 0)} |"
            )
        lines.append("")
    lines += [f"- {line}" for line in columns.versus_notes(report)] + [""]
    return lines


def _figures(report: Report) -> list[str]:
    as_text = any(row.text_calls.passed_as_text for row in report.models)  # accept_text_calls in use
    lines = [
        "## Figures",
        "",
        f"| model | provenance | pass rate | 95% CI | ✓ |{' ✓ as text |' if as_text else ''} ✗ | ! | human ✓/✗/? "
        "| TTFT p50/p95/p99 | E2E p50/p95/p99 | n | tokens / completed task (prompt + completion) | GPU peak "
        "| cost / completed task |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|" + ("---:|" if as_text else ""),
    ]
    for row in report.models:
        rate = row.pass_rate
        lines.append(
            f"| {_cell(row.label)} | {_cell(row.provenance)} | {fmt.pass_rate(row.pass_rate)} | "
            f"{fmt.interval(row.pass_rate.interval)} | {rate.passed} | "
            f"{f'{row.text_calls.passed_as_text} | ' if as_text else ''}"
            f"{rate.scored - rate.passed - rate.errored} | {rate.errored} | {columns.human_counts(row.counts)} | "
            f"{fmt.latency(row.latency.ttft_ms)} | {fmt.latency(row.latency.e2e_ms)} | {row.latency.e2e_ms.n} | "
            f"{fmt.tokens(row.tokens)} | "
            f"{_cell(fmt.gpu(row.gpu))} | {fmt.cost_per_task(row.cost)} |"
        )
    return lines + [
        "",
        f"{columns.PASS_RATE_CAPTION}.",
        "",
        "✓ pass · ✗ fail · ? needs a person · ! error (scorer or request failed) · · not done"
        + (" (or not sent: the verdicts it served had settled)" if report.sequential is not None else ""),
        "",
    ]


def _costs(report: Report) -> list[str]:
    lines = ["## Cost", ""]
    for row in report.models:
        cost = row.cost
        total = fmt.money(cost.total, cost.currency)
        lines.append(
            f"- **{row.label}**: {fmt.cost_basis(cost, row.gpu)}; run total {total}, "
            f"per completed task {fmt.cost_per_task(cost)}" + (f" (source: {cost.source})" if cost.source else "") + "."
        )
        if cost.utilisation:
            points = ", ".join(
                f"{p.utilisation * 100:.0f}% → {fmt.money(p.per_task, cost.currency)}" for p in cost.utilisation
            )
            lines.append(f"  - per completed task at utilisation {points}")
    return lines + [""]


def _grid(report: Report) -> list[str]:
    """One row per task, named by its id, with each model's mark: a reader can tell which task
    failed for which model."""
    lines = ["## Tasks", ""]
    lines.append("| task | " + " | ".join(_cell(row.label) for row in report.models) + " |")
    lines.append("|---|" + ":-:|" * len(report.models))
    for n, task_id in enumerate(report.task_ids):
        marks = " | ".join(fmt.MARKS[row.blocks[n].status] for row in report.models)
        lines.append(f"| `{_cell(task_id)}` | {marks} |")
    return lines + [""]


def _runs(report: Report) -> list[str]:
    lines = [
        "## Agent runs (whole-run replay)",
        "",
        "A run is driven when no step is lost; a step not measured counts neither way.",
        "",
    ]
    for fig in report.trajectories:
        lines += [
            f"**{_cell(fig.label)}**: runs driven without losing a step {fmt.runs_driven(fig)}; "
            f"step pass rate {fmt.step_rate(fig)}"
            + (f"; {fmt.steps_by_grade(report.step_grading, fig)}" if report.step_grading else "")
            + ".",
            "",
        ]
        lines += ["| run | steps | result |", "|---|---|---|"]
        lines += [f"| `{_cell(s.run)}` | `{fmt.strip_marks(s)}` | {fmt.run_verdict(s)} |" for s in fig.runs]
        lines.append("")
    return lines


def _serving(report: Report) -> list[str]:
    """The serving block: one row per fact, one column per model, so differences line up."""
    blocks = [s.block for s in report.serving if s.block is not None]
    if not blocks:
        return []
    lines = [f"## {SECTION_TITLE.split(' (')[0]}", "", f"_{SECTION_TITLE.split(' (', 1)[1].rstrip(')')}._", ""]
    lines += ["| | " + " | ".join(_cell(b.label) for b in blocks) + " |", "|---" * (len(blocks) + 1) + "|"]
    for n, (label, _) in enumerate(blocks[0].rows()):
        lines.append(f"| {label} | " + " | ".join(_cell(b.rows()[n][1]) for b in blocks) + " |")
    return lines + [""]

"""The page of an experiment: per-arm pass rates with their two intervals, each named by the
rate it covers (this set's rate under re-running: from three runs, else the runs' range,
labelled so; the rate on tasks like these: from five tasks scored, else the CLI's sentence
saying there is none), confound banners, flaky tasks, spreads across runs, and
each task's consistency per arm. Drawn from `experiment_document(figures)` (the bundle's
report.json, the same payload as `experiment show --json`) and the text renderer's spellings."""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from typing import Any

from compare_tui.experiment.figures import (
    CONSISTENT_FAIL,
    CONSISTENT_PASS,
    FLAKY,
    RERUN_ESTIMAND,
    TASKS_ESTIMAND,
    ExperimentFigures,
)
from compare_tui.experiment.render import (
    controls_text,
    interval_text,
    ms,
    percent,
    sequence_lines,
    spread_text,
    tasks_interval_figure,
)
from compare_tui.publish import svg
from compare_tui.publish.html import (
    bullets,
    document,
    esc,
    key_values,
    section,
    task_filter,
    task_table,
    toc,
)
from compare_tui.report.formatting import DASH
from compare_tui.vocabulary import money

STATE_CLASS = {CONSISTENT_PASS: "p", CONSISTENT_FAIL: "f", FLAKY: "r"}
FILTERS = {"flaky": "flaky in some arm", "fails": "fails in some arm", "differs": "differs between arms"}


def _arms_table(figures: ExperimentFigures) -> str:
    head = (
        "arm",
        "model",
        "runs (have/want)",
        "pass rate (mean)",
        "95% interval or range: this set under re-running",
        "95% interval: tasks like these",
        "latency p50 across runs",
        "cost per task across runs",
        "flaky tasks",
        "human tasks",
    )
    rows = []
    for arm in figures.arms:
        cells = (
            f"{arm.observed}/{arm.desired}",
            percent(arm.pass_rate),
            interval_text(arm),
            tasks_interval_figure(arm),
            spread_text(arm.latency_p50_ms, ms),
            spread_text(arm.cost_per_task, partial(money, currency=arm.currency)),
            str(len(arm.flaky)),
            str(arm.human_tasks),
        )
        rows.append(
            f'<tr><th scope="row">{esc(arm.label)}</th><td>{esc(arm.model_name)}</td>'
            + "".join(f'<td class="n">{esc(c)}</td>' for c in cells)
            + "</tr>"
        )
    return (
        '<div class="scroll"><table id="arms-table"><thead><tr>'
        + "".join(f'<th scope="col">{esc(h)}</th>' for h in head)
        + "</tr></thead><tbody>"
        + "".join(rows)
        + "</tbody></table></div>"
    )


def _runs(figures: ExperimentFigures) -> str:
    parts = []
    for arm in figures.arms:
        items = [
            (
                f"run {r.run_id}",
                f"pass rate {percent(r.rate)} ({r.passed}/{r.conclusive}); "
                f"p50 {ms(r.latency_p50_ms)}; cost/task {money(r.cost_per_task, r.currency)}"
                + (f"; not counted: {r.refused}" if r.refused else ""),
            )
            for r in arm.runs
        ]
        if arm.in_flight:
            items.append(("in flight", ", ".join(arm.in_flight)))
        items += [(f"not recorded: {variable}", ", ".join(runs)) for variable, runs in arm.unrecorded]
        parts.append(f"<h3>{esc(arm.label)}</h3>{key_values(items) or '<p>No completed run yet.</p>'}")
    return section("runs", "Runs per arm", *parts)


def _tasks(figures: ExperimentFigures) -> str:
    task_ids = list(dict.fromkeys(t.task_id for arm in figures.arms for t in arm.tasks))
    per_arm = [{t.task_id: t for t in arm.tasks} for arm in figures.arms]
    body = []
    for task_id in task_ids:
        states = [arms.get(task_id) for arms in per_arm]
        flags = []
        if any(s is not None and s.state == FLAKY for s in states):
            flags.append("flaky")
        if any(s is not None and s.passed < s.conclusive for s in states):
            flags.append("fails")
        if len({s.state for s in states if s is not None}) > 1:
            flags.append("differs")
        cells = "".join(
            f"<td class={STATE_CLASS.get(s.state, 'm')}>{s.passed}/{s.conclusive}" if s is not None else "<td class=m>·"
            for s in states
        )
        body.append(f'<tbody class="{" ".join(flags)}"><tr><th scope=row>{esc(task_id)}{cells}</tbody>')
    legend = (
        '<p class="legend"><span>✓ consistent pass</span><span>✗ consistent fail</span>'
        "<span>? flaky (passed in some runs only)</span><span>· inconclusive or not run</span> "
        "Each cell: runs passed / runs automatically scored.</p>"
    )
    return section(
        "tasks",
        "Tasks across runs",
        legend,
        task_filter(FILTERS, len(task_ids)),
        task_table(["task", *(arm.label for arm in figures.arms)], body),
    )


def experiment_page(figures: ExperimentFigures, document_: Mapping[str, Any]) -> str:
    """The whole page of an experiment. `document_` is `experiment_document(figures)`."""
    g = figures.goldset
    header = [
        f"<header><h1>Experiment {esc(figures.name)}</h1>",
        (
            f'<p id="goldset">Golden set <strong>{esc(g.get("name") or g.get("workload_id"))}</strong> '
            f"(<code>{esc(g.get('workload_id'))}</code>) version {esc(g.get('version') or DASH)}, digest "
            f"<code>{esc(g.get('digest') or 'not recorded')}</code>. Created {esc(figures.created_at)}; "
            f"controls: {esc(controls_text(figures))}.</p>"
        ),
        '<p class="note">A read-only bundle written by <code>compare-tui publish --experiment</code>.</p></header>',
    ]
    banners = [f'<p class="banner" role="alert">⚠ {esc(c.sentence())}</p>' for c in figures.confounds]
    status = (
        "Every arm holds its runs."
        if figures.complete
        else f"{figures.to_launch} runs still to launch: `compare-tui experiment run {figures.name}`."
    )
    rows = [
        (
            arm.label,
            arm.pass_rate,
            arm.interval.low if arm.interval else arm.rate_range.low,
            arm.interval.high if arm.interval else arm.rate_range.high,
        )
        for arm in figures.arms
    ]
    flaky = [f"{arm.label}: {', '.join(arm.flaky)}" for arm in figures.arms if arm.flaky]
    sections = [
        section("confounds", "Confounds", *banners) if banners else "",
        section(
            "arms",
            "Arms",
            f"<p>{esc(status)}</p>",
            *(f'<p class="note" id="arms-sequential">{esc(line.strip())}</p>' for line in sequence_lines(figures)),
            _arms_table(figures),
            (
                '<div class="plots">'
                + svg.interval_plot(
                    rows,
                    "plot-arms",
                    f"Mean pass rate per arm with the 95% interval of {RERUN_ESTIMAND} "
                    "(or the runs' range below three runs)",
                )
                + "</div>"
            )
            if rows
            else "",
            f'<p class="note" id="arms-intervals">Two intervals, two rates. The first covers {esc(RERUN_ESTIMAND)}: '
            "from three runs it pools every task of every run (exact) and joins the Student-t interval over "
            "runs; with fewer runs it is the runs' range, and says so. It narrows as runs are added, and says "
            f"nothing of other tasks. The second covers {esc(TASKS_ESTIMAND)}: a bounded-mean interval on "
            "[0, 1], from five tasks scored; with fewer, the table says there is none.</p>",
        ),
        section("flaky", "Flaky tasks", bullets(flaky, "flaky-list") or "<p>No task passed in some runs only.</p>"),
        _runs(figures),
        section("notes", "Notes", bullets(figures.notes)) if figures.notes else "",
        _tasks(figures),
    ]
    entries = [
        (i, t)
        for i, t in (
            ("confounds", "Confounds"),
            ("arms", "Arms"),
            ("flaky", "Flaky tasks"),
            ("runs", "Runs"),
            ("notes", "Notes"),
            ("tasks", "Tasks"),
        )
        if any(s.startswith(f'<section id="{i}"') for s in sections)
    ]
    return document(f"Experiment {figures.name}", [*header, toc(entries), *(s for s in sections if s)])

"""The page of a comparison (or a single run): every figure of the `Report` (spelled by
`report.columns`/`report.formatting`, the same strings the terminal shows), inline SVG plots of
the report's own distributions, provenance and serving notes, whole-run replay strips, stored
rubric grades (spelled by `judge.grade.render`, as `report` prints them), caveats, and the
per-task matrix with answers. Pure: a function of the report, the run records, the grades and
the task details."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from typing import Any

from compare_tui.endpoint.account import StoredIdentity
from compare_tui.insights import Insights
from compare_tui.judge import GRADE_HEADERS, GradeReport, calibration_notes, grade_intro, grade_rows, usage_line
from compare_tui.publish import svg
from compare_tui.publish.details import Masker, TaskDetail
from compare_tui.publish.html import (
    bullets,
    column_table,
    document,
    esc,
    json_data,
    key_values,
    section,
    task_filter,
    task_table,
    toc,
)
from compare_tui.publish.insights_section import insights_section
from compare_tui.report import columns
from compare_tui.report import formatting as fmt
from compare_tui.report.decision import DecisionAction
from compare_tui.report.fit import Column
from compare_tui.report.model import Report
from compare_tui.report.serving import SECTION_TITLE
from compare_tui.store.records import RunRecord
from compare_tui.vocabulary import Outcome

STATUS_CLASS = {"pass": "p", "fail": "f", "review": "r", "error": "e", "missing": "m"}
FILTERS = {"c": "changed between models", "f": "failed or errored", "r": "needs review"}
_ENVIRONMENT_KEYS = ("os", "machine", "cpu_model", "cpu_count", "python", "compare_tui_version")


def _header(report: Report) -> list[str]:
    g = report.goldset
    subject = (
        f"comparison {report.comparison_id}"
        if report.comparison_id
        else f"run {report.run_ids[0]}"
        if report.run_ids
        else "no runs"
    )
    return [
        f"<header><h1>{esc(report.title)}</h1>",
        f'<p id="goldset">Golden set <strong>{esc(g.name or g.workload_id)}</strong> '
        f"(<code>{esc(g.workload_id)}</code>) version {esc(g.version or fmt.DASH)}, digest "
        f"<code>{esc(g.digest or 'not recorded')}</code>. {esc(subject)}; runs "
        + ", ".join(f"<code>{esc(r)}</code>" for r in report.run_ids)
        + ".</p>",
        (
            '<p class="note">A read-only bundle written by <code>compare-tui publish</code>: a measurement on this '
            "team's tasks, not a general ranking, and not a decision.</p></header>"
        ),
    ]


def _decision(report: Report) -> str:
    decision = report.decision
    if decision is None:
        return section("decision", "Decision", f"<p>{esc(report.decision_note)}</p>") if report.decision_note else ""
    keep = " keep" if decision.action is DecisionAction.KEEP else ""
    return section(
        "decision",
        "Decision against the baseline",
        f'<p class="lead{keep}" id="decision-summary">{esc(decision.summary)}</p>',
        column_table(columns.versus_columns(report), "versus-table", columns.TITLES["versus"]),
        bullets(columns.versus_notes(report), "versus-notes"),
    )


def _recommendation(report: Report) -> str:
    rec = report.recommendation
    refused = bullets(f"{r.label} (run {r.run_id}) is not shown: {r.reason}" for r in report.refused)
    return section(
        "recommendation",
        "Recommendation and confidence",
        (f'<p class="banner" id="rating-note">{esc(report.rating_note)}</p>' if report.rating_note else ""),
        f'<p class="lead" id="recommendation-summary">{esc(rec.summary)}</p>',
        f'<p>Confidence: <strong id="confidence">{esc(rec.confidence or "none")}</strong>. '
        f'<span class="note">{esc(rec.label)}</span></p>',
        bullets(rec.reasons, "confidence-reasons"),
        f'<div class="banner">{refused}</div>' if refused else "",
    )


def _pass_rates(report: Report) -> str:
    rows = [
        (
            r.label,
            r.pass_rate.rate,
            r.pass_rate.interval.low if r.pass_rate.interval else None,
            r.pass_rate.interval.high if r.pass_rate.interval else None,
        )
        for r in report.models
    ]
    return section(
        "pass-rates",
        "Pass rates",
        column_table(columns.pass_rate_columns(report), "pass-table", columns.TITLES["pass"]),
        (
            f'<div class="plots">{svg.interval_plot(rows, "plot-pass-rate", "Pass rate with its exact (Clopper–Pearson) 95% interval")}'
            "</div>"
        )
        if rows
        else "",
    )


def _latency(report: Report, document_: Mapping[str, Any]) -> str:
    distributions = document_.get("latency_distributions", ())
    plots = [svg.ecdf_plot(d, f"plot-{d['metric']}-ecdf") for d in distributions]
    plots += [svg.histogram_plot(d, f"plot-{d['metric']}-histogram") for d in distributions]
    return section(
        "latency",
        "Latency and tokens",
        column_table(columns.latency_columns(report), "latency-table", columns.TITLES["latency"]),
        f'<p class="note">{esc(columns.LATENCY_CAPTION)}</p>',
        f'<div class="plots">{"".join(plots)}</div>' if plots else "",
        bullets(f"{r.label}: {r.tokens.note}" for r in report.models if r.tokens.note),
    )


def _cost(report: Report) -> str:
    util = columns.utilisation_columns(report)
    rows = [
        (r.label, [(p.utilisation, p.per_task) for p in r.cost.utilisation])
        for r in report.models
        if r.cost.utilisation
    ]
    currency = next((r.cost.currency for r in report.models if r.cost.utilisation), "USD")
    return section(
        "cost",
        "Provenance, GPU memory and cost",
        column_table(columns.cost_columns(report), "cost-table", columns.TITLES["cost"]),
        bullets(f"{r.label}: {r.cost.note}" for r in report.models if r.cost.note),
        column_table(util, "utilisation-table", columns.TITLES["utilisation"])
        if util
        else '<p class="note">No model here is on a hardware cost basis.</p>',
        f'<div class="plots">{svg.utilisation_plot(rows, currency, "plot-utilisation")}</div>' if rows else "",
    )


def _paired(report: Report) -> str:
    if not report.paired:
        return ""
    return section(
        "paired",
        columns.paired_heading(report)[0],
        column_table(columns.paired_columns(report), "paired-table", columns.paired_title(report)),
        bullets(p.sentence for p in report.paired),
    )


def _replay(report: Report, mask: Masker) -> str:
    """Whole-run replay: per model, runs driven without losing a step and the step pass rate,
    then one strip per recorded run (a mark per step, its status in words on hover and for
    screen readers) and its verdict."""
    if not report.trajectories:
        return ""
    parts = [
        '<p class="note">A run is driven when no step is lost; a step not measured counts neither way. '
        "Marks: " + " · ".join(f"{esc(fmt.MARKS[s])} {esc(fmt.MARK_WORDS[s])}" for s in STATUS_CLASS) + ".</p>"
    ]
    for number, fig in enumerate(report.trajectories, 1):
        graded = f"; {fmt.steps_by_grade(report.step_grading, fig)}" if report.step_grading else ""
        parts.append(
            f"<h3>{esc(fig.label)}</h3><p>Runs driven without losing a step {esc(fmt.runs_driven(fig))}; "
            f"step pass rate {esc(fmt.step_rate(fig))}{esc(graded)}.</p>"
        )
        rows = []
        for strip in fig.runs:
            marks = "".join(
                f'<span class="{STATUS_CLASS[status]}" title="step {i} ({esc(mask(task))}): {esc(fmt.MARK_WORDS[status])}">'
                f"{esc(fmt.MARKS[status])}</span>"
                for i, (task, status) in enumerate(zip(strip.task_ids, strip.statuses, strict=True), 1)
            )
            spoken = ", ".join(f"step {i} {fmt.MARK_WORDS[s]}" for i, s in enumerate(strip.statuses, 1))
            rows.append(
                f'<tr><th scope="row"><code>{esc(mask(strip.run))}</code></th>'
                f'<td class="strip" aria-label="{esc(spoken)}">{marks}</td><td>{esc(fmt.run_verdict(strip))}</td></tr>'
            )
        parts.append(
            f'<div class="scroll"><table id="replay-{number}"><thead><tr><th scope="col">run</th>'
            f'<th scope="col">steps</th><th scope="col">result</th></tr></thead><tbody>{"".join(rows)}'
            "</tbody></table></div>"
        )
    return section("replay", "Agent runs (whole-run replay)", *parts)


def _grades(grades: Sequence[GradeReport], mask: Masker) -> str:
    """The stored rubric grades of the shown runs, one table per judge and rubric (read from
    the store: publishing asks no judge); their texts masked as every text from the store is."""
    parts = []
    for number, grade in enumerate(grades, 1):
        rows = grade_rows(grade)
        cols = [
            Column(header, tuple(mask(row[i]) for row in rows), "text" if i in (0, 4, 10, 11, 12) else "number")
            for i, header in enumerate(GRADE_HEADERS)
        ]
        parts += [
            f"<h3>Rubric grades by {esc(mask(grade.judge))}</h3>",
            f"<p>{esc(mask(grade_intro(grade)))}</p>",
            column_table(cols, f"grades-{number}"),
            bullets(mask(line) for line in calibration_notes(grade)),
            f'<p class="note">{esc(mask(usage_line(grade.usage)))}</p>',
            bullets(mask(caveat) for caveat in grade.caveats),
        ]
    return section("grades", "Rubric grades", *parts) if parts else ""


def _runs(report: Report, runs: Mapping[str, RunRecord], mask: Masker) -> str:
    parts = []
    for row in report.models:
        run = runs.get(row.run_id)
        if run is None:
            continue
        entry = run.model_entry or {}
        env = run.environment or {}
        server = StoredIdentity.of(env).recorded
        items: list[tuple[str, object]] = [
            ("run", run.id),
            ("status", row.run_status),
            ("provenance", row.provenance),
            ("model id", entry.get("model")),
            ("kind", entry.get("kind")),
            ("revision", entry.get("revision")),
            ("weights digest", entry.get("weights_digest")),
            ("started", run.started_at),
            ("finished", run.finished_at),
            ("settings", readable(run.settings) if run.settings else None),
            ("GPU memory", fmt.gpu_line(row.gpu)),
            ("GPU notes", "; ".join(row.gpu.notes)),
        ]
        items += [(f"serving: {k}", mask(readable(v))) for k, v in sorted((entry.get("serving") or {}).items())]
        summary = next((s for s in report.serving if s.run_id == row.run_id), None)
        if summary is not None:
            items += [(f"serving fingerprint: {label}", mask(value)) for label, value in summary.rows]
        items += [(f"host: {k.replace('_', ' ')}", env.get(k)) for k in _ENVIRONMENT_KEYS]
        if server:
            items += [(f"server: {k}", mask(readable(v, k))) for k, v in sorted(server.items())]
        parts.append(f"<h3>{esc(row.label)}</h3>{key_values(items)}")
    # Last on the page and collapsed: a reviewer reads the decision, the figures and the tasks
    # first; this is where they check what ran, and how.
    return section(
        "runs",
        "Runs, provenance, environment and serving notes",
        '<p class="note">Serving notes are what the catalogue states (or what the server said '
        "of itself); they are not verified.</p>",
        f"<details><summary>Show each run's provenance, settings and environment</summary>{''.join(parts)}</details>",
    )


def readable(value: object, key: str = "") -> str:
    """A stored value as a person reads it: "not reported" for none, numbers without float
    noise, tables as `key = value` lists, and a chat template as its sha256 (it is long)."""
    if value is None or value == "":
        return "not reported"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        # Six significant digits, in plain decimals for the small amounts a cost estimate has.
        return f"{value:.10f}".rstrip("0").rstrip(".") if 0 < abs(value) < 0.001 else f"{value:.6g}"
    if isinstance(value, str) and key == "chat_template" and len(value) > 80:
        digest = hashlib.sha256(value.encode()).hexdigest()
        return f"sha256:{digest[:16]}… ({len(value):,} characters)"
    if isinstance(value, Mapping):
        if not value:
            return "none"
        return "; ".join(f"{k} = {readable(v, str(k))}" for k, v in sorted(value.items(), key=lambda kv: str(kv[0])))
    if isinstance(value, list | tuple):
        return ", ".join(readable(v) for v in value) or "none"
    return str(value)


def _serving(report: Report, mask: Masker) -> str:
    """The serving block (`report.serving`): one row per fact, one column per model, so a
    difference of stack, quantisation or template lines up."""
    blocks = [s.block for s in report.serving if s.block is not None]
    if not blocks:
        return ""
    facts = [label for label, _ in blocks[0].rows()]
    cols = [Column("", tuple(facts), "label")] + [
        Column(b.label, tuple(mask(value) for _, value in b.rows()), "text") for b in blocks
    ]
    title, _, note = SECTION_TITLE.partition(" (")
    return section(
        "serving", title, f'<p class="note">{esc(note.rstrip(")"))}.</p>', column_table(cols, "serving-table")
    )


def _caveats(report: Report) -> str:
    return section(
        "caveats",
        "Caveats (what this report could not establish)",
        bullets((c.text for c in report.caveats), "caveat-list") or "<p>None.</p>",
    )


def _flags(statuses: Sequence[str]) -> str:
    flags = []
    if len(set(statuses)) > 1:
        flags.append("c")
    if any(s in (Outcome.FAIL, Outcome.ERROR) for s in statuses):
        flags.append("f")
    if Outcome.REVIEW in statuses:
        flags.append("r")
    return " ".join(flags)


def _details_data(report: Report, details: Sequence[TaskDetail]) -> dict[str, Any]:
    """Per-task inputs, expected outcomes, answers and reviews for the page's script (rendered
    when a task is opened: 10,000 tasks' answers as markup would make the page slow to load).
    Compact arrays, in `report.task_ids` order; every string is already masked."""
    by_id = {d.task_id: d for d in details}
    tasks = []
    for task_id in report.task_ids:
        d = by_id.get(task_id)
        if d is None:
            tasks.append(["", "", "", [[] for _ in report.models], [0 for _ in report.models]])
            continue
        attempts = [
            [
                [
                    a.attempt,
                    a.outcome,
                    a.answer,
                    a.detail,
                    a.error,
                    None if a.ttft_ms is None else round(a.ttft_ms),
                    None if a.e2e_ms is None else round(a.e2e_ms),
                ]
                for a in d.attempts.get(row.run_id, ())
            ]
            for row in report.models
        ]
        reviews = [
            [r.verdict, r.note, r.reviewer, r.at] if (r := d.reviews.get(row.run_id)) else 0 for row in report.models
        ]
        tasks.append([d.input, d.expected, d.scorer, attempts, reviews])
    marks = {status: [fmt.MARKS[status], fmt.MARK_WORDS[status]] for status in STATUS_CLASS}
    return {"models": [row.label for row in report.models], "marks": marks, "tasks": tasks}


def _tasks(report: Report, details: Sequence[TaskDetail] | None) -> str:
    if not report.models:
        return ""
    opener = " tabindex=0" if details is not None else ""
    rows = []
    # A row's flags and cells depend only on its statuses, and few combinations occur: each is
    # spelled once (10,000 tasks otherwise spell the same few strings 10,000 times).
    spelled: dict[tuple[str, ...], tuple[str, str]] = {}
    for index, task_id in enumerate(report.task_ids):
        statuses = tuple(r.blocks[index].status for r in report.models)
        if (parts := spelled.get(statuses)) is None:
            cells = "".join(f"<td class={STATUS_CLASS.get(s, 'm')}>{esc(fmt.MARKS.get(s, '·'))}" for s in statuses)
            parts = spelled[statuses] = (f'<tbody class="{_flags(statuses)}"><tr><th scope=row{opener}>', cells)
        rows.append(f"{parts[0]}{esc(task_id)}{parts[1]}</tbody>")
    legend = (
        '<p class="legend">'
        + "".join(f"<span>{esc(fmt.MARKS[s])} {esc(fmt.MARK_WORDS[s])}</span>" for s in STATUS_CLASS)
        + "</p>"
    )
    if details is None:
        note = '<p class="note">Published with --no-answers: inputs, expected outcomes and answers are left out.</p>'
    else:
        note = (
            '<p class="note">Select a task id (click, or Enter) to show its input, expected outcome, every '
            "attempt's answer and scorer detail, and a person's review; “open all shown” before printing.</p>"
        )
    return section(
        "tasks",
        "Tasks",
        legend,
        note,
        task_filter(FILTERS, len(report.task_ids), opener=details is not None),
        task_table(["task", *(r.label for r in report.models)], rows),
        json_data("task-details", _details_data(report, details)) if details is not None else "",
    )


def comparison_page(
    report: Report,
    report_document: Mapping[str, Any],
    runs: Sequence[RunRecord],
    details: Sequence[TaskDetail] | None,
    mask: Masker,
    grades: Sequence[GradeReport] = (),
    insights: Insights | None = None,
) -> str:
    """The whole page. `report_document` is `report_document(report)` (the report.json payload),
    whose distributions the plots draw; `details` is None for `--no-answers`; `grades` are the
    stored rubric grades of these runs (`judge.load_report_grades`); `insights` are the failures
    by cause (`compare-tui insights`), a section after the tasks."""
    by_run = {run.id: run for run in runs}
    sections = [
        _decision(report),
        _recommendation(report),
        _pass_rates(report),
        _latency(report, report_document),
        _cost(report),
        _paired(report),
        _replay(report, mask),
        _grades(grades, mask),
        _tasks(report, details),
        insights_section(insights, mask),
        _serving(report, mask),
        _caveats(report),
        _runs(report, by_run, mask),
    ]
    entries = [
        (i, t)
        for i, t in (
            ("decision", "Decision"),
            ("recommendation", "Recommendation"),
            ("pass-rates", "Pass rates"),
            ("latency", "Latency"),
            ("cost", "Cost"),
            ("paired", "Noise"),
            ("replay", "Agent runs"),
            ("grades", "Grades"),
            ("tasks", "Tasks"),
            ("insights", "Insights"),
            ("serving", "Serving"),
            ("caveats", "Caveats"),
            ("runs", "Runs"),
        )
        if any(s.startswith(f'<section id="{i}"') for s in sections)
    ]
    return document(report.title, [*_header(report), toc(entries), *(s for s in sections if s)])

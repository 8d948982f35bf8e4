"""One report assembly: what one view of a comparison or run shows, read with the store open once.

`assemble_report` loads the report's inputs, applies a command's choices (`--steps-by-grade`,
`--baseline`, `--margin`), builds the report, and reads the stored grades (and, when asked, the
insights): `report`, the end of `run`, the TUI's report screen and `publish` each call it once
per view. `report_rows` is the cheaper path for a view that shows the grid or one line of it
(a run's pass rate on Home, the review queue): the same rows, without the decision, the paired
statistics or the caveats. `report_json_document` is the one JSON document (`report --format
json` and a bundle's report.json): the report's, with the stored grades when some are.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from compare_tui.insights import Insights, build_insights, insight_inputs_for, insights_document
from compare_tui.judge.evaluator.load import DEFAULT_PASS_AT
from compare_tui.judge.grade.render import grade_summary_json
from compare_tui.judge.grade.report import GradeReport, load_report_grades
from compare_tui.judge.grade.steps import load_step_grading, parse_step_grading
from compare_tui.report import (
    GateResult,
    GoldsetRead,
    Report,
    ReportInputs,
    ReportRows,
    build_report,
    build_rows,
    gate_document,
    load_report_inputs,
    report_document,
)
from compare_tui.store import Store
from compare_tui.vocabulary import BaselineSource


@dataclass(frozen=True, slots=True)
class ReportChoices:
    """What a command chose for its view, over what the store recorded (all optional)."""

    baseline: str | None = None
    """`report --baseline`: another baseline than the recorded one (labelled as chosen after the data)."""
    margin_pp: float | None = None
    """`report --margin`, in points."""
    steps_by_grade: str | None = None
    """`report --steps-by-grade JUDGE[:RUBRIC]`: stored grades decide whole-run steps."""
    pass_at: int | None = None
    """`report --pass-at`: the grade that keeps a step (None: the default)."""


@dataclass(frozen=True, slots=True)
class AssembledReport:
    """One view's report: its inputs, the report, the stored grades and (when asked) insights."""

    inputs: ReportInputs
    """As loaded, with the view's choices applied."""
    report: Report
    grades: tuple[GradeReport, ...]
    """The stored gradings of the report's runs (empty when none, or when not asked for)."""
    insights: Insights | None = None
    """The insights of the report's runs against its baseline (None when not asked for)."""
    goldsets: Mapping[str, GoldsetRead] = field(default_factory=dict)
    """The golden sets the loader read (recorded path → set, or the error that kept it unread)."""

    def document(self, gate: GateResult | None = None, shown: Callable[[Any], Any] | None = None) -> dict[str, Any]:
        """`report_json_document` of this view (its insights included when it has them)."""
        return report_json_document(self.report, self.grades, gate, self.insights, shown)


def assemble_report(
    store: Store,
    ref: str,
    choices: ReportChoices | None = None,
    *,
    grades: bool = True,
    insights: bool = False,
) -> AssembledReport:
    """The report named by `ref` (a comparison or run id, a unique prefix, or `latest`), read
    from `store` in this one call. Raises `ReportNotFoundError`, `StoreError`,
    `StepGradingError`, `RubricError` (a step grading that cannot be read) or `BaselineError`
    (a `--baseline` that names no model of the report)."""
    choices = choices or ReportChoices()
    goldsets: dict[str, GoldsetRead] = {}
    inputs = load_report_inputs(store, ref, goldsets=goldsets)
    if choices.steps_by_grade is not None:
        judge, rubric = parse_step_grading(choices.steps_by_grade)
        pass_at = DEFAULT_PASS_AT if choices.pass_at is None else choices.pass_at
        grading = load_step_grading(store, [r.run for r in inputs.runs], judge, rubric, pass_at)
        inputs = replace(inputs, step_grading=grading)
    if choices.baseline is not None and choices.baseline != inputs.baseline:
        # Another baseline than the one recorded before the data: labelled as chosen after it.
        inputs = replace(inputs, baseline=choices.baseline, baseline_source=BaselineSource.AFTER_DATA)
    if choices.margin_pp is not None:
        inputs = replace(inputs, margin_pp=choices.margin_pp)
    report = build_report(inputs)
    found = build_insights(insight_inputs_for(store, inputs, goldsets)) if insights else None
    graded = tuple(load_report_grades(store, inputs)) if grades else ()  # stored: no judge is asked
    return AssembledReport(inputs, report, graded, found, goldsets)


def view_insights(store: Store, view: AssembledReport) -> Insights:
    """The insights of a view assembled without them (the TUI shows the report first, then
    reads these), from the same inputs and golden sets."""
    return build_insights(insight_inputs_for(store, view.inputs, view.goldsets))


def report_rows(store: Store, ref: str) -> ReportRows:
    """The grid of the report named by `ref` (`build_rows`): the same rows `assemble_report`
    shows, for a view of one line or of the tasks. Raises `ReportNotFoundError` or `StoreError`."""
    return build_rows(load_report_inputs(store, ref))


def report_json_document(
    report: Report,
    grades: Sequence[GradeReport] = (),
    gate: GateResult | None = None,
    insights: Insights | None = None,
    shown: Callable[[Any], Any] | None = None,
) -> dict[str, Any]:
    """The report's JSON document (`report_document`), with `grades` only when some are stored,
    `insights` when given (passed through `shown` first: a bundle masks secrets in them) and
    `gate` only when one was checked: what `report --format json` writes and what a published
    bundle carries as report.json (which has no gate)."""
    document = report_document(report)
    document |= {"grades": [grade_summary_json(g) for g in grades]} if grades else {}
    if insights is not None:
        found = insights_document(insights)
        document["insights"] = found if shown is None else shown(found)
    document |= {"gate": gate_document(gate)} if gate is not None else {}
    return document

"""The opt-in LLM judge: pairwise verdicts with position-bias control, single-answer grades,
evaluator comparison against people's labels, and the triage queue of disagreements.

The six executable scorers stay the default; a judge only ever adds evidence beside them.
Rubric grading in isolation (`scale`): `load_scale_rubric` → `prepare_scale_grading` →
`execute_judging` → `load_run_grades` → `build_grade_report` → `render_grade_text` / `grade_json`.
Flow: `load_rubric` → `prepare_pair_judging` / `prepare_grade_judging` (checks the judge like
any candidate and lists the calls) → `execute_judging` (resumable) → `load_pair_report` /
`load_comparison` (figures from stored rows) → `render_*` / `*_json`; `judge.evaluator.triage`
backs the triage screen.

This module exports what the other packages call, and only that; the parts (parsers, figures,
the triage queue) are imported from their own modules.
"""

from compare_tui.judge.evaluator.compare import DEFAULT_MIN_LABELLED, LOOKS_SAFE
from compare_tui.judge.evaluator.load import (
    DEFAULT_PASS_AT,
    SCORER,
    EvaluatorNotFound,
    load_comparison,
    resolve_current,
)
from compare_tui.judge.evaluator.render import evaluator_json, render_evaluator_text
from compare_tui.judge.grade.figures import GradeFigures
from compare_tui.judge.grade.render import (
    GRADE_HEADERS,
    calibration_notes,
    delta_text,
    grade_intro,
    grade_json,
    grade_rows,
    grade_summary_json,
    render_grade_md,
    render_grade_summary,
    render_grade_text,
    usage_line,
)
from compare_tui.judge.grade.report import (
    GradeReport,
    build_grade_report,
    comparison_baseline,
    load_report_grades,
    load_run_grades,
    load_stored_grade_reports,
    with_calibration,
)
from compare_tui.judge.grade.scale import load_scale_rubric
from compare_tui.judge.pair.render import pair_json, render_pair_text
from compare_tui.judge.pair.report import load_pair_report
from compare_tui.judge.prompt.rubric import RubricError, load_rubric
from compare_tui.judge.run.call import JudgeSettings
from compare_tui.judge.run.prepare import (
    JudgingRefused,
    judging_estimate,
    prepare_grade_judging,
    prepare_pair_judging,
    prepare_scale_grading,
)
from compare_tui.judge.run.runner import execute_judging
from compare_tui.store.judgements import RubricMode

__all__ = [
    "DEFAULT_MIN_LABELLED",
    "DEFAULT_PASS_AT",
    "EvaluatorNotFound",
    "GRADE_HEADERS",
    "GradeFigures",
    "GradeReport",
    "JudgeSettings",
    "JudgingRefused",
    "LOOKS_SAFE",
    "RubricError",
    "RubricMode",
    "SCORER",
    "build_grade_report",
    "comparison_baseline",
    "delta_text",
    "evaluator_json",
    "execute_judging",
    "grade_intro",
    "grade_json",
    "grade_rows",
    "grade_summary_json",
    "judging_estimate",
    "load_comparison",
    "load_pair_report",
    "load_report_grades",
    "load_rubric",
    "load_run_grades",
    "load_scale_rubric",
    "pair_json",
    "prepare_grade_judging",
    "prepare_pair_judging",
    "prepare_scale_grading",
    "render_evaluator_text",
    "render_grade_md",
    "render_grade_summary",
    "render_grade_text",
    "render_pair_text",
    "resolve_current",
    "usage_line",
    "with_calibration",
    "calibration_notes",
    "load_stored_grade_reports",
]

"""The opt-in LLM judge: pairwise verdicts with position-bias control, single-answer grades,
evaluator comparison against people's labels, and the triage queue of disagreements.

The six executable scorers stay the default; a judge only ever adds evidence beside them.
Rubric grading in isolation (`scale`): `load_scale_rubric` → `prepare_scale_grading` →
`execute_judging` → `load_run_grades` → `build_grade_report` → `render_grade_text` / `grade_json`.
Flow: `load_rubric` → `prepare_pair_judging` / `prepare_grade_judging` (checks the judge like
any candidate and lists the calls) → `execute_judging` (resumable) → `load_pair_report` /
`load_comparison` (figures from stored rows) → `render_*` / `*_json`; `load_triage` and
`save_label` back the triage screen.
"""

from compare_tui.judge.evaluator.compare import (
    DEFAULT_MIN_LABELLED,
    LOOKS_SAFE,
    NOT_ENOUGH_DATA,
    REVIEW_FIRST,
    Badge,
    BadgeName,
    Decision,
    DecisionStatus,
    EvaluatorComparison,
    EvaluatorRow,
    compare_evaluators,
)
from compare_tui.judge.evaluator.load import (
    DEFAULT_PASS_AT,
    SCORER,
    EvaluatorNotFound,
    LoadedComparison,
    grade_level,
    load_comparison,
    resolve_current,
)
from compare_tui.judge.evaluator.render import evaluator_json, render_evaluator_text
from compare_tui.judge.evaluator.triage import (
    KINDS,
    LABEL_KEYS,
    Disagreement,
    TriageItem,
    TriageView,
    filtered,
    load_triage,
    save_label,
)
from compare_tui.judge.grade.figures import GradeConclusion, GradeDelta, GradeFigures, grade_delta, grade_figures
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
    GradeRow,
    RunGrades,
    build_grade_report,
    comparison_baseline,
    load_report_grades,
    load_run_grades,
    load_stored_grade_reports,
    with_calibration,
)
from compare_tui.judge.grade.scale import SCALE_MODES, load_scale_rubric, scale_messages
from compare_tui.judge.pair.figures import (
    PairConclusion,
    PairFigures,
    PairResult,
    combine,
    pair_figures,
    pair_results,
    preferred_side,
)
from compare_tui.judge.pair.render import pair_json, render_pair_text
from compare_tui.judge.pair.report import PairReport, PairRow, build_pair_report, load_pair_report
from compare_tui.judge.prompt.answers import StoredAnswer, expected_text, judged_answers, render_answer, task_text
from compare_tui.judge.prompt.parse import (
    UNPARSEABLE,
    ParsedReply,
    parse_grade_reply,
    parse_pair_reply,
    parse_scale_reply,
)
from compare_tui.judge.prompt.rubric import MODES, Rubric, RubricError, load_rubric
from compare_tui.judge.prompt.traces import strip_reasoning
from compare_tui.judge.run.call import JudgeReply, JudgeSettings, ask_judge
from compare_tui.judge.run.family import family, same_family_caveat
from compare_tui.judge.run.prepare import (
    JudgingRefused,
    load_run_set,
    prepare_grade_judging,
    prepare_pair_judging,
    prepare_scale_grading,
)
from compare_tui.judge.run.runner import JudgeJob, JudgingPlan, JudgingTally, execute_judging
from compare_tui.judge.run.usage import JudgeUsage, judge_usage
from compare_tui.store.judgements import RubricMode

__all__ = [
    "DEFAULT_MIN_LABELLED",
    "KINDS",
    "LABEL_KEYS",
    "LOOKS_SAFE",
    "MODES",
    "NOT_ENOUGH_DATA",
    "REVIEW_FIRST",
    "SCORER",
    "UNPARSEABLE",
    "Badge",
    "Decision",
    "EvaluatorComparison",
    "EvaluatorNotFound",
    "EvaluatorRow",
    "JudgeJob",
    "JudgeReply",
    "JudgeSettings",
    "JudgeUsage",
    "JudgingPlan",
    "JudgingRefused",
    "JudgingTally",
    "LoadedComparison",
    "PairFigures",
    "PairReport",
    "PairRow",
    "ParsedReply",
    "Rubric",
    "RubricError",
    "RubricMode",
    "StoredAnswer",
    "TriageItem",
    "TriageView",
    "ask_judge",
    "build_pair_report",
    "combine",
    "compare_evaluators",
    "evaluator_json",
    "expected_text",
    "family",
    "filtered",
    "judge_usage",
    "judged_answers",
    "load_comparison",
    "load_pair_report",
    "load_rubric",
    "load_run_set",
    "load_triage",
    "pair_figures",
    "pair_json",
    "pair_results",
    "parse_grade_reply",
    "parse_pair_reply",
    "preferred_side",
    "prepare_grade_judging",
    "prepare_pair_judging",
    "render_answer",
    "render_evaluator_text",
    "render_pair_text",
    "resolve_current",
    "same_family_caveat",
    "save_label",
    "strip_reasoning",
    "task_text",
    "execute_judging",
    "DEFAULT_PASS_AT",
    "grade_level",
    "load_report_grades",
    "load_stored_grade_reports",
    "render_grade_summary",
    "grade_summary_json",
    "render_grade_md",
    "GRADE_HEADERS",
    "grade_intro",
    "delta_text",
    "grade_rows",
    "usage_line",
    "SCALE_MODES",
    "GradeDelta",
    "GradeFigures",
    "GradeReport",
    "GradeRow",
    "RunGrades",
    "build_grade_report",
    "comparison_baseline",
    "grade_delta",
    "grade_figures",
    "grade_json",
    "load_run_grades",
    "load_scale_rubric",
    "parse_scale_reply",
    "prepare_scale_grading",
    "render_grade_text",
    "scale_messages",
    "BadgeName",
    "DecisionStatus",
    "Disagreement",
    "PairResult",
    "PairConclusion",
    "GradeConclusion",
    "with_calibration",
    "calibration_notes",
]

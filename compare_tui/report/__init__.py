"""The report (docs/report.md): recommendation, confidence, figures, paired statistics, caveats.

Pure: `build_report(inputs)` computes every figure once from plain inputs; `load_report_inputs`
is the one function that reads (the store and the golden set). Renderers turn a `Report` into
JSON (`render_json`), Markdown (`render_md`), JUnit XML (`render_junit`) or Rich renderables
(`compare_tui.report.render_text`, imported on its own so that this package never pulls in
Rich). `check_gate` is the CI gate. Nothing runs at import time.
"""

from compare_tui.report.caveats import Caveat
from compare_tui.report.cost import Cost, UtilisationPoint
from compare_tui.report.decision import DecisionAction
from compare_tui.report.figures import (
    Block,
    Counts,
    GpuMemory,
    Latency,
    ModelFigures,
    PassRate,
    RefusedRow,
    Tokens,
)
from compare_tui.report.gate import GateCheck, GateResult, check_gate, gate_document, parse_pass_rate
from compare_tui.report.inputs import AttemptFacts, ReportInputs, RunInput, StepGrading
from compare_tui.report.load import GoldsetRead, ReportNotFoundError, load_report_inputs
from compare_tui.report.model import GoldenSetInfo, Report, ReportRows, build_report, build_rows
from compare_tui.report.paired import PairedComparison
from compare_tui.report.render_json import SCHEMA, SCHEMA_VERSION, render_json, report_document
from compare_tui.report.render_junit import render_junit
from compare_tui.report.render_md import render_md
from compare_tui.report.rule import RULE_LABEL, Recommendation
from compare_tui.report.stats import Interval, Percentiles

__all__ = [
    "RULE_LABEL",
    "SCHEMA",
    "SCHEMA_VERSION",
    "AttemptFacts",
    "Block",
    "Caveat",
    "Cost",
    "Counts",
    "DecisionAction",
    "GateCheck",
    "GateResult",
    "GoldenSetInfo",
    "GpuMemory",
    "Interval",
    "Latency",
    "ModelFigures",
    "PairedComparison",
    "PassRate",
    "Percentiles",
    "Recommendation",
    "RefusedRow",
    "GoldsetRead",
    "Report",
    "ReportInputs",
    "ReportNotFoundError",
    "ReportRows",
    "RunInput",
    "StepGrading",
    "Tokens",
    "UtilisationPoint",
    "build_report",
    "build_rows",
    "check_gate",
    "gate_document",
    "load_report_inputs",
    "parse_pass_rate",
    "render_json",
    "render_junit",
    "render_md",
    "report_document",
]

"""Tool-call conformance: how a model, behind a particular serving stack, handles tools.

A measurement separate from golden-set runs. The official suite (`official_suite()`) is
versioned data shipped in `scenarios/suite/`; a user's own tools come from OpenAI or MCP JSON
(`read_tools_file`, `user_scenarios`). Each scenario ends pass, fail, unsupported (the
server refused the request shape: the serving setup, not the model) or error (nothing
measured), with its checks listed and failures located by JSON pointer. There is no
combined score and no ranking, and the results do not tell whether an agent finishes a task.

Nothing happens at import time; the runner needs an endpoint, the store an open `Store`.
"""

from compare_tui.engine.settings import RunSettings
from compare_tui.toolcall.checks.evaluate import evaluate
from compare_tui.toolcall.checks.unsupported import UNSUPPORTED_MEANS, FailureKind, classify
from compare_tui.toolcall.results.model import (
    NOT_AN_AGENT_TEST,
    NOTES_LABEL,
    CallRecord,
    CheckFailure,
    CheckResult,
    ScenarioResult,
    ToolcallOutcome,
    ToolcallRun,
    ToolcallRunStatus,
)
from compare_tui.toolcall.results.render import render_json, render_text
from compare_tui.toolcall.results.storage import ToolcallStore
from compare_tui.toolcall.results.table import Cell, Column, Row, ScenarioTable, build_table, detail_lines
from compare_tui.toolcall.run.launch import RunRequest, ToolcallRefused, check_request, execute
from compare_tui.toolcall.run.runner import DEFAULT_SETTINGS, run_scenarios
from compare_tui.toolcall.scenarios.scenario import Scenario, ToolSpec
from compare_tui.toolcall.scenarios.suite import Suite, official_suite, select
from compare_tui.toolcall.scenarios.user_tools import user_scenarios
from compare_tui.toolcall.schema.check import SchemaFailure, SchemaReport, check_value
from compare_tui.toolcall.schema.survey import NotChecked, survey
from compare_tui.toolcall.tools.file import ToolsFile, ToolsFileError, UserTool, parse_tools_bytes, read_tools_file

__all__ = [
    "NOTES_LABEL",
    "NOT_AN_AGENT_TEST",
    "UNSUPPORTED_MEANS",
    "CallRecord",
    "Cell",
    "CheckFailure",
    "CheckResult",
    "Column",
    "NotChecked",
    "Row",
    "RunRequest",
    "DEFAULT_SETTINGS",
    "RunSettings",
    "Scenario",
    "ScenarioResult",
    "ScenarioTable",
    "SchemaFailure",
    "SchemaReport",
    "Suite",
    "ToolSpec",
    "ToolcallOutcome",
    "ToolcallRefused",
    "ToolcallRun",
    "ToolcallRunStatus",
    "ToolcallStore",
    "ToolsFile",
    "ToolsFileError",
    "UserTool",
    "FailureKind",
    "build_table",
    "check_request",
    "check_value",
    "classify",
    "detail_lines",
    "evaluate",
    "execute",
    "official_suite",
    "parse_tools_bytes",
    "read_tools_file",
    "render_json",
    "render_text",
    "run_scenarios",
    "select",
    "survey",
    "user_scenarios",
]

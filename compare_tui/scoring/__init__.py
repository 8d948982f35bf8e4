"""Scorers: executable checks that decide pass / fail / review / error for one answer.

`score()` picks the scorer by `spec.kind`. Five scorers are pure functions; `command` runs
the user's program in a process sandbox (`run_sandboxed`) and reports which isolations were
in force. Importing this package does no IO: the sandbox probes the OS on first use.
"""

from compare_tui.scoring.command import resolve_argv, sandbox_files, score_command
from compare_tui.scoring.dispatch import PURE_SCORERS, score
from compare_tui.scoring.human import score_human
from compare_tui.scoring.isolation import NetworkNamespace, network_namespace
from compare_tui.scoring.json_scorer import extract_json, score_json
from compare_tui.scoring.json_values import json_equal
from compare_tui.scoring.result import Answer, Outcome, ScoreResult, ToolCall
from compare_tui.scoring.sandbox import Limits, SandboxResult, run_sandboxed
from compare_tui.scoring.text import normalize_text, score_exact, score_regex
from compare_tui.scoring.tool_call import score_tool_call

__all__ = [
    "PURE_SCORERS",
    "Answer",
    "Limits",
    "NetworkNamespace",
    "Outcome",
    "SandboxResult",
    "ScoreResult",
    "ToolCall",
    "extract_json",
    "json_equal",
    "network_namespace",
    "normalize_text",
    "resolve_argv",
    "run_sandboxed",
    "sandbox_files",
    "score",
    "score_command",
    "score_exact",
    "score_human",
    "score_json",
    "score_regex",
    "score_tool_call",
]

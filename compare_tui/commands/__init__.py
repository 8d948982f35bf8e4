"""CLI subcommands, one module each; every module has `register(subparsers)`."""

from __future__ import annotations

import importlib
from types import ModuleType

_NAMES = (
    "sets",
    "models",
    "run",
    "runs",
    "audit",
    "report",
    "insights",
    "publish",
    "promote",
    "local",
    "sample",
    "toolcall",
    "reproduce",
    "experiment",
    "judge",
    "evaluator_compare",
    "grade",
    "label",
    "rescore",
    "gateway",
    "canary",
)


def COMMAND_MODULES() -> list[ModuleType]:  # noqa: N802 - reads as the constant it stands for
    """The subcommand modules, imported when the parser is built (not at package import)."""
    modules = []
    for name in _NAMES:
        try:
            modules.append(importlib.import_module(f"compare_tui.commands.{name}"))
        except ModuleNotFoundError as exc:
            if not exc.name or not exc.name.startswith("compare_tui.commands"):
                raise
    return modules

"""Helpers shared by the experiment and reproduce tests (this module holds no tests).

Every arm gets its own fake server (its own endpoint), so scripted plans keyed by request
count make a task deterministically flaky within one arm without touching the other.
"""

from __future__ import annotations

import contextlib
import io
from dataclasses import dataclass
from pathlib import Path

from compare_tui.catalogue import Catalogue, ModelEntry, write_catalogue
from compare_tui.cli import main
from tests.support.builders import hosted_entry, write_set

CHECK_EXITS_2 = "import sys\nsys.exit(2)\n"
"""A `command` scorer's check program that fails on its own account (exit 2 = scorer error)."""


@dataclass
class CliResult:
    code: int
    out: str
    err: str


def cli(*args: str) -> CliResult:
    """`compare-tui ARGS` in this process, capturing stdout and stderr."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(args))
    return CliResult(code, out.getvalue(), err.getvalue())


def entry(url: str, name: str, **changes) -> ModelEntry:
    """A hosted catalogue entry for a fake server; `changes` replace fields (pins, serving…)."""
    data = hosted_entry(url, name=name).model_dump(mode="json", exclude_none=True)
    data["model"] = name
    data.update(changes)
    return ModelEntry.model_validate(data)


def catalogue(path: Path, *entries: ModelEntry) -> Path:
    return write_catalogue(Catalogue(models=tuple(entries)), path)


def three_task_set(root: Path, *, human: bool = False, scorer_error: bool = False) -> Path:
    """Tasks t1, t2, t3 expecting "ok"; optionally a human task and a task whose scorer errors."""
    tasks = {"t1": "ok", "t2": "ok", "t3": "ok"}
    extra: dict = {}
    if human:
        tasks["h1"] = "a kind reply"
        extra["h1"] = {"scorer": {"kind": "human", "instructions": "Is the reply kind?"}}
    if scorer_error:
        tasks["s1"] = "ok"
        extra["s1"] = {"scorer": {"kind": "command", "run": ["python3", "check.py"], "timeout_s": 10}}
    path = write_set(root, tasks, extra=extra)
    if scorer_error:
        (root / "check.py").write_text(CHECK_EXITS_2)
    return path

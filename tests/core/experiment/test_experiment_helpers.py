"""Helpers shared by the experiment and reproduce tests (this module holds no tests).

Every arm gets its own fake server (its own endpoint), so scripted plans keyed by request
count make a task deterministically flaky within one arm without touching the other.
"""

from __future__ import annotations

import contextlib
import io
import sqlite3
from dataclasses import dataclass
from pathlib import Path

from compare_tui.catalogue import Catalogue, ModelEntry, write_catalogue
from compare_tui.cli import main
from tests.support.builders import hosted_entry, write_set
from tests.support.fake_openai import FakeServer, text
from tests.support.long_texts import LONG_MODEL

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


OTHER_MODEL = "llama-3.2-3b-instruct-q4_k_m"
"""A second real-length model name (an arm is labelled by its model)."""
SIX_TASKS = ("refund-policy-01", "refund-policy-02", "order-status-01", "order-status-02", "sku-lookup-01", "tone-01")


def six_task_experiment(root: Path) -> str:
    """A store holding `helpdesk`: two arms named as real models (`LONG_MODEL`, `OTHER_MODEL`),
    three runs each over six tasks (one flaky in the first arm), so each arm has both intervals
    (this set under re-running, tasks like these); latencies fixed so pages and snapshots
    repeat. Returns the store's path."""
    first = {t: text("ok") for t in SIX_TASKS} | {"order-status-02": [text("ok"), text("no")], "tone-01": text("no")}
    second = {t: text("ok") for t in SIX_TASKS} | {"sku-lookup-01": text("no")}
    with FakeServer(first) as a, FakeServer(second) as b:
        models = str(catalogue(root / "models.toml", entry(a.url, LONG_MODEL), entry(b.url, OTHER_MODEL)))
        goldset = str(write_set(root / "set", dict.fromkeys(SIX_TASKS, "ok")))
        store = str(root / "runs.sqlite")
        common = ("--models", models, "--store", store)
        new = ("experiment", "new", "helpdesk", goldset, "--arm", LONG_MODEL, "--arm", OTHER_MODEL, "--repeats", "3")
        assert cli(*new, *common).code == 0
        assert cli("experiment", "run", "helpdesk", "--json", *common).code == 0
    conn = sqlite3.connect(store)
    with conn:
        conn.execute("UPDATE attempts SET e2e_ms = 1234.0, ttft_ms = 210.0")
    conn.close()
    return store

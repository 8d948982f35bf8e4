"""Exit codes every command shares, met as a user meets them, in real processes: Ctrl-C (a real
SIGINT) stops each long-running command with 130, as docs/running.md says, and output whose
reader left (`… | head`) ends any command quietly with 141, never a traceback."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from compare_tui.cli import main
from compare_tui.store import Store
from tests.support.builders import write_set
from tests.support.fake_openai import FakeServer, text

ROOT = Path(__file__).resolve().parents[3]


def _env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("COMPARE_TUI_")}
    env["PYTHONPATH"] = str(ROOT)
    env["COMPARE_TUI_STATE_DIR"] = str(tmp_path / "state")
    env["COMPARE_TUI_STORE"] = str(tmp_path / "runs.sqlite")
    return env


def _entry(name: str, url: str) -> str:
    return f"""[[model]]
name = "{name}"
kind = "hosted"
endpoint = "{url}"
model = "fake-model"
revision = "2026-12-01"
weights_digest = "sha256:{"0" * 64}"
"""


@pytest.fixture
def servers() -> Iterator[tuple[FakeServer, FakeServer]]:
    """A fast server for the runs a command needs first, and a slow one (about a second an
    answer) for the command that is interrupted."""
    with (
        FakeServer(default=text("ok")) as fast,
        FakeServer(default=text("ok", chunk_chars=1, chunk_delay_s=0.5)) as slow,
    ):
        yield fast, slow


@pytest.fixture
def workspace(tmp_path: Path, servers, monkeypatch) -> Path:
    fast, slow = servers
    (tmp_path / "models.toml").write_text(
        _entry("fast-a", fast.url) + _entry("fast-b", fast.url) + _entry("slow", slow.url), encoding="utf-8"
    )
    write_set(tmp_path / "set", {f"t{i:02d}": "ok" for i in range(12)})
    for key, value in _env(tmp_path).items():
        monkeypatch.setenv(key, value)
    return tmp_path


def _runs(tmp_path: Path) -> list[str]:
    code = main(
        [
            "run",
            str(tmp_path / "set"),
            "--model",
            "fast-a",
            "--model",
            "fast-b",
            "--models",
            str(tmp_path / "models.toml"),
            "--json",
        ]
    )
    assert code == 0
    with Store.open(tmp_path / "runs.sqlite") as store:
        return [run.id for run in reversed(store.list_runs())]


def _interrupted(tmp_path: Path, slow: FakeServer, *argv: str) -> tuple[int, str]:
    """Start `compare-tui ARGV`, send SIGINT (what Ctrl-C sends) once the slow server is
    answering its first request, and return the exit code and stderr."""
    asked = len([r for r in slow.requests if r.path.endswith("/chat/completions")])
    proc = subprocess.Popen(
        [sys.executable, "-m", "compare_tui", *argv, "--models", str(tmp_path / "models.toml")],
        env=_env(tmp_path),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    while len([r for r in slow.requests if r.path.endswith("/chat/completions")]) <= asked:
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the command never asked the slow server"
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    return proc.returncode, err


def test_toolcall_interrupted_exits_130_and_keeps_the_run(workspace: Path, servers) -> None:
    code, err = _interrupted(workspace, servers[1], "toolcall", "--model", "slow")
    assert code == 130, err
    assert "interrupted; the scenarios that finished are stored" in err and "Traceback" not in err
    with sqlite3.connect(workspace / "runs.sqlite") as db:
        assert [row[0] for row in db.execute("SELECT status FROM toolcall_runs")] == ["interrupted"]


def test_experiment_run_interrupted_exits_130(workspace: Path, servers) -> None:
    models = str(workspace / "models.toml")
    arms = ["--arm", "slow", "--arm", "slow temperature=0.5"]
    assert main(["experiment", "new", "e", str(workspace / "set"), *arms, "--models", models]) == 0
    code, err = _interrupted(workspace, servers[1], "experiment", "run", "e")
    assert code == 130, err
    assert "Traceback" not in err


@pytest.mark.parametrize("command", ["judge", "grade"])
def test_judging_interrupted_exits_130(workspace: Path, servers, command: str) -> None:
    baseline, candidate = _runs(workspace)
    argv = [command, baseline, candidate, "--judge", "slow", "--concurrency", "1"]
    code, err = _interrupted(workspace, servers[1], *argv)
    assert code == 130, err
    assert "interrupted" in err and "Traceback" not in err


# ---------------------------------------------------------------- a reader that left

PRINTING = [
    ["sets", "show", "sample_sets/ticket-labels", "--json"],
    ["sets", "show", "sample_sets/ticket-labels"],
    ["sets", "validate", "sample_sets/ticket-labels"],
    ["toolcall", "list"],
    ["runs", "list"],
    ["sets", "import", "--help"],
    ["--help"],
]


@pytest.mark.parametrize("argv", PRINTING, ids=" ".join)
def test_output_into_a_closed_pipe_ends_quietly(tmp_path: Path, argv: list[str]) -> None:
    """`compare-tui … | head`: the reader is gone before the command writes (the read end is
    closed first), so every write meets a closed pipe, deterministically."""
    Store.open(tmp_path / "runs.sqlite").close()  # `runs list` reads a store; it never makes one
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        result = subprocess.run(
            [sys.executable, "-m", "compare_tui", *argv],
            env=_env(tmp_path),
            cwd=ROOT,
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
        )
    finally:
        os.close(write_end)
    assert result.stderr == ""
    if "--help" in argv:  # argparse drops a help text it could not write, and exits 0 itself
        assert result.returncode in (0, 141)
    else:  # 128 + SIGPIPE: what `cat` or `git` report; a gate's exit code never turns into 0
        assert result.returncode == 141

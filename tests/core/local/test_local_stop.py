"""`local down` returns only once each server is off the process table (no llama-server needed).

A stand-in "llama-server" (a small Python program under that name) is started by a separate
holder process, as after `local up` from another compare-tui process: it is not our child, so
`down` cannot reap it and must wait for it to go. The holder reaps it a moment after it exits,
the way init reaps an orphaned server, so a `down` that trusted the empty command line of an
exiting process would return while the process table still lists it.
"""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from compare_tui import local
from compare_tui.local import state, stop

FAKE_SERVER = """\
import signal, sys, time
from pathlib import Path
term_exit_s = float(sys.argv[4])  # argv: --port N READY_FILE TERM_EXIT_S

def on_term(signum, frame):
    if term_exit_s < 0:
        return  # a server that ignores SIGTERM
    time.sleep(term_exit_s)  # a graceful shutdown takes a while
    sys.exit(0)

signal.signal(signal.SIGTERM, on_term)
Path(sys.argv[3]).write_text("ready")
while True:
    time.sleep(0.05)
"""

HOLDER = """\
import os, subprocess, sys, time
server = subprocess.Popen([sys.executable, sys.argv[1], "--port", sys.argv[2], sys.argv[3], sys.argv[4]])
print(server.pid, flush=True)
os.waitid(os.P_PID, server.pid, os.WEXITED | os.WNOWAIT)  # it has exited: a zombie from here
time.sleep(float(sys.argv[5]))  # reaped only a moment later
server.wait()
"""


def _in_process_table(pid: int) -> bool:
    """What `ps -p PID` says: is there any entry, zombies included?"""
    return subprocess.run(["ps", "-p", str(pid)], capture_output=True).returncode == 0


@pytest.fixture
def fake_server(tmp_path, monkeypatch):
    """Start a stand-in server via a holder; record it as `up` would; yield (pid, holder)."""
    monkeypatch.setenv("COMPARE_TUI_STATE_DIR", str(tmp_path / "state"))
    script = tmp_path / "llama-server"
    script.write_text(FAKE_SERVER)
    (tmp_path / "holder.py").write_text(HOLDER)
    holders = []

    def start(term_exit_s: float, reap_after_s: float = 0.8) -> int:
        ready = tmp_path / f"ready-{len(holders)}"
        holder = subprocess.Popen(
            [
                sys.executable,
                str(tmp_path / "holder.py"),
                str(script),
                "1",
                str(ready),
                str(term_exit_s),
                str(reap_after_s),
            ],
            stdout=subprocess.PIPE,
            text=True,
        )
        holders.append(holder)
        pid = int(holder.stdout.readline())
        deadline = time.monotonic() + 20
        while not ready.exists():
            assert time.monotonic() < deadline, "the stand-in server did not start"
            time.sleep(0.01)
        record = state.ServerRecord(
            name="smollm2-135m",
            pid=pid,
            port=1,
            model_file="/x.gguf",
            sha256="0" * 64,
            revision="r",
            quantisation="Q4_1",
            started_at=time.time(),
            log_path="/dev/null",
            cmdline=state.process_cmdline(pid),
            ctx=1024,
            parallel=1,
            jinja=True,
        )
        state.save_records([record])
        return pid

    yield start
    for holder in holders:
        holder.kill()
        holder.wait()


def test_down_returns_once_the_server_is_off_the_process_table(fake_server):
    pid = fake_server(term_exit_s=0.3)
    outcomes = local.down()
    assert not _in_process_table(pid)  # right after: not running, not even a zombie
    assert [(o.pid, o.outcome) for o in outcomes] == [(pid, "stopped")]
    assert state.load_records() == []


def test_a_server_ignoring_sigterm_is_killed_after_the_bounded_wait(fake_server, monkeypatch):
    monkeypatch.setattr(stop, "TERM_WAIT_S", 0.5)
    pid = fake_server(term_exit_s=-1)
    outcomes = local.down()
    assert not _in_process_table(pid)
    assert [(o.pid, o.outcome) for o in outcomes] == [(pid, "killed")]


def test_a_zombie_whose_parent_never_reaps_it_ends_the_wait(fake_server, monkeypatch):
    # An exited server holds neither its port nor its memory; if its parent never takes it
    # off the table, `down` stops waiting after REAP_WAIT_S instead of hanging.
    monkeypatch.setattr(stop, "REAP_WAIT_S", 0.2)
    pid = fake_server(term_exit_s=0.0, reap_after_s=60)
    assert [o.outcome for o in local.down()] == ["stopped"]
    assert stop.process_entry(pid)[0] == "Z"


def test_the_cli_prints_stopped_only_after_the_server_is_gone(fake_server, capsys):
    from compare_tui.cli import main

    pid = fake_server(term_exit_s=0.3)
    assert main(["local", "down"]) == 0
    assert not _in_process_table(pid)
    assert "stopped" in capsys.readouterr().out

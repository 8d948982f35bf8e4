"""Smoke test in a real terminal: `compare-tui` started inside tmux (80×24), read back with
`tmux capture-pane`, driven with `tmux send-keys`. Needs the `tmux` binary (CI installs it);
without it this test fails with the fix rather than skipping silently.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.tui.test_tui_data import build_store, write_catalogue

ROOT = Path(__file__).resolve().parents[2]


class Tmux:
    """One tmux server on a private socket, so the user's own sessions are never touched."""

    def __init__(self, socket: str) -> None:
        self.base = ["tmux", "-L", socket, "-f", "/dev/null"]

    def __call__(self, *args: str, check: bool = True) -> str:
        done = subprocess.run([*self.base, *args], capture_output=True, text=True, timeout=30)
        if check and done.returncode != 0:
            raise AssertionError(f"tmux {' '.join(args)} failed: {done.stderr.strip()}")
        return done.stdout

    def pane(self, variable: str) -> str:
        return self("display-message", "-p", "-t", "smoke", f"#{{{variable}}}").strip()

    def screen(self) -> str:
        return self("capture-pane", "-p", "-t", "smoke")

    def wait_for(self, *texts: str, timeout_s: float = 60.0) -> str:
        deadline = time.monotonic() + timeout_s
        shown = ""
        while time.monotonic() < deadline:
            shown = self.screen()
            if all(t in shown for t in texts):
                return shown
            time.sleep(0.2)
        raise AssertionError(f"the screen never showed {texts!r}; it shows:\n{shown}")


@pytest.fixture
def tmux():
    if shutil.which("tmux") is None:
        pytest.fail("tmux is not installed: `apt-get install -y tmux` (the CI setup does this)", pytrace=False)
    server = Tmux(f"compare-tui-smoke-{os.getpid()}")
    yield server
    server("kill-server", check=False)


def test_compare_tui_starts_in_a_real_terminal_and_opens_a_report(tmp_path, tmux):
    store, sets = build_store(tmp_path)
    store.close()
    models = write_catalogue(tmp_path / "models.toml")
    argv = [
        sys.executable,
        "-m",
        "compare_tui",
        "--store",
        str(tmp_path / "runs.sqlite"),
        "--models",
        str(models),
        "--sets",
        str(sets),
    ]
    env = {
        "PYTHONPATH": str(ROOT),
        "COMPARE_TUI_STATE_DIR": str(tmp_path / "state"),
        "TERM": "xterm-256color",
        "HOME": str(tmp_path),
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "LANG": "C.UTF-8",
    }
    exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
    # `env -i …`: a clean environment. The pane stays after compare-tui exits, so its last screen
    # (a traceback would be there) can be read; the shell writes compare-tui's exit status to a
    # file (tmux's own pane_dead_status is not reliable here: it sometimes never reaps the pane).
    status = tmp_path / "exit-status"
    tmux(
        "new-session",
        "-d",
        "-s",
        "smoke",
        "-x",
        "80",
        "-y",
        "24",
        f"cd {shlex.quote(str(ROOT))} && env -i {exports} {shlex.join(argv)}; echo $? > {shlex.quote(str(status))}",
        ";",
        "set-option",
        "-t",
        "smoke",
        "remain-on-exit",
        "on",
    )
    home = tmux.wait_for("compare-tui — home", "gemma3-270m", "80.0% (8/10)")
    assert "Runs [3]" in home and "q Quit" in home
    tmux("send-keys", "-t", "smoke", "Enter")
    report = tmux.wait_for("Recommended: gemma3-270m", "confidence: low")
    assert "Is the lead larger than noise?" in report
    tmux("send-keys", "-t", "smoke", "3")
    grid = tmux.wait_for("tasks 1–12 of 12")
    assert "smollm2-135m  ? ? ✓ ✓ ✗ ✓ ✓ ✗ ✓ ✓ ✓ !" in grid
    tmux("send-keys", "-t", "smoke", "q")
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and not (status.exists() and status.read_text().strip()):
        time.sleep(0.2)
    assert status.exists(), "compare-tui did not quit on q"
    assert "Traceback" not in tmux.screen()
    assert status.read_text().strip() == "0", tmux.screen()

"""`compare-tui run` as a user runs it: a real process, a real store, real signals."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from compare_tui.store import Store
from tests.support.builders import hosted_catalogue, write_set
from tests.support.fake_openai import FakeServer, text

ROOT = Path(__file__).resolve().parents[3]


def _cli(*args: str, env_extra: dict | None = None) -> list[str]:
    return [sys.executable, "-m", "compare_tui", *args]


def _env(tmp_path: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("COMPARE_TUI_")}
    env["PYTHONPATH"] = str(ROOT)
    env["COMPARE_TUI_STATE_DIR"] = str(tmp_path / "state")
    return env


@pytest.fixture
def slow_server():
    # Each answer takes ~60 ms, so a 30-task run at concurrency 2 lasts about a second.
    with FakeServer(default=text("ok", chunk_chars=1, chunk_delay_s=0.03)) as server:
        yield server


def _start_run(tmp_path, server, n_tasks=30, *extra: str):
    goldset = write_set(tmp_path / "set", {f"t{i:02d}": "ok" for i in range(n_tasks)})
    models = hosted_catalogue(tmp_path / "models.toml", server.url)
    store = tmp_path / "runs.sqlite"
    argv = _cli(
        "run",
        str(goldset),
        "--model",
        "fake",
        "--models",
        str(models),
        "--store",
        str(store),
        "--concurrency",
        "2",
        *extra,
    )
    return (
        subprocess.Popen(argv, env=_env(tmp_path), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True),
        store,
        models,
    )


def _wait_for_attempts(store_path: Path, n: int, deadline_s: float = 60) -> str:
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        if store_path.exists():
            try:
                with Store.open(store_path) as store:
                    runs = store.list_runs()
                    if runs and len(store.attempts_for_run(runs[0].id)) >= n:
                        return runs[0].id
            except Exception:  # noqa: BLE001 - the store may be mid-creation
                pass
        time.sleep(0.05)
    raise AssertionError(f"fewer than {n} attempts recorded in {deadline_s} s")


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM, signal.SIGINT])
def test_a_killed_run_resumes_with_nothing_repeated_and_nothing_lost(tmp_path, slow_server, sig):
    proc, store_path, models = _start_run(tmp_path, slow_server)
    run_id = _wait_for_attempts(store_path, 5)
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=60)
    with Store.open(store_path) as store:
        status = store.get_run(run_id).status
        recorded_before = {a.id for a in store.attempts_for_run(run_id)}
    if sig in (signal.SIGTERM, signal.SIGINT):  # SIGINT: what Ctrl-C sends
        assert proc.returncode == {signal.SIGTERM: 143, signal.SIGINT: 130}[sig], err
        assert status == "interrupted"
        assert "--resume" in err
    else:
        assert status == "running"  # kill -9 leaves no chance to mark it; resume accepts it
    assert 5 <= len(recorded_before) < 30

    requests_before = len(slow_server.requests)
    resumed = subprocess.run(
        _cli("run", "--resume", run_id, "--models", str(models), "--store", str(store_path), "--json"),
        env=_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert resumed.returncode == 0, resumed.stderr
    summary = json.loads(resumed.stdout)
    assert summary["runs"][0]["status"] == "completed"
    with Store.open(store_path) as store:
        attempts = store.attempts_for_run(run_id)
        assert store.get_run(run_id).status == "completed"
    assert sorted(a.task_id for a in attempts) == [f"t{i:02d}" for i in range(30)]  # each exactly once
    assert recorded_before <= {a.id for a in attempts}  # nothing lost
    asked_again = {r.task for r in slow_server.requests[requests_before:] if r.path.endswith("/chat/completions")}
    assert asked_again.isdisjoint({i.split(":")[1] for i in recorded_before})  # nothing repeated


def test_run_json_summary_and_runs_list(tmp_path, slow_server):
    proc, store_path, _ = _start_run(tmp_path, slow_server, 4, "--margin", "3")
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    assert "passed" not in err
    with Store.open(store_path) as store:  # the verdict's margin is fixed before the data
        assert [c.margin_pp for c in store.list_comparisons()] == [3.0]
    listed = subprocess.run(
        _cli("runs", "list", "--store", str(store_path), "--json"),
        env=_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=60,
    )
    rows = json.loads(listed.stdout)
    assert [(r["model"], r["status"], r["pass"], r["tasks"]) for r in rows] == [("fake", "completed", 4, 4)]


def test_a_set_without_command_scorers_runs_while_the_machines_scorer_cluster_is_down(tmp_path, slow_server):
    # `$COMPARE_TUI_SCORERS` names the machine's cluster for every run; a set with no command
    # scorer sends it nothing, so a cluster that is down must not refuse it. `bogus` still is.
    import socket

    with socket.socket() as sock:  # a loopback port nobody listens on once closed
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    goldset = write_set(tmp_path / "set", {"t0": "ok", "t1": "ok"})
    models = hosted_catalogue(tmp_path / "models.toml", slow_server.url)
    argv = _cli("run", str(goldset), "--model", "fake", "--models", str(models), "--store", str(tmp_path / "r.sqlite"))
    env = _env(tmp_path) | {"COMPARE_TUI_SCORERS": f"ray=127.0.0.1:{port}"}
    done = subprocess.run([*argv, "--json"], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["scorers"]["kind"] == "local"
    bad = subprocess.run([*argv, "--scorers", "bogus"], env=env, capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and "--scorers 'bogus'" in bad.stderr


def test_unknown_model_and_missing_catalogue_are_clear_errors(tmp_path):
    goldset = write_set(tmp_path / "set", {"a": "ok"})
    missing = subprocess.run(
        _cli("run", str(goldset), "--model", "x", "--store", str(tmp_path / "s.sqlite")),
        env=_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert missing.returncode == 2 and "no model catalogue" in missing.stderr and "local up" in missing.stderr
    models = hosted_catalogue(tmp_path / "models.toml", "http://127.0.0.1:9/v1")
    unknown = subprocess.run(
        _cli("run", str(goldset), "--model", "nope", "--models", str(models), "--store", str(tmp_path / "s.sqlite")),
        env=_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert unknown.returncode == 2 and "nope" in unknown.stderr and "fake" in unknown.stderr
    assert "Traceback" not in missing.stderr + unknown.stderr
    alone = subprocess.run(
        _cli(
            "run",
            str(goldset),
            "--baseline",
            "fake",
            "--model",
            "fake",
            "--models",
            str(models),
            "--store",
            str(tmp_path / "s.sqlite"),
        ),
        env=_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert alone.returncode == 2 and "--baseline fake is also the only --model" in alone.stderr
    if (tmp_path / "s.sqlite").exists():
        with Store.open(tmp_path / "s.sqlite") as store:
            assert store.list_runs() == []


def test_sets_validate_and_show(tmp_path):
    good = write_set(tmp_path / "good", {"a": "ok", "b": "ok"})
    ok = subprocess.run(
        _cli("sets", "validate", str(good)), env=_env(tmp_path), capture_output=True, text=True, timeout=60
    )
    assert ok.returncode == 0 and "2 tasks" in ok.stdout and "sha256:" in ok.stdout
    (good / "tasks" / "bad.toml").write_text('id = "bad"\n[input]\nprompt = 3\n[expected]\ntext = "x"\n')
    bad = subprocess.run(
        _cli("sets", "validate", str(good)), env=_env(tmp_path), capture_output=True, text=True, timeout=60
    )
    assert bad.returncode == 1 and "bad.toml" in bad.stdout and "prompt" in bad.stdout
    assert "Traceback" not in bad.stdout + bad.stderr
    (good / "tasks" / "bad.toml").unlink()
    shown = subprocess.run(
        _cli("sets", "show", str(good), "--json"), env=_env(tmp_path), capture_output=True, text=True, timeout=60
    )
    data = json.loads(shown.stdout)
    assert [t["id"] for t in data["tasks"]] == ["a", "b"] and data["digest"].startswith("sha256:")


def test_help_has_examples_for_every_command(tmp_path):
    for args in (
        ["--help"],
        ["run", "--help"],
        ["sets", "validate", "--help"],
        ["sets", "show", "--help"],
        ["runs", "list", "--help"],
    ):
        out = subprocess.run(_cli(*args), env=_env(tmp_path), capture_output=True, text=True, timeout=60)
        assert out.returncode == 0 and "example" in out.stdout, args

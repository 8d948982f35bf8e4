"""Shared pieces of the fault and load tests (no tests here): a catalogue for a fake server,
a CLI environment, a per-task deterministic fault script, a light store reader, and the
report with run ids, timestamps and latencies taken out so two runs can be compared.

The bench/soak scripts import these too, so the soak versions run the same code as CI.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import sys
from pathlib import Path
from typing import Any

from tests.support.builders import hosted_catalogue
from tests.support.fake_openai import (
    error_in_stream,
    http_error,
    malformed,
    rate_limited,
    reset,
    text,
    truncated,
)

ROOT = Path(__file__).resolve().parents[3]


def write_catalogue(path: Path, url: str, *, key_env: str | None = None, gateway: str | None = None) -> Path:
    return hosted_catalogue(path, url, key_env=key_env, gateway=gateway)


def cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "compare_tui", *args]


def cli_env(state_dir: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("COMPARE_TUI_")}
    env["PYTHONPATH"] = str(ROOT)
    env["COMPARE_TUI_STATE_DIR"] = str(state_dir)
    env.update(extra)
    return env


def task_ids(n: int) -> list[str]:
    return [f"t{i:04d}" for i in range(n)]


def fault_plan(task: str, *, delay_s: float = 0.0):
    """The plan for one task, a function of its id only (never of how often it was asked),
    so an interrupted run and an uninterrupted one get the same responses."""
    i = int(task[1:])
    slow = {"chunk_chars": 1, "chunk_delay_s": delay_s}
    if i % 25 == 3:
        return reset()  # retried, then an error
    if i % 25 == 12:
        return rate_limited(retry_after="0")  # retried at once, then an error
    return {
        5: text("wrong", **slow),  # fail, so a second attempt
        6: truncated(2, **slow),
        7: malformed(text="ok", **slow),
        8: http_error(400),
        9: error_in_stream(**slow),
    }.get(i % 10, text("ok", **slow))


def fault_script(delay_s: float = 0.0):
    def script(body: dict, count: int):
        messages = body.get("messages") or [{}]
        return fault_plan(str(messages[-1].get("content", "t0000")), delay_s=delay_s)

    return script


def count_attempts(store: Path) -> int:
    """Attempts recorded so far, read without opening the store for writing (0 if not yet)."""
    if not store.exists():
        return 0
    try:
        conn = sqlite3.connect(f"file:{store}?mode=ro", uri=True, timeout=5)
        try:
            return conn.execute("SELECT count(*) FROM attempts").fetchone()[0]
        finally:
            conn.close()
    except sqlite3.Error:
        return 0


def first_run_id(store: Path) -> str | None:
    if not store.exists():
        return None
    try:
        conn = sqlite3.connect(f"file:{store}?mode=ro", uri=True, timeout=5)
        try:
            row = conn.execute("SELECT id FROM runs ORDER BY rowid LIMIT 1").fetchone()
            return row[0] if row else None
        finally:
            conn.close()
    except sqlite3.Error:
        return None


_RESUME_CAVEATS = {"resumed"}
_VOLATILE = re.compile(r"(^|_)(id|ids|at|ms|ttft|e2e|latency|started|finished|created|generated|environment)($|_)")


def comparable(value: Any, key: str = "") -> Any:
    """A report document without what differs between two runs on the same responses."""
    if isinstance(value, dict):
        return {k: comparable(v, k) for k, v in sorted(value.items()) if not _VOLATILE.search(k)}
    if isinstance(value, list):
        # A resumed run's report rightly says it was resumed (and that its hardware time includes
        # the pause); everything else must match the uninterrupted run's.
        return [comparable(v, key) for v in value if not (isinstance(v, dict) and v.get("code") in _RESUME_CAVEATS)]
    if isinstance(value, str):
        value = re.sub(r"\b[0-9a-f]{16}\b", "RUN", value)
        return re.sub(r"\d{4}-\d\d-\d\dT[\d:.]+Z?", "TIME", value)
    return value


def report_json(store_path: Path, run_id: str) -> dict:
    from compare_tui.report import build_report, load_report_inputs, render_json
    from compare_tui.store import Store

    with Store.open(store_path) as store:
        return json.loads(render_json(build_report(load_report_inputs(store, run_id))))


def integrity(store_path: Path) -> str:
    conn = sqlite3.connect(str(store_path))
    try:
        return conn.execute("PRAGMA integrity_check").fetchone()[0]
    finally:
        conn.close()


# ---- crash anywhere, resume exactly once ------------------------------------------------

import random  # noqa: E402
import signal  # noqa: E402
import subprocess  # noqa: E402
import time  # noqa: E402
from dataclasses import dataclass, field  # noqa: E402


@dataclass
class ChaosResult:
    run_id: str
    kills: list[str] = field(default_factory=list)
    """How each kill landed: `after N attempts` or `at startup +Xs`."""
    processes: int = 0
    final_stdout: str = ""
    final_stderr: str = ""
    wall_s: float = 0.0


def _done_tasks(store: Path, attempts: int) -> set[str]:
    conn = sqlite3.connect(f"file:{store}?mode=ro", uri=True, timeout=5)
    try:
        rows = conn.execute("SELECT task_id, attempt, outcome FROM attempts").fetchall()
    finally:
        conn.close()
    by_task: dict[str, list[tuple[int, str]]] = {}
    for task, number, outcome in rows:
        by_task.setdefault(task, []).append((number, outcome))
    return {
        t for t, a in by_task.items() if any(o in ("pass", "review") for _, o in a) or max(n for n, _ in a) >= attempts
    }


def chaos_run(
    work: Path,
    set_path: Path,
    models: Path,
    store: Path,
    server,
    *,
    kills: int,
    attempts_per_task: int,
    expected_attempts: int,
    seed: int,
    concurrency: int = 4,
    timeout_s: float = 600,
) -> ChaosResult:
    """Start a CLI run, SIGKILL it `kills` times at random moments (each time a new process
    resumes it), then let a last resume finish. Kill moments: mostly after a random number of
    recorded attempts plus a random few ms (mid-request, mid-write), and every fourth kill at
    a random moment of a fresh process's start-up (while it opens the store, checks the model).
    Also checks, per process, that no task already finished before it started is asked again."""
    rng = random.Random(seed)
    env = cli_env(work / "state")
    thresholds = sorted(rng.sample(range(1, expected_attempts - 1), kills))
    result = ChaosResult(run_id="")
    started = time.monotonic()
    argv = cli(
        "run",
        str(set_path),
        "--model",
        "fake",
        "--models",
        str(models),
        "--store",
        str(store),
        "--concurrency",
        str(concurrency),
        "--json",
    )
    repeated: list[str] = []
    for k, threshold in enumerate(thresholds):
        if result.run_id:
            argv = cli("run", "--resume", result.run_id, "--models", str(models), "--store", str(store), "--json")
            done_before = _done_tasks(store, attempts_per_task)
        else:
            done_before = set()
        requests_before = len(server.requests)
        proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        result.processes += 1
        deadline = time.monotonic() + timeout_s
        if k % 4 == 3 and result.run_id:
            pause = rng.uniform(0.05, 1.5)
            time.sleep(pause)
            how = f"at startup +{pause:.2f}s"
        else:
            while count_attempts(store) < threshold and proc.poll() is None and time.monotonic() < deadline:
                time.sleep(0.01)
            time.sleep(rng.uniform(0, 0.05))
            how = f"after {count_attempts(store)} attempts"
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
            result.kills.append(how)
        _, err = proc.communicate(timeout=60)
        # 1: a resume that finished with tasks still not done (the plan's permanent resets).
        if proc.returncode not in (0, 1, -signal.SIGKILL):
            raise AssertionError(f"process {k} exited {proc.returncode}: {err}")
        if not result.run_id:
            result.run_id = first_run_id(store) or ""
            if not result.run_id:
                raise AssertionError("the first process was killed before it created its run")
        asked = {r.task for r in server.requests[requests_before:] if r.path.endswith("/chat/completions")}
        repeated += sorted(asked & done_before)
    if repeated:
        raise AssertionError(f"finished tasks were asked again after a resume: {repeated[:10]}")
    done_before = _done_tasks(store, attempts_per_task)
    requests_before = len(server.requests)
    final = subprocess.run(
        cli("run", "--resume", result.run_id, "--models", str(models), "--store", str(store), "--json"),
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout_s,
    )
    result.processes += 1
    asked = {r.task for r in server.requests[requests_before:] if r.path.endswith("/chat/completions")}
    if asked & done_before:
        raise AssertionError(f"finished tasks were asked again: {sorted(asked & done_before)[:10]}")
    result.final_stdout, result.final_stderr = final.stdout, final.stderr
    result.wall_s = time.monotonic() - started
    if final.returncode not in (0, 1):  # 1: ended incomplete (tasks whose every request fails)
        raise AssertionError(f"the last resume failed ({final.returncode}): {final.stderr}")
    return result


def ledger_facts(store_path: Path, run_id: str) -> dict[str, Any]:
    """Attempts and audit rows of a run, and how they match up."""
    from compare_tui.store import Store

    with Store.open(store_path) as store:
        attempts = store.attempts_for_run(run_id)
        audit = store.audit_for_run(run_id)
        status = store.get_run(run_id).status
    audit_per_key: dict[tuple[str, int], int] = {}
    for row in audit:
        audit_per_key[(row.task_id, row.attempt)] = audit_per_key.get((row.task_id, row.attempt), 0) + 1
    attempt_keys = [(a.task_id, a.attempt) for a in attempts]
    expected_rows = {(a.task_id, a.attempt): a.retries + 1 for a in attempts}
    return {
        "status": status,
        "attempts": attempts,
        "attempt_ids": [a.id for a in attempts],
        "attempt_keys": attempt_keys,
        "audit_rows": len(audit),
        "answered_rows": sum(1 for row in audit if row.status is not None),
        "audit_per_key": audit_per_key,
        "requests_of_recorded_attempts": sum(expected_rows.values()),
        "short": {k: (audit_per_key.get(k, 0), n) for k, n in expected_rows.items() if audit_per_key.get(k, 0) < n},
        "orphans": sorted(set(audit_per_key) - set(expected_rows)),
        "extra_rows": len(audit) - sum(expected_rows.values()),
    }


def unexplained_retries(store_path: Path, attempt) -> list[str]:
    """Error classes of an attempt's audited retries that the plan for its task does not
    explain: anything but a connection reset or refusal (the stale keep-alive case)."""
    from compare_tui.store import Store

    with Store.open(store_path) as store:
        rows = [
            r
            for r in store.audit_for_run(attempt.run_id)
            if (r.task_id, r.attempt) == (attempt.task_id, attempt.attempt)
        ]
    expected = {"reset", "connect", "http_429", "http_5xx"}
    return [r.error_class for r in rows[:-1] if r.error_class not in expected]


def run_in_process(
    store_path: Path,
    set_path: Path,
    url: str,
    *,
    concurrency: int = 4,
    environ=None,
    observer=None,
    allow_incomplete: bool = False,
) -> str:
    """The same run as `compare-tui run`, in this process (no interpreter start-up); its id.
    Fails unless the run completed (or, with `allow_incomplete`, ended `incomplete`)."""
    import asyncio

    from compare_tui.engine import RunExecutor, RunOverrides, prepare_run
    from compare_tui.goldset import load_golden_set
    from compare_tui.store import Store
    from tests.support.builders import hosted_entry

    with Store.open(store_path) as store:
        prepared = prepare_run(
            store,
            load_golden_set(set_path),
            hosted_entry(url),
            RunOverrides(concurrency=concurrency),
            environ=environ or {},
        )
        status = asyncio.run(RunExecutor(store, prepared, observer=observer).execute())
    if status != "completed" and not (allow_incomplete and status == "incomplete"):
        raise AssertionError(f"the in-process run ended {status}")
    return prepared.run.id


# ---- the zero-delay server as a separate process ------------------------------------------


class ServerProcess:
    """`python -m tests.support.fake_openai --port 0 --mode …` in its own process."""

    def __init__(self, mode: str = "zero-delay") -> None:
        self.mode = mode
        self.proc: subprocess.Popen | None = None
        self.url = ""

    def __enter__(self) -> ServerProcess:
        env = dict(os.environ, PYTHONPATH=str(ROOT))
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tests.support.fake_openai", "--port", "0", "--mode", self.mode],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            text=True,
        )
        self.url = self.proc.stdout.readline().strip()
        if not self.url.startswith("http://"):
            self.proc.kill()
            raise RuntimeError(f"the fake server did not start (said {self.url!r})")
        return self

    @property
    def pid(self) -> int:
        return self.proc.pid

    @property
    def port(self) -> int:
        return int(self.url.rsplit(":", 1)[1].split("/")[0])

    def __exit__(self, *exc: object) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)

"""Lease chaos (issue 35): two or three resumers keep trying to execute one run while random
SIGKILL, SIGTERM and SIGINT land on them at random moments; a loopback server counts every
chat request it receives by (task, attempt) (one run per round, one attempt per task).

Per round (a fresh run of `--tasks` tasks; rounds repeat until `--kills` signals have landed):
an uninterrupted run of the same set first (the reference report), then the chaos, then the
last resumer finishes the run undisturbed. Checked each round (an AssertionError says what
broke):
  - requests received per (task, attempt) are 1, except where a kill fell between a request
    and its stored answer; each such extra request is matched by an audit row of that task
    in state `unknown` (its sender died) or `cancelled` (its sender stopped reading), and the
    attempt was resolved by a later request;
  - audit rows ≥ requests received, for every task and in all;
  - zero lost attempts (every task has its one attempt, stored once), the run `completed`;
  - the final report equals the uninterrupted run's (ids, times and latencies aside).

Executors are forked from this (thread-free) process with compare-tui already imported, so a
kill point costs milliseconds, not an interpreter start; the server runs in its own process.

    PYTHONPATH=. .venv/bin/python bench/soak/lease_chaos.py [--kills 1000] [--tasks 300] \
        [--resumers 3] [--seed 35] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from compare_tui.catalogue import load_catalogue  # noqa: E402
from compare_tui.cli import main as cli_main  # noqa: E402  (imported before forking: warm children)
from compare_tui.engine import RunOverrides, prepare_run  # noqa: E402
from compare_tui.goldset import load_golden_set  # noqa: E402
from compare_tui.store import Store  # noqa: E402
from tests.core.engine.test_chaos_helpers import comparable, report_json, write_catalogue  # noqa: E402
from tests.support.builders import write_set  # noqa: E402

SIGNALS = (signal.SIGKILL, signal.SIGTERM, signal.SIGINT)
CONCURRENCY = 4
DELAY_S = 0.05
"""Between the two deltas of every answer: a request is in flight long enough to be cut."""

SERVER = r"""
import sys, threading
from tests.support.fake_openai import FakeServer, text
log = open(sys.argv[1], "a", buffering=1)
lock = threading.Lock()
def script(body, count):
    task = str((body.get("messages") or [{}])[-1].get("content", ""))
    with lock:
        log.write(task + "\n")  # received: counted before anything is answered
    return text("ok", chunk_chars=1, chunk_delay_s=float(sys.argv[2]))
with FakeServer(script) as server:
    print(server.url, flush=True)
    sys.stdin.read()
"""


class Chaos:
    def __init__(self, work: Path, resumers: int, seed: int, max_gap_s: float) -> None:
        self.work, self.resumers, self.rng, self.max_gap_s = work, resumers, random.Random(seed), max_gap_s
        self.log = work / "received.log"
        self.log.touch()
        self.server = subprocess.Popen(
            [sys.executable, "-c", SERVER, str(self.log), str(DELAY_S)],
            cwd=ROOT,
            env=dict(os.environ, PYTHONPATH=str(ROOT)),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        self.url = self.server.stdout.readline().strip()
        assert self.url.startswith("http://127.0.0.1"), self.url
        self.models = write_catalogue(work / "models.toml", self.url)
        self.kills: Counter[str] = Counter()
        self.exits: Counter[str] = Counter()
        self.figures: Counter[str] = Counter()

    def close(self) -> None:
        self.server.stdin.close()
        self.server.wait(10)

    # ------------------------------------------------------------------ processes

    def _fork(self, argv: list[str]) -> int:
        pid = os.fork()
        if pid == 0:  # the child: one compare-tui command, its output discarded
            code = 1
            try:
                null = os.open(os.devnull, os.O_WRONLY)
                os.dup2(null, 1)
                os.dup2(null, 2)
                code = cli_main(argv)
            except BaseException:  # noqa: BLE001 - a child must never return into the driver
                code = 1
            os._exit(code)
        return pid

    def _reap(self, children: set[int], block: bool = False) -> list[int]:
        codes = []
        while children:
            pid, status = os.waitpid(-1, 0 if block else os.WNOHANG)
            if pid == 0:
                break
            children.discard(pid)
            code = os.waitstatus_to_exitcode(status)
            self.exits[str(code)] += 1
            codes.append(code)
            if block:
                break
        return codes

    def _lease_pid(self, store: Path, run_id: str) -> int | None:
        conn = sqlite3.connect(f"file:{store}?mode=ro", uri=True, timeout=5)
        try:
            row = conn.execute("SELECT pid FROM run_leases WHERE run_id = ?", (run_id,)).fetchone()
            return row[0] if row else None
        finally:
            conn.close()

    def _status(self, store: Path, run_id: str) -> str:
        conn = sqlite3.connect(f"file:{store}?mode=ro", uri=True, timeout=5)
        try:
            return conn.execute("SELECT status FROM runs WHERE id = ?", (run_id,)).fetchone()[0]
        finally:
            conn.close()

    def _received(self) -> list[str]:
        return self.log.read_text().splitlines()

    # ------------------------------------------------------------------ one round

    def round(self, number: int, tasks: int, kills_left: int) -> int:
        """One run under chaos; return the kills that landed."""
        ids = [f"r{number:03d}-t{i:04d}" for i in range(tasks)]
        folder = self.work / f"round{number}"
        set_path = write_set(folder / "set", {t: "ok" for t in ids})
        common = ["--models", str(self.models), "--concurrency", str(CONCURRENCY)]
        # The reference: the same set, never interrupted.
        reference = folder / "reference.sqlite"
        children = {self._fork(["run", str(set_path), "--model", "fake", "--store", str(reference), *common])}
        (code,) = self._reap(children, block=True)
        assert code == 0, f"round {number}: the reference run exited {code}"
        with Store.open(reference) as store:
            reference_id = store.list_runs()[0].id
        mark = len(self._received())

        # The run under chaos: created and prepared here (nothing sent), then only resumed.
        chaos = folder / "chaos.sqlite"
        with Store.open(chaos) as store:
            entry = load_catalogue(self.models).get("fake")
            run_id = prepare_run(store, load_golden_set(set_path), entry, RunOverrides(concurrency=CONCURRENCY)).run.id
        children: set[int] = set()
        landed = 0
        resume = ["run", "--resume", run_id, "--store", str(chaos), "--models", str(self.models)]
        deadline = time.monotonic() + 600
        while self._status(chaos, run_id) != "completed":
            assert time.monotonic() < deadline, f"round {number}: the run did not complete in 600 s"
            while len(children) < (self.resumers if landed < kills_left else 1):
                children.add(self._fork(resume))
            time.sleep(self.rng.uniform(0.1, self.max_gap_s))  # a forked resumer takes ~0.7 s to its lease here
            self._reap(children)
            if landed < kills_left and children:
                holder = self._lease_pid(chaos, run_id)
                target = holder if holder in children and self.rng.random() < 0.8 else self.rng.choice(sorted(children))
                if self._kill(target, self.rng.choice(SIGNALS)):
                    landed += 1
                    self.figures["kills on the lease holder"] += target == holder
        while children:
            self._reap(children, block=True)
        self._check(number, chaos, run_id, reference, reference_id, self._received()[mark:])
        print(f"round {number}: {landed} kills landed, checks passed", file=sys.stderr, flush=True)
        return landed

    def _kill(self, pid: int, sig: signal.Signals) -> bool:
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            return False
        self.kills[sig.name] += 1
        return True

    # ------------------------------------------------------------------ the checks

    def _check(self, number: int, chaos: Path, run_id: str, reference: Path, reference_id: str, got: list[str]):
        received = Counter(got)
        with Store.open(chaos) as store:
            run = store.get_run(run_id)
            attempts = store.attempts_for_run(run_id)
            audit = store.audit_for_run(run_id)
            takeovers = store.takeovers_of(run_id)
        where = f"round {number}"
        assert run.status == "completed", f"{where}: run {run_id} ended {run.status}"
        keys = Counter((a.task_id, a.attempt) for a in attempts)
        assert set(keys) == {(t, 1) for t in received} and set(keys.values()) == {1}, f"{where}: lost attempts"
        assert all(a.outcome == "pass" for a in attempts), f"{where}: an attempt did not pass"
        rows = Counter(r.task_id for r in audit)
        stale = Counter(r.task_id for r in audit if r.state in ("unknown", "cancelled"))
        states = Counter(r.state for r in audit)
        assert not states["sent"], f"{where}: {states['sent']} audit rows still `sent` after the run completed"
        for task, n in received.items():
            assert rows[task] >= n, f"{where}: {task} received {n} requests, audited {rows[task]}"
            assert stale[task] >= n - 1, (
                f"{where}: {task} received {n - 1} extra requests, {stale[task]} unresolved rows"
            )
        assert len(audit) >= sum(received.values())
        assert comparable(report_json(chaos, run_id)) == comparable(report_json(reference, reference_id)), (
            f"{where}: the final report differs from the uninterrupted run's"
        )
        self.figures["rounds"] += 1
        self.figures["tasks"] += len(received)
        self.figures["requests received"] += sum(received.values())
        self.figures["tasks asked once"] += sum(1 for n in received.values() if n == 1)
        self.figures["extra requests (a kill between request and stored answer)"] += sum(
            n - 1 for n in received.values()
        )
        self.figures["audit rows"] += len(audit)
        for state, n in states.items():
            self.figures[f"audit rows {state}"] += n
        self.figures["lease takeovers"] += len(takeovers)
        self.figures["attempts lost"] += 0
        self.figures["reports identical to the uninterrupted run's"] += 1


def _first_run(store: Path) -> str | None:
    if not store.exists():
        return None
    try:
        conn = sqlite3.connect(f"file:{store}?mode=ro", uri=True, timeout=5)
        try:
            row = conn.execute("SELECT id FROM runs LIMIT 1").fetchone()
        finally:
            conn.close()
    except sqlite3.Error:
        return None
    return row[0] if row else None


def soak(kills: int, tasks: int, resumers: int, seed: int, max_gap_s: float = 1.0) -> dict:
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="lease-chaos-") as folder:
        chaos = Chaos(Path(folder), resumers, seed, max_gap_s)
        try:
            landed, number = 0, 0
            while landed < kills:
                landed += chaos.round(number, tasks, kills - landed)
                number += 1
        finally:
            chaos.close()
    return {
        "kills": sum(chaos.kills.values()),
        "kills by signal": dict(chaos.kills),
        "exit codes": dict(sorted(chaos.exits.items())),
        **dict(chaos.figures),
        "wall_s": round(time.monotonic() - started, 1),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kills", type=int, default=1000, help="signals that must land (default 1000)")
    parser.add_argument("--tasks", type=int, default=300, help="tasks per round (default 300)")
    parser.add_argument("--resumers", type=int, default=3, help="resumers kept trying at once (default 3)")
    parser.add_argument("--seed", type=int, default=35)
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    figures = soak(args.kills, args.tasks, args.resumers, args.seed)
    if args.json:
        print(json.dumps(figures, indent=2))
    else:
        for key, value in figures.items():
            print(f"{key}: {value}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Today's spend from the managed gateway's traffic log: what reading it costs a view.

A synthetic traffic log of `--lines` requests (LiteLLM-style JSON lines spread over 30 days,
across `--workloads` aliases) sits where `gateway up` records it; a store holds the test suite's
small runs with a promoted, token-priced baseline for every workload. Timed, each checkout named
with `--checkout` in turn, the order alternating, `--rounds` times:

- `models list --for SET` (one workload): the whole command's wall time, a fresh interpreter;
- the New run screen's choices (`tui.new_run_choices.read_choices`, every workload's shortlist,
  the view the TUI reads once it opens), in a fresh interpreter, its own time.

    PYTHONPATH=. .venv/bin/python bench/bench_gateway_spend.py --checkout /tmp/before --checkout . \
        [--lines 50000] [--workloads 5] [--rounds 5]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from compare_tui.store import DecisionRecord  # noqa: E402 (after the path)
from compare_tui.vocabulary import SpendSource  # noqa: E402
from tests.tui.test_tui_data import SET_NAME, build_store, write_catalogue  # noqa: E402

CHOICES = """
import sys, time
from pathlib import Path
from compare_tui.store import Store
from compare_tui.tui.new_run_choices import read_choices
from compare_tui.tui.workspace import Workspace
store = Store.open(Path(sys.argv[1]))
workspace = Workspace(store, Path(sys.argv[2]), Path(sys.argv[3]), "bench", lambda endpoint: None)
start = time.perf_counter()
choices = read_choices(workspace, None)
elapsed = time.perf_counter() - start
import compare_tui
sources = sorted({str(s.today.spend_source) for s in choices.shortlists.values() if s.today})
print(elapsed, len(choices.shortlists), ",".join(sources), Path(compare_tui.__file__).parent.parent, sep="|")
store.close()
"""


def write_log(path: Path, lines: int, workloads: list[str], now: datetime) -> None:
    rng = random.Random(7)
    with path.open("w", encoding="utf-8") as log:
        for _ in range(lines):
            end = now - timedelta(seconds=rng.uniform(0, 30 * 86400))
            record = {
                "model_group": rng.choice(workloads),
                "model_id": "fake-a",
                "startTime": end.timestamp() - 1.0,
                "endTime": end.timestamp(),
                "prompt_tokens": rng.randint(20, 2000),
                "completion_tokens": rng.randint(1, 400),
                "messages": [{"role": "user", "content": "x" * rng.randint(50, 400)}],
                "response": "y" * rng.randint(10, 200),
            }
            log.write(json.dumps(record) + "\n")


def setup(folder: Path, lines: int, workloads: int) -> tuple[Path, Path, Path, dict[str, str]]:
    store, sets = build_store(folder)
    names = [f"workload-{i}" for i in range(workloads)]
    template = sets / SET_NAME
    shutil.rmtree(sets / "broken-set", ignore_errors=True)
    for i, name in enumerate(names):
        copy = sets / name
        shutil.copytree(template, copy)
        manifest = copy / "golden.toml"
        manifest.write_text(manifest.read_text().replace('workload_id = "support-mini"', f'workload_id = "{name}"'))
        store.record_decision(
            DecisionRecord(
                id=f"dec{i:013d}",
                workload_id=name,
                model="fake-a",
                kind="initial",
                reason="what we run",
                decided_at="2026-01-06T09:00:00Z",
            )
        )
    shutil.rmtree(template)
    store.close()
    catalogue = write_catalogue(folder / "models.toml")
    state = folder / "state"
    (state / "compare-tui" / "gateway").mkdir(parents=True)
    log = folder / "traffic.jsonl"
    write_log(log, lines, names, datetime.now(UTC))
    record = {
        "pid": 1, "port": 1, "provider": "openai", "model": "m", "route": "r", "key_env": "K",
        "gateway_key_env": "G", "cmdline": [], "config": "", "log": "", "started_at": 0.0,
        "traffic_log": str(log),
    }  # fmt: skip
    (state / "compare-tui" / "gateway" / "gateway.json").write_text(json.dumps(record))
    env = {**os.environ, "XDG_STATE_HOME": str(state)}
    return folder / "runs.sqlite", catalogue, sets, env


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--checkout", action="append", required=True)
    parser.add_argument("--lines", type=int, default=50_000)
    parser.add_argument("--workloads", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        store, catalogue, sets, env = setup(Path(tmp), args.lines, args.workloads)
        size = (Path(tmp) / "traffic.jsonl").stat().st_size
        print(f"log: {args.lines:,} lines, {size / 1e6:.1f} MB; {args.workloads} workloads; {args.rounds} rounds")
        timings: dict[str, dict[str, list[float]]] = {c: {"list": [], "choices": []} for c in args.checkout}
        for round_ in range(args.rounds):
            order = args.checkout if round_ % 2 == 0 else list(reversed(args.checkout))
            for checkout in order:
                run_env = {**env, "PYTHONPATH": str(Path(checkout).resolve())}
                command = [sys.executable, "-m", "compare_tui", "models", "list", "--for", str(sets / "workload-0")]
                command += ["--models", str(catalogue), "--store", str(store)]
                start = time.perf_counter()
                # From the temporary folder: `-m` and `-c` put the working folder first on the path.
                out = subprocess.run(command, env=run_env, cwd=tmp, capture_output=True, text=True, check=True)
                timings[checkout]["list"].append(time.perf_counter() - start)
                assert "traffic log" in out.stdout, out.stdout  # the spend came from the log
                out = subprocess.run(
                    [sys.executable, "-c", CHOICES, str(store), str(catalogue), str(sets)],
                    env=run_env, cwd=tmp, capture_output=True, text=True, check=True,
                )  # fmt: skip
                seconds, shortlists, sources, imported = out.stdout.strip().split("|")
                assert int(shortlists) == args.workloads and sources == str(SpendSource.GATEWAY_LOG), out.stdout
                assert Path(imported) == Path(checkout).resolve(), (imported, checkout)
                timings[checkout]["choices"].append(float(seconds))
        print("| checkout | `models list --for SET` wall s, median (min–max) | New run choices s, median (min–max) |")
        print("|---|---:|---:|")
        for checkout, measured in timings.items():
            cells = [
                f"{statistics.median(v):.2f} ({min(v):.2f}–{max(v):.2f})"
                for v in (measured["list"], measured["choices"])
            ]
            print(f"| {checkout} | {cells[0]} | {cells[1]} |")


if __name__ == "__main__":
    main()

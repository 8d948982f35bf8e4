"""The engine's CPU per attempt beside raw aiohttp's requests/s, one concurrency, in one process:
a quick probe to compare checkouts (run it from each checkout's root, alternating).

The golden set is written and loaded before the clock starts; what is timed is
`RunExecutor.execute` alone (every request, its audit rows, scoring, the store's commits).

    PYTHONPATH=. .venv/bin/python bench/bench_engine_cpu.py CONCURRENCY TASKS [ROUNDS]
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import bench_engine_overhead as overhead  # noqa: E402

from compare_tui.engine import RunExecutor, RunOverrides, prepare_run  # noqa: E402
from compare_tui.store import Store  # noqa: E402
from tests.support.builders import hosted_entry, load, write_set  # noqa: E402


def main() -> None:
    concurrency, tasks = int(sys.argv[1]), int(sys.argv[2])
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 1
    with overhead.ServerProcess() as server, tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        goldset = load(write_set(workdir / "set", {f"t{i:06d}": "The quick brown fox." for i in range(tasks)}))
        for r in range(rounds):
            raw, _ = asyncio.run(overhead.raw_aiohttp(server.url, tasks, concurrency))
            with Store.open(workdir / f"runs-{r}.sqlite") as store:
                entry = hosted_entry(server.url)
                prepared = prepare_run(store, goldset, entry, RunOverrides(concurrency=concurrency), environ={})
                wall, cpu = time.perf_counter(), time.process_time()
                asyncio.run(RunExecutor(store, prepared).execute())
                wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
            print(
                f"c={concurrency} aiohttp {raw:,.0f} engine {tasks / wall:,.0f} ratio {tasks / wall / raw:.2f} "
                f"cpu/attempt {cpu / tasks * 1e6:.0f}us",
                flush=True,
            )


if __name__ == "__main__":
    main()

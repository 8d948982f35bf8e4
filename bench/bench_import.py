"""`sets import`: time and peak memory importing 100,000 rows, per format (CSV, JSONL, Parquet).

Generates a table of 100,000 support tickets (id, prompt with quotes, commas, newlines and
non-ASCII text, expected label, a nested field in JSONL), writes it as CSV (with BOM), JSONL
and Parquet, then imports each in a fresh child process that reports its own wall time, peak
RSS (`resource.getrusage(...).ru_maxrss`) and its RSS after imports (before reading anything):
first `import_set` alone (read + build + validate every task), then the whole command (also
writing 100,000 task files and loading the set back for its digest, as `sets import` does).
Printed and written to bench/results/import.md. Never run as a timed test.

    PYTHONPATH=. python bench/bench_import.py [--rows 100000]
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import platform
import random
import subprocess
import sys
import tempfile
from pathlib import Path

RESULTS = Path(__file__).parent / "results" / "import.md"
LABELS = ["billing", "bug", "account", "other"]
WORDS = ["charged", "twice", "crash", '"save"', "offline,", "réinitialiser", "mot de passe", "✓", "refund", "login"]

CHILD = r"""
import json, resource, sys, time
from pathlib import Path
from compare_tui.importing import ImportOptions, import_set, write_imported_set
def rss_mib():
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
base = rss_mib()
source, fmt, stage, out = sys.argv[1:5]
opts = ImportOptions(format=fmt, id_column="uid", input_column="req.prompt" if fmt == "jsonl" else "prompt", expected_column="label")
start = time.perf_counter()
imported = import_set(Path(source), opts)
if stage == "command":
    from compare_tui.goldset import load_golden_set
    write_imported_set(imported, out)
    load_golden_set(out)
elapsed = time.perf_counter() - start
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"tasks": len(imported.tasks), "seconds": elapsed, "peak_mib": peak, "base_mib": base}))
"""


def generate(folder: Path, rows: int) -> dict[str, Path]:
    rnd = random.Random(1)
    records = []
    for i in range(rows):
        prompt = " ".join(rnd.choice(WORDS) for _ in range(rnd.randint(5, 30)))
        if i % 7 == 0:
            prompt += "\nsecond line"
        records.append({"uid": f"t{i:06d}", "prompt": prompt, "label": rnd.choice(LABELS)})
    paths = {"csv": folder / "t.csv", "jsonl": folder / "t.jsonl", "parquet": folder / "t.parquet"}
    with paths["csv"].open("w", encoding="utf-8-sig", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=["uid", "prompt", "label"])
        writer.writeheader()
        writer.writerows(records)
    with paths["jsonl"].open("w", encoding="utf-8") as f:
        for r in records:
            f.write(
                json.dumps({"uid": r["uid"], "req": {"prompt": r["prompt"]}, "label": r["label"]}, ensure_ascii=False)
                + "\n"
            )
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.Table.from_pylist(records), paths["parquet"])
    return paths


def measure(source: Path, fmt: str, stage: str, out: Path) -> dict:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)}
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(source), fmt, stage, str(out)],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    return json.loads(done.stdout)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=100_000)
    args = parser.parse_args()
    lines = [
        f"rows: {args.rows:,}; {platform.processor() or platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}",
        "",
        "| format | source MiB | stage | tasks | seconds | rows/s | peak RSS MiB | RSS before reading MiB |",
        "|---|---:|---|---:|---:|---:|---:|---:|",
    ]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        paths = generate(folder, args.rows)
        for fmt, path in paths.items():
            for stage in ("import_set", "command"):
                r = measure(path, fmt, stage, folder / f"out-{fmt}-{stage}")
                lines.append(
                    f"| {fmt} | {path.stat().st_size / 2**20:.1f} | {stage} | {r['tasks']:,} | {r['seconds']:.2f} | "
                    f"{r['tasks'] / r['seconds']:,.0f} | {r['peak_mib']:.0f} | {r['base_mib']:.0f} |"
                )
                print(lines[-1], flush=True)
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))


if __name__ == "__main__":
    main()

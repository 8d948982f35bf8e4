"""Harness speed: compare-tui, inspect_ai and promptfoo on the zero-delay loopback server.

    python3 bench/peers/run_speed.py [--tasks 2000] [--concurrency 1 16 64] [--rounds 1]

Starts `python -m tests.support.fake_openai --port 0 --mode zero-delay` (every chat request
answered at once with "The quick brown fox."), translates an N-task exact-match set for
all three tools (translate.py speed), then, per concurrency, runs the tools alternated
A B C A B C … so machine drift hits each alike. Per run: tasks/s, wall time, client CPU
seconds and peak RSS of the tool's process tree (os.wait4 rusage; the server is a separate
process and is not counted). Every tool persists its results as it would for a user
(compare-tui: SQLite store; inspect_ai: a JSON eval log; promptfoo: its SQLite DB + --output).
Writes bench/results/peers_speed.md and .json. The real-server half (wall time against the
server's own busy time) is measured by run_correctness.py, whose runs use the slot count."""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import peer_envs  # noqa: E402
from peer_runs import HERE, PROJECT_PY, ROOT, WORK, run_compare_tui, run_inspect, run_promptfoo  # noqa: E402

RESULTS = ROOT / "bench" / "results"
MODEL = "fake-model"


def start_fake() -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen(
        [PROJECT_PY, "-m", "tests.support.fake_openai", "--port", "0", "--mode", "zero-delay"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    return proc, proc.stdout.readline().strip()


def write_catalogue(url: str) -> Path:
    path = WORK / "fake-models.toml"
    path.write_text(f"""[[model]]
name = "fake"
kind = "hosted"
endpoint = "{url}"
model = "{MODEL}"
revision = "2026-12-01"
weights_digest = "sha256:{"0" * 64}"
[model.cost]
basis = "token_price"
usd_per_mtok_input = 1.0
usd_per_mtok_output = 2.0
captured = "2026-12-01"
source = "bench"
""")
    return path


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tasks", type=int, default=2000)
    ap.add_argument("--concurrency", type=int, nargs="+", default=[1, 16, 64])
    ap.add_argument("--rounds", type=int, default=1, help="ABC repetitions per concurrency")
    args = ap.parse_args(argv)
    WORK.mkdir(exist_ok=True)
    peer_envs.ensure()
    versions = peer_envs.versions()
    server, url = start_fake()
    try:
        subprocess.run(
            [
                PROJECT_PY,
                HERE / "translate.py",
                "speed",
                "--tasks",
                str(args.tasks),
                "--base-url",
                url,
                "--model",
                MODEL,
            ],
            check=True,
        )
        gen = HERE / "generated" / f"speed-{args.tasks}"
        catalogue = write_catalogue(url)
        tools = {
            "compare-tui": lambda c, tag: run_compare_tui(gen, catalogue, "fake", c, tag),
            "inspect_ai": lambda c, tag: run_inspect(gen, url, MODEL, c, 64, tag),
            "promptfoo": lambda c, tag: run_promptfoo(gen, c, tag),
        }
        runs = []
        for conc in args.concurrency:
            for rnd in range(args.rounds):
                for tool, go in tools.items():
                    tag = f"speed-{tool}-c{conc}-r{rnd}"
                    print(f"[speed] {tag} ...", flush=True)
                    r = go(conc, tag)
                    passed = sum(o == "pass" for o, _ in r.pop("tasks").values())
                    r |= {
                        "tool": tool,
                        "concurrency": conc,
                        "round": rnd,
                        "passed": passed,
                        "tasks_per_s": args.tasks / r["wall_s"],
                    }
                    print(
                        f"[speed] {tag}: rc {r['rc']} {r['wall_s']:.1f} s {r['tasks_per_s']:.1f}/s "
                        f"cpu {r['cpu_s']:.1f} s rss {r['peak_rss_mib']:.0f} MiB pass {passed}",
                        flush=True,
                    )
                    runs.append(r)
    finally:
        server.terminate()
        server.wait()
    (RESULTS / "peers_speed.json").write_text(
        json.dumps({"versions": versions, "tasks": args.tasks, "runs": runs}, indent=1)
    )
    md = [
        f"# Peers: harness speed on the zero-delay loopback server ({args.tasks} tasks, "
        f"{args.rounds} round(s) per concurrency, tools alternated ABC)",
        "",
        f"Versions: {', '.join(f'{k} {v}' for k, v in versions.items())}",
        "",
        "| concurrency | tool | tasks/s | wall s | client CPU s | CPU ms/task | peak RSS MiB | passed | rc |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for conc in args.concurrency:
        for tool in tools:
            rs = [r for r in runs if r["tool"] == tool and r["concurrency"] == conc]
            med = lambda k: statistics.median(r[k] for r in rs)  # noqa: E731
            md.append(
                f"| {conc} | {tool} | {med('tasks_per_s'):.1f} | {med('wall_s'):.1f} | {med('cpu_s'):.1f} | "
                f"{1000 * med('cpu_s') / args.tasks:.2f} | {max(r['peak_rss_mib'] for r in rs):.0f} | "
                f"{min(r['passed'] for r in rs)}/{args.tasks} | {','.join(str(r['rc']) for r in rs)} |"
            )
    md += ["", "Ratios (compare-tui tasks/s ÷ peer tasks/s, medians):", ""]
    for conc in args.concurrency:
        tps = {
            t: statistics.median(r["tasks_per_s"] for r in runs if r["tool"] == t and r["concurrency"] == conc)
            for t in tools
        }
        md.append(
            f"- concurrency {conc}: vs inspect_ai ×{tps['compare-tui'] / tps['inspect_ai']:.2f}, "
            f"vs promptfoo ×{tps['compare-tui'] / tps['promptfoo']:.2f}"
        )
    md += ["", "Commands (exact argv; the fake server's port and the concurrency vary):", ""]
    for tool in tools:
        r = next(r for r in runs if r["tool"] == tool)
        md.append(f"- {tool}: `{' '.join(r['argv'])}`")
    (RESULTS / "peers_speed.md").write_text("\n".join(md) + "\n")
    print("\n".join(md))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

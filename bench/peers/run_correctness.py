"""Correctness cross-check and harness overhead: compare-tui, inspect_ai and promptfoo on the
same local llama.cpp model, the same translated tasks, temperature 0, the same max_tokens.

    python3 bench/peers/run_correctness.py [--model smollm2-135m] [--max-tokens 64]

Starts (or reuses) `compare-tui local up --model M` under its own state dir
(bench/peers/work/state), translates the sample sets (translate.py xcheck), runs the three
tools one after another at the server's slot count, and writes
bench/results/peers_correctness.md (+ .json): a per-task pass/fail table, the agreement
figure, an automatic first classification of every disagreement, and the harness overhead:
each tool's wall time against the server's own busy time, the sum of `total time`
(prompt eval + eval) the server logged for that tool's requests, divided by its slots."""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import peer_envs  # noqa: E402
from peer_runs import HERE, PROJECT_PY, ROOT, WORK, run_compare_tui, run_inspect, run_promptfoo  # noqa: E402

RESULTS = ROOT / "bench" / "results"
_TOTAL = re.compile(r"total time =\s+([0-9.]+) ms")


def local_server(model: str) -> tuple[str, Path, Path, int]:
    """(endpoint, catalogue, server log, slots) of our own llama-server for `model`."""
    env = os.environ | {"COMPARE_TUI_STATE_DIR": str(WORK / "state")}
    cmd = [PROJECT_PY, "-m", "compare_tui", "local"]
    status = json.loads(
        subprocess.run([*cmd, "status", "--json"], env=env, capture_output=True, text=True).stdout or "[]"
    )
    mine = [s for s in status if s["name"] == model and s["running"]]
    if not mine:
        subprocess.run([*cmd, "up", "--model", model], env=env, check=True)
        status = json.loads(subprocess.run([*cmd, "status", "--json"], env=env, capture_output=True, text=True).stdout)
        mine = [s for s in status if s["name"] == model and s["running"]]
    server = mine[0]
    props = json.loads(urllib.request.urlopen(server["endpoint"].removesuffix("/v1") + "/props", timeout=30).read())
    return (
        server["endpoint"],
        WORK / "state" / "local" / "models.toml",
        Path(server["log_path"]),
        int(props["total_slots"]),
    )


def server_busy_ms(log: Path, start: int) -> tuple[float, int]:
    """Sum of the server's `total time` lines written after byte `start`, and how many."""
    with open(log, "rb") as f:
        f.seek(start)
        values = [float(m.group(1)) for m in _TOTAL.finditer(f.read().decode("utf-8", "replace"))]
    return sum(values), len(values)


def classify(ids: list[str], runs: dict[str, dict]) -> list[dict]:
    """One row per task; disagreements get a first, mechanical explanation."""
    rows = []
    for tid in ids:
        got = {tool: runs[tool]["tasks"].get(tid, ("missing", "")) for tool in runs}
        outcomes = {tool: o for tool, (o, _) in got.items()}
        answers = {tool: a for tool, (_, a) in got.items()}
        agree = len(set(outcomes.values())) == 1
        why = ""
        if not agree:
            if any(o in ("error", "missing") for o in outcomes.values()):
                why = "a tool recorded an error / no answer"
            elif len({(a or "").strip() for a in answers.values()}) > 1:
                why = "different answer text for the same request (server non-determinism or a request difference)"
            else:
                why = "same answer text, different verdict: scoring-rule difference"
        rows.append({"task": tid, "outcomes": outcomes, "answers": answers, "agree": agree, "why": why})
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", default="smollm2-135m")
    ap.add_argument("--max-tokens", type=int, default=64)
    ap.add_argument("--concurrency", type=int, default=0, help="default: the server's slot count")
    args = ap.parse_args(argv)
    WORK.mkdir(exist_ok=True)
    peer_envs.ensure()
    versions = peer_envs.versions()
    endpoint, catalogue, log, slots = local_server(args.model)
    conc = args.concurrency or slots
    subprocess.run(
        [
            PROJECT_PY,
            HERE / "translate.py",
            "xcheck",
            "--base-url",
            endpoint,
            "--model",
            args.model,
            "--max-tokens",
            str(args.max_tokens),
        ],
        check=True,
    )
    gen = HERE / "generated" / "xcheck"
    ids = [t["id"] for t in json.loads((gen / "tasks.json").read_text())]
    kinds = {t["id"]: t["kind"] for t in json.loads((gen / "tasks.json").read_text())}
    runners = {
        "compare-tui": lambda: run_compare_tui(gen, catalogue, args.model, conc, "xcheck-ct"),
        "inspect_ai": lambda: run_inspect(gen, endpoint, args.model, conc, args.max_tokens, "xcheck-inspect"),
        "promptfoo": lambda: run_promptfoo(gen, conc, "xcheck-promptfoo"),
    }
    runs = {}
    for tool, go in runners.items():
        start = log.stat().st_size
        print(f"[xcheck] {tool} ...", flush=True)
        runs[tool] = go()
        busy_ms, n = server_busy_ms(log, start)
        runs[tool] |= {
            "server_busy_ms": busy_ms,
            "server_requests": n,
            "overhead_pct": 100 * (runs[tool]["wall_s"] * 1000 / (busy_ms / slots) - 1) if busy_ms else None,
        }
        print(f"[xcheck] {tool}: rc {runs[tool]['rc']}, {runs[tool]['wall_s']:.1f} s", flush=True)
    rows = classify(ids, runs)
    agreed = sum(r["agree"] for r in rows)
    (RESULTS / "peers_correctness.json").write_text(
        json.dumps(
            {
                "versions": versions,
                "endpoint": endpoint,
                "slots": slots,
                "concurrency": conc,
                "max_tokens": args.max_tokens,
                "runs": runs,
                "rows": rows,
            },
            indent=1,
            ensure_ascii=False,
        )
    )
    tools = list(runs)
    md = [
        f"# Peers: correctness cross-check ({args.model}, temperature 0, max_tokens {args.max_tokens}, "
        f"concurrency {conc} = server slots)",
        "",
        f"Versions: {', '.join(f'{k} {v}' for k, v in versions.items())}",
        "",
        f"**Agreement: {agreed}/{len(rows)} tasks ({100 * agreed / len(rows):.0f} %)** have the same outcome in all three tools.",
        "",
        "| task | scorer | " + " | ".join(tools) + " | answers (compare-tui / inspect / promptfoo) | disagreement |",
        "|---|---|" + "---|" * len(tools) + "---|---|",
    ]
    for r in rows:
        ans = " / ".join(repr((r["answers"][t] or "")[:40]) for t in tools)
        md.append(
            f"| {r['task']} | {kinds[r['task']]} | "
            + " | ".join(r["outcomes"][t] for t in tools)
            + f" | {ans.replace('|', '¦')} | {r['why']} |"
        )
    md += [
        "",
        f"## Harness overhead on the real server ({slots} slots)",
        "",
        "| tool | wall s | server busy s (sum of `total time` / slots) | requests logged | overhead % | client CPU s | peak RSS MiB |",
        "|---|---|---|---|---|---|---|",
    ]
    for t in tools:
        r = runs[t]
        ov = f"{r['overhead_pct']:.1f}" if r["overhead_pct"] is not None else "n/a"
        md.append(
            f"| {t} | {r['wall_s']:.1f} | {r['server_busy_ms'] / 1000 / slots:.1f} | {r['server_requests']} | {ov} | {r['cpu_s']:.1f} | {r['peak_rss_mib']:.0f} |"
        )
    md += ["", "Commands (exact argv):", ""] + [f"- {t}: `{' '.join(runs[t]['argv'])}`" for t in tools]
    (RESULTS / "peers_correctness.md").write_text("\n".join(md) + "\n")
    print("\n".join(md))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

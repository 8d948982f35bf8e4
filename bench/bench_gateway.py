"""What a LiteLLM gateway adds to each request: the same requests sent straight to llama-server
and through a real LiteLLM proxy in front of it, side by side in one run.

One llama-server (smollm2-135m, 1 thread, 1 slot, its own port and state dir) and one LiteLLM
proxy (the version `scripts/test.sh` provisions, `.state/litellm-venv`) on loopback. Each
task's request (the engine's own body and client: `engine.request.chat_body`,
`engine.exchange.stream_chat`) is sent both ways back to back, the order alternating, so that
both see the same load on the shared machine; temperature 0, one request at a time, after a
warm-up pass each way. Reported: TTFT and end-to-end p50 per path, the median of the paired
differences (what the gateway adds per request), and the time per completion token after the
first ((E2E − TTFT) / (completion tokens − 1)).

    PYTHONPATH=. .venv/bin/python bench/bench_gateway.py [--rounds 3] [--max-tokens 64]
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
PATHS = ("direct", "gateway")


Sample = tuple[float, float, int]
"""(TTFT ms, E2E ms, completion tokens) of one request."""


async def exchange(client, endpoint: str, body: dict, headers: dict[str, str]) -> Sample:
    from compare_tui.engine.exchange import stream_chat

    ex = await stream_chat(client, endpoint, body, headers=headers)
    ttft, e2e = (ex.acc.ttft_ms(), ex.acc.e2e_ms()) if ex.acc else (None, None)
    if ex.error_class or ttft is None or e2e is None:
        raise SystemExit(f"a request to {endpoint} failed: {ex.error_class}: {ex.error}")
    return ttft, e2e, (ex.acc.tokens()[1] or 0) if ex.acc else 0


async def measure(
    endpoints: dict[str, str], headers: dict[str, dict[str, str]], rounds: int, max_tokens: int
) -> dict[str, list[dict[str, Sample]]]:
    """Per path, one dict per round: task id → its sample."""
    from compare_tui.endpoint.client import chat_client
    from compare_tui.engine import RunOverrides
    from compare_tui.engine.request import chat_body
    from compare_tui.engine.settings import resolve_settings
    from compare_tui.goldset import load_golden_set

    goldset = load_golden_set(SET)
    settings = resolve_settings(goldset, RunOverrides(concurrency=1, max_tokens=max_tokens, temperature=0.0))
    bodies = {task.id: chat_body(task, MODEL, settings) for task in goldset.tasks}
    passes: dict[str, list[dict[str, Sample]]] = {p: [] for p in PATHS}
    async with chat_client(timeout_s=settings.timeout_s) as client:
        for path in PATHS:  # warm-up: the server's prompt cache, the proxy's first requests
            for body in bodies.values():
                await exchange(client, endpoints[path], body, headers[path])
        for round_ in range(rounds):
            for path in PATHS:
                passes[path].append({})
            for n, (task_id, body) in enumerate(bodies.items()):
                order = PATHS if (round_ + n) % 2 == 0 else PATHS[::-1]
                for path in order:
                    passes[path][-1][task_id] = await exchange(client, endpoints[path], body, headers[path])
            print(f"round {round_ + 1} of {rounds} done", flush=True)
    return passes


def per_token(ttft: float, e2e: float, tokens: int) -> float | None:
    return (e2e - ttft) / (tokens - 1) if tokens > 1 else None


def table(passes: dict[str, list[dict[str, Sample]]]) -> list[str]:
    samples: dict[str, dict[str, list[float]]] = {p: {"ttft": [], "e2e": [], "tok": []} for p in PATHS}
    added: dict[str, list[float]] = {"ttft": [], "e2e": [], "tok": []}
    for direct, through in zip(passes["direct"], passes["gateway"], strict=True):
        for task in direct.keys() & through.keys():
            for path, row in (("direct", direct[task]), ("gateway", through[task])):
                samples[path]["ttft"].append(row[0])
                samples[path]["e2e"].append(row[1])
                if (t := per_token(*row)) is not None:
                    samples[path]["tok"].append(t)
            d, g = direct[task], through[task]
            added["ttft"].append(g[0] - d[0])
            added["e2e"].append(g[1] - d[1])
            if d[2] == g[2] and (td := per_token(*d)) is not None and (tg := per_token(*g)) is not None:
                added["tok"].append(tg - td)
    med = statistics.median
    lines = [
        "| figure | direct p50 | gateway p50 | gateway / direct | added by the gateway (median of paired differences) | pairs |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for key, label in (
        ("ttft", "TTFT ms"),
        ("e2e", "end-to-end ms"),
        ("tok", "ms per completion token after the first"),
    ):
        d, g = med(samples["direct"][key]), med(samples["gateway"][key])
        lines.append(f"| {label} | {d:.1f} | {g:.1f} | {g / d:.2f} | {med(added[key]):+.1f} | {len(added[key])} |")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--max-tokens", type=int, default=64)
    args = parser.parse_args()

    from compare_tui import local
    from tests.support.litellm_proxy import LiteLLMProxy, free_port

    with tempfile.TemporaryDirectory(prefix="bench-gateway-") as tmp:
        work = Path(tmp)
        os.environ["COMPARE_TUI_STATE_DIR"] = str(work / "state")
        cluster = local.up(
            [MODEL], parallel=1, ctx=2048, threads=1, port=free_port(), catalogue_path=work / "models.toml"
        )
        proxy = LiteLLMProxy(work / "litellm", {MODEL: cluster.server(MODEL).endpoint})
        try:
            proxy.start()
            endpoints = {"direct": cluster.server(MODEL).endpoint, "gateway": proxy.url}
            headers = {"direct": {}, "gateway": {"Authorization": f"Bearer {proxy.master_key}"}}
            passes = asyncio.run(measure(endpoints, headers, args.rounds, args.max_tokens))
        finally:
            proxy.stop()
            local.down([MODEL])
    load = os.getloadavg()
    lines = [
        "# Gateway vs direct: what a LiteLLM proxy adds per request",
        "",
        f"Command: `PYTHONPATH=. .venv/bin/python bench/bench_gateway.py --rounds {args.rounds} --max-tokens {args.max_tokens}`",
        f"Measured {datetime.now(UTC):%Y-%m-%d %H:%M} UTC; load average {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f} on "
        f"{os.cpu_count()} cores shared with other engineers' work: absolute figures are noisy, the paired differences less so.",
        f"support-triage (21 tasks) on smollm2-135m (llama-server, 1 thread, 1 slot), straight and through LiteLLM "
        f"1.108.7 on loopback; one request at a time, temperature 0, max_tokens {args.max_tokens}; {args.rounds} rounds "
        "after a warm-up pass each way; each task sent both ways back to back, the order alternating.",
        "",
        *table(passes),
    ]
    write_section("gateway", lines)


if __name__ == "__main__":
    main()

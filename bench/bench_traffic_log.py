"""What the gateway's traffic-log callback (`local/traffic_log.py`) adds to each request: two
real LiteLLM proxies (the version `scripts/test.sh` provisions) started from the managed
gateway's own config, one with `litellm_settings.callbacks` naming the callback and one without,
in front of one zero-delay fake OpenAI server on loopback (no model time hides the cost).

The same chat request (a short user message holding an e-mail address and a key-shaped string,
so the redaction has work to do) is sent to both, one at a time, the order alternating, after a
warm-up pass each. Reported: end-to-end p50 and p90 per proxy, the median of the paired
differences (what the callback adds per request), and the log lines written (one per request).

    PYTHONPATH=. .venv/bin/python bench/bench_traffic_log.py [--requests 300]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from compare_tui.local import gateway  # noqa: E402 (after the path)
from tests.support.fake_openai import FakeServer  # noqa: E402
from tests.support.litellm_proxy import free_port, litellm_executable  # noqa: E402

GATEWAY_KEY = "sk-bench-" + "0" * 32
BODY = {
    "model": "route",
    "messages": [{"role": "user", "content": "Reach me at ana@example.com; my key is sk-proj-" + "Q9z" * 12}],
    "max_tokens": 16,
}


def start(folder: Path, upstream: str, callback: bool) -> tuple[subprocess.Popen[bytes], int, Path]:
    folder.mkdir(parents=True)
    config = json.loads(gateway.config_text("openai", "fake", "route", "UPSTREAM_KEY", upstream))
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(folder),
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "NO_PROXY": "*",
        "UPSTREAM_KEY": "sk-none",
        "LITELLM_MASTER_KEY": GATEWAY_KEY,
    }
    traffic = folder / "traffic.jsonl"
    if callback:
        env.update(gateway.traffic_env(gateway.install_traffic_log(folder)))
    else:
        config["litellm_settings"].pop("callbacks")
    (folder / "config.yaml").write_text(json.dumps(config))
    port = free_port()
    cmd = [
        str(litellm_executable()),
        "--config",
        str(folder / "config.yaml"),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
    ]
    with (folder / "litellm.log").open("wb") as log:
        process = subprocess.Popen(
            cmd, cwd=folder, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
    deadline = time.monotonic() + gateway.START_TIMEOUT_S
    while time.monotonic() < deadline:
        if gateway._healthy(port):
            return process, port, traffic
        time.sleep(0.5)
    raise SystemExit(f"the proxy in {folder} did not start")


def send(client: httpx.Client, port: int) -> float:
    started = time.perf_counter()
    response = client.post(
        f"http://127.0.0.1:{port}/v1/chat/completions", json=BODY, headers={"Authorization": f"Bearer {GATEWAY_KEY}"}
    )
    response.raise_for_status()
    return (time.perf_counter() - started) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=300)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, FakeServer(mode="zero-delay") as server:
        processes = {}
        try:
            for name, callback in (("without", False), ("with", True)):
                processes[name] = start(Path(tmp) / name, server.url, callback)
            times: dict[str, list[float]] = {"without": [], "with": []}
            with httpx.Client(trust_env=False, timeout=30) as client:
                for name in times:  # warm-up
                    for _ in range(20):
                        send(client, processes[name][1])
                for i in range(args.requests):
                    order = ("without", "with") if i % 2 == 0 else ("with", "without")
                    for name in order:
                        times[name].append(send(client, processes[name][1]))
            time.sleep(1)
            lines = sum(1 for _ in processes["with"][2].open()) if processes["with"][2].exists() else 0
        finally:
            for process, _, _ in processes.values():
                os.killpg(process.pid, signal.SIGTERM)
                process.wait(timeout=30)
    diffs = [w - wo for w, wo in zip(times["with"], times["without"], strict=True)]

    def q(values: list[float], p: float) -> float:
        return statistics.quantiles(values, n=100)[int(p) - 1]

    print(f"requests per proxy: {args.requests} (after 20 warm-up); log lines written: {lines} (warm-up included)")
    print("| proxy | E2E p50 ms | E2E p90 ms |")
    print("|---|---:|---:|")
    for name in ("without", "with"):
        print(f"| {name} the callback | {statistics.median(times[name]):.2f} | {q(times[name], 90):.2f} |")
    print(f"added by the callback, median of paired differences: {statistics.median(diffs):.2f} ms")


if __name__ == "__main__":
    main()

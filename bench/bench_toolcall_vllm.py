"""The official tool-call suite on the bundled Qwen behind llama.cpp and behind vLLM, side by side.

llama.cpp: `qwen2.5-coder-0.5b` (GGUF) started as `compare-tui local up` starts it (`--jinja`,
compare-tui's tool-aware chat template). vLLM: the bf16 folder `scripts/provision_vllm.sh`
converted from the same GGUF, served with `--enable-auto-tool-choice --tool-call-parser hermes`
(Qwen writes `<tool_call>` blocks) and the model's own chat template. The suite's defaults
(max_tokens, temperature 0), the CLI's settings otherwise; one stack after the other.

    PYTHONPATH=. .venv/bin/python bench/bench_toolcall_vllm.py

Needs `bash scripts/provision_vllm.sh` first.
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.collect import write_section  # noqa: E402 (after the path)

MODEL = "qwen2.5-coder-0.5b"
STACKS = ("llama.cpp", "vLLM hermes")


def _run(entry) -> dict[str, str]:
    """scenario id → its cell ("✓ pass", "✗ fail (text)", …), as `compare-tui toolcall` prints it."""
    from compare_tui.engine.settings import RunSettings
    from compare_tui.toolcall import RunRequest, execute, official_suite
    from compare_tui.toolcall.results.table import SYMBOLS

    suite = official_suite()
    settings = RunSettings(max_tokens=int(suite.defaults.get("max_tokens", 256)), timeout_s=900, concurrency=4)
    run = asyncio.run(execute(RunRequest(entry, suite, suite.scenarios, settings)))
    return {
        r.scenario_id: f"{SYMBOLS[r.outcome]} {r.outcome.value}{' (text)' if r.written_as_text else ''}"
        for r in run.results
    }


def measure(work: Path) -> tuple[dict[str, dict[str, str]], dict[str, str]]:
    from compare_tui import local
    from compare_tui.catalogue import load_catalogue
    from compare_tui.catalogue.adding import AddRequest, add_model
    from compare_tui.toolcall import official_suite
    from tests.support.vllm_server import VllmServer, free_port

    os.environ["COMPARE_TUI_STATE_DIR"] = str(work / "state")
    cells: dict[str, dict[str, str]] = {}
    cluster = local.up([MODEL], parallel=4, ctx=8192, port=free_port(), catalogue_path=work / "llama.toml")
    try:
        cells["llama.cpp"] = _run(load_catalogue(cluster.catalogue_path).get(MODEL))
    finally:
        local.down([MODEL])
    server = VllmServer(work / "vllm", MODEL, ("--enable-auto-tool-choice", "--tool-call-parser", "hermes")).start()
    try:
        add_model(
            AddRequest(
                name="qwen-vllm",
                endpoint=server.url,
                model=MODEL,
                weights_dir=server.folder,
                revision="converted",
                usd_per_hour=0.1,
            ),
            work / "vllm.toml",
        )
        cells["vLLM hermes"] = _run(load_catalogue(work / "vllm.toml").get("qwen-vllm"))
    finally:
        server.stop()
    names = {s.id: f"{s.id} {s.name}" for s in official_suite().scenarios}
    return cells, names


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="bench-toolcall-vllm-") as tmp:
        cells, names = measure(Path(tmp))
    load = os.getloadavg()
    lines = [
        "# Tool calls of the bundled Qwen: llama.cpp vs vLLM (hermes parser)",
        "",
        "Command: `PYTHONPATH=. .venv/bin/python bench/bench_toolcall_vllm.py`",
        f"Measured {datetime.now(UTC):%Y-%m-%d %H:%M} UTC; load average {load[0]:.1f} / {load[1]:.1f} / "
        f"{load[2]:.1f} on {os.cpu_count()} shared cores. The official suite (28 scenarios, its default "
        "max_tokens, temperature 0) on `qwen2.5-coder-0.5b`: behind the bundled llama.cpp as `local up` "
        "serves it (GGUF, `--jinja`, compare-tui's tool-aware template), and behind vLLM 0.32.0 CPU (bf16 "
        "folder converted from the same GGUF, the model's own chat template, `--enable-auto-tool-choice "
        "--tool-call-parser hermes`). Pass counts, not speed: each outcome is the model-plus-stack's answer.",
        "",
        "| scenario | " + " | ".join(STACKS) + " |",
        "|---|" + "---|" * len(STACKS),
    ]
    for scenario_id, name in names.items():
        lines.append(f"| {name} | " + " | ".join(cells[s].get(scenario_id, "–") for s in STACKS) + " |")
    totals = []
    for stack in STACKS:
        counts = Counter(cell.split(" ", 1)[1] for cell in cells[stack].values())
        totals.append("**" + ", ".join(f"{n} {word}" for word, n in sorted(counts.items())) + "**")
    lines.append("| **total** | " + " | ".join(totals) + " |")
    write_section("toolcall_vllm", lines)


if __name__ == "__main__":
    main()

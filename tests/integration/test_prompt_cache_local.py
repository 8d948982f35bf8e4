"""The prompt cache and tool rendering against a real llama-server (issue 46, items 4 and 5).

One server of its own (SmolLM2, `--threads 1`, 2 slots; `test_serving_identity_local`'s fixture). The same set run twice minutes apart
meets a warm cache the second time: the answers say so (`timings.cache_n`, stored per attempt),
and the report of the two runs says their Δ TTFT is partly the cache's. Run twice with
`--prompt-cache cold`, no prompt token comes from the cache and no caveat fires. And SmolLM2's
own template drops the tools a request offers, which `/apply-template` shows without generating.
"""

from __future__ import annotations

import json

import pytest

from compare_tui.engine.tools_reach import tools_reach_now
from compare_tui.store import Store
from tests.core.experiment.test_experiment_helpers import cli
from tests.goldset_factory import make_set, manifest_data, task_data
from tests.integration import test_serving_identity_local as identity
from tests.integration.test_serving_identity_local import ALIAS, _add

pytestmark = pytest.mark.integration

server = identity.server
"""A fixture: one SmolLM2 llama-server of this test's own (`--threads 1`, 2 slots)."""

SYSTEM = "You are the triage desk of a web shop. " * 12 + "Answer with one word: billing, bug, account or other."
TOOL = {
    "type": "function",
    "function": {
        "name": "create_ticket",
        "parameters": {"type": "object", "properties": {"title": {"type": "string"}}},
    },
}


def _runs(tmp_path, catalogue, goldset, *extra: str) -> str:
    done = cli(
        "run", str(goldset), "--model", "smol", "--models", str(catalogue), "--store", str(tmp_path / "runs.sqlite"),
        "--concurrency", "1", "--json", *extra,
    )  # fmt: skip
    assert done.code in (0, 1), done.err
    [row] = json.loads(done.out)["runs"]
    return row["id"]


def test_a_warm_cache_is_measured_and_named_and_cold_runs_compare_fairly(server, tmp_path):
    catalogue = tmp_path / "models.toml"
    assert _add(server, "smol", server.model_file.parent, catalogue).code == 0
    goldset = make_set(
        tmp_path / "set",
        manifest=manifest_data(run={"attempts": 1, "temperature": 0.0, "max_tokens": 4}),
        tasks={
            f"t{n}.toml": task_data(f"t{n}", input={"system": SYSTEM, "prompt": f"Ticket {n}: my parcel {n} is late."})
            for n in range(3)
        },
    )
    first, second = _runs(tmp_path, catalogue, goldset), _runs(tmp_path, catalogue, goldset)
    cold_a = _runs(tmp_path, catalogue, goldset, "--prompt-cache", "cold")
    cold_b = _runs(tmp_path, catalogue, goldset, "--prompt-cache", "cold")
    with Store.open(tmp_path / "runs.sqlite") as store:
        cached = {r: [a.cached_tokens for a in store.attempts_for_run(r)] for r in (first, second, cold_a, cold_b)}
        held = store.get_run(cold_a).environment["prompt_cache"]
    # The first run's first task met an empty cache, the next ones the shared system prompt; the
    # second run meets the shared prompt from its first task on (a slot keeps its last prompt).
    assert cached[first][0] == 0 and all(c > 100 for c in cached[second]), cached
    assert sum(cached[second]) > sum(cached[first])
    assert cached[cold_a] == cached[cold_b] == [0, 0, 0]
    assert held == {"asked": "cold", "held": True, "how": "cold: cache_prompt false on every request (llama.cpp)"}

    store_arg = ("--store", str(tmp_path / "runs.sqlite"))
    unfair = cli("report", first, *store_arg, "--format", "md")  # one run: its condition in its serving block
    assert "| prompt cache | the server's own (prefix reuse as it is configured); " in unfair.out
    from compare_tui.diff import read_run_pair

    with Store.open(tmp_path / "runs.sqlite") as store:
        warm_pair = read_run_pair(store, first, second)
        cold_pair = read_run_pair(store, cold_a, cold_b)
    assert any("different prompt-cache conditions" in p for p in warm_pair.problems), warm_pair.problems
    assert not any("prompt-cache" in p for p in cold_pair.problems), cold_pair.problems


def test_smollm2s_own_template_drops_the_tools_and_the_server_shows_it(server, tmp_path):
    reach = tools_reach_now(server.url, ALIAS, [TOOL])
    assert reach is not None and not reach.reached, reach
    assert reach.how.startswith("llama.cpp POST /apply-template:")
    # A golden-set run with a tool task records it at its start; the report says so.
    catalogue = tmp_path / "models.toml"
    assert _add(server, "smol", server.model_file.parent, catalogue).code == 0
    goldset = make_set(
        tmp_path / "set",
        manifest=manifest_data(run={"attempts": 1, "temperature": 0.0, "max_tokens": 4}),
        tasks={"tool.toml": task_data("tool", input={"prompt": "Open a ticket: printer on fire.", "tools": [TOOL]})},
    )
    run_id = _runs(tmp_path, catalogue, goldset)
    md = cli("report", run_id, "--store", str(tmp_path / "runs.sqlite"), "--format", "md").out
    assert "| tools in the prompt | NO: its template drops them (llama.cpp POST /apply-template:" in md
    assert "did not reach its prompt" in md and "the model never saw them" in md

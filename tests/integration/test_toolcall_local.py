"""The tool-call suite against real llama.cpp servers (integration tier).

With Jinja templates every request shape is answered (nothing is unsupported or an error);
without them (`--no-jinja`) llama-server refuses every request that carries tools, and the
suite must say **unsupported** for each, never fail. Answers are kept short: these tests
check the measurement, not the small models (the full figures come from the CLI).
"""

from __future__ import annotations

import pytest

from compare_tui import local
from compare_tui.catalogue import load_catalogue
from compare_tui.endpoint.client import chat_client
from compare_tui.engine.exchange import chat_chunks
from compare_tui.toolcall import RunRequest, RunSettings, ToolcallOutcome, classify, execute, official_suite, select

pytestmark = pytest.mark.integration

SUITE = official_suite()
SHORT = RunSettings(max_tokens=24, timeout_s=240, concurrency=2)


@pytest.mark.parametrize("name", ["smollm2-135m", "gemma3-270m"])
async def test_a_jinja_server_answers_every_request_shape(local_cluster, name):
    entry = load_catalogue(local_cluster.catalogue_path).get(name)
    scenarios = select(SUITE.scenarios, ["S01", "S14", "S17", "S19", "S23", "S26"])
    run = await execute(RunRequest(entry, SUITE, scenarios, SHORT, {"server": "llama-server --jinja"}))
    outcomes = {r.scenario_id: r.outcome for r in run.results}
    assert set(outcomes) == {s.id for s in scenarios}
    assert not {ToolcallOutcome.ERROR, ToolcallOutcome.UNSUPPORTED} & set(outcomes.values()), [
        r.reason for r in run.results
    ]
    # Reference claim: an object tool_choice is read as "auto", so a named-but-unknown tool is
    # accepted with a 200 instead of refused: S17 fails (it is not unsupported).
    s17 = next(r for r in run.results if r.scenario_id == "S17")
    assert (s17.outcome, s17.status) == (ToolcallOutcome.FAIL, 200)
    assert any(note.startswith("llama.cpp build") for note in run.server_notes)


async def test_an_unknown_tool_choice_string_is_a_400_naming_it(local_cluster):
    # Reference claim: newer builds answer 400 (older ones 500). A value OpenAI does not define
    # matches no signature, so only the heuristic calls it unsupported, and says unconfirmed.
    server = local_cluster.server("smollm2-135m")
    body = SUITE.scenarios[0].request_body("smollm2-135m", max_tokens=4, temperature=0) | {"tool_choice": "bogus"}
    async with chat_client(timeout_s=60) as client:
        exchange = await chat_chunks(client, server.endpoint, body, timeout_s=60)
    assert exchange.status == 400 and "Invalid tool_choice" in (exchange.server_message or "")
    verdict = classify(exchange)
    assert (verdict.kind, verdict.confirmed) == ("unsupported", False)


async def test_a_server_without_jinja_makes_every_scenario_unsupported(tmp_path, monkeypatch):
    monkeypatch.setenv("COMPARE_TUI_STATE_DIR", str(tmp_path / "state"))  # apart from any other server
    try:
        cluster = local.up(["smollm2-135m"], jinja=False, parallel=1, ctx=1024, catalogue_path=tmp_path / "models.toml")
        entry = load_catalogue(cluster.catalogue_path).get("smollm2-135m")
        run = await execute(RunRequest(entry, SUITE, SUITE.scenarios, SHORT))
    finally:
        local.down()
    assert [r.outcome for r in run.results] == [ToolcallOutcome.UNSUPPORTED] * len(SUITE.scenarios)
    assert all("requires --jinja" in r.reason for r in run.results)

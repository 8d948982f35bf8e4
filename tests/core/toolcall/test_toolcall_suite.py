"""The official suite's data: versioned, digested, well-formed, fully checkable, and passable
by an ideal model (a scripted server that answers every scenario the way it asks)."""

from __future__ import annotations

import hashlib
import json
from importlib import resources

import pytest

from compare_tui.toolcall import RunSettings, ToolcallOutcome, check_value, official_suite, run_scenarios, select
from compare_tui.toolcall.checks.evaluate import scenario_checks
from compare_tui.toolcall.scenarios.suite import SUITE_DIR, canonical_json
from tests.support.fake_openai import FakeServer, ToolCall, http_error, text, tool_calls

SUITE = official_suite()


def test_version_and_digest_over_the_canonical_json_of_the_data_files():
    folder = resources.files("compare_tui.toolcall.scenarios") / "suite" / SUITE_DIR
    data = {
        name: json.loads((folder / f"{name}.json").read_text("utf-8")) for name in ("manifest", "toolbox", "scenarios")
    }
    assert SUITE.digest == "sha256:" + hashlib.sha256(canonical_json(data)).hexdigest()
    assert SUITE.version == data["manifest"]["version"] == "1.0.0"
    assert len(SUITE.scenarios) == 28 and len({s.id for s in SUITE.scenarios}) == 28


def test_the_suite_covers_every_category_and_tool_choice_form():
    assert {s.category for s in SUITE.scenarios} >= {
        "simple",
        "multiple",
        "names",
        "parallel",
        "choice",
        "irrelevance",
        "relevance",
        "multiturn",
        "stream",
    }
    assert {s.tool_choice_form for s in SUITE.scenarios} == {"auto", "none", "required", "named", "omitted"}
    assert {s.parallel_tool_calls for s in SUITE.scenarios} == {None, True, False}


def test_the_official_toolbox_is_fully_checked():
    for scenario in SUITE.scenarios:
        for tool in scenario.tools:
            report = check_value(tool.parameters, {})
            assert report.not_checked == (), (tool.name, report.not_checked)


def test_expectations_name_only_offered_tools_and_list_their_checks():
    for scenario in SUITE.scenarios:
        offered = {t.name for t in scenario.tools}
        assert {p.name for p in (*scenario.expect.match, *scenario.expect.not_repeated)} <= offered
        assert scenario_checks(scenario)


def test_select_by_id_or_name_glob():
    assert [s.id for s in select(SUITE.scenarios, ["S0[12]", "stream.*"])] == ["S01", "S02", "S26", "S27", "S28"]
    assert select(SUITE.scenarios, None) == SUITE.scenarios


def _key(body: dict) -> str:
    return json.dumps(
        [
            body["messages"],
            body.get("tool_choice", "<omitted>"),
            body["stream"],
            body.get("parallel_tool_calls"),
            [t["function"]["name"] for t in body.get("tools", [])],
        ],
        sort_keys=True,
    )


W = lambda city, **kw: ToolCall("get_weather", {"city": city, **kw})  # noqa: E731
FLIGHT = {"origin": "Boston", "destination": "Denver", "date": "2026-03-14"}
EVENT = ToolCall(
    "create_event",
    {
        "title": "Team sync",
        "attendees": ["alice@example.com", "bob@example.com"],
        "reminders": [{"minutes": 30, "method": "email"}, {"minutes": 10, "method": "popup"}],
    },
)
USD = ToolCall("convert_currency", {"amount": 100, "from": "USD", "to": "EUR"})
IDEAL = {
    "S01": tool_calls(W("Paris")),
    "S02": tool_calls(W("Paris", unit="fahrenheit")),
    "S03": tool_calls(ToolCall("search_flights", {**FLIGHT, "passengers": 2, "cabin": "economy"})),
    "S04": tool_calls(EVENT),
    "S05": tool_calls(ToolCall("get_time", "{}")),
    "S06": tool_calls(ToolCall("search_flights", FLIGHT)),
    "S07": tool_calls(
        ToolCall(
            "send_email",
            {"to": "ana@example.com", "subject": "Travel", "body": 'She said "see you in Zürich"\nThanks!'},
        )
    ),
    "S08": tool_calls(USD),
    "S09": tool_calls(ToolCall("getUser-v2", {"user_id": "42"})),
    "S10": text("I have no lookup_stock tool."),
    "S11": tool_calls(W("Paris"), W("Tokyo"), W("Lima")),
    "S12": tool_calls(W("Paris"), USD),
    "S13": tool_calls(W("Paris")),
    "S14": text("I cannot look that up."),
    "S15": tool_calls(ToolCall("get_time", {})),
    "S16": tool_calls(ToolCall("get_time", {})),
    "S17": http_error(400, "Invalid tool_choice"),
    "S18": tool_calls(W("Paris, France")),
    "S19": text("Leaves drift and fall"),
    "S20": text("I cannot book tables."),
    "S21": tool_calls(ToolCall("search_events", {"query": "fun things in Paris this weekend"})),
    "S22": text("From where, and on which date?"),
    "S23": text("It is 18 °C in Paris."),
    "S24": tool_calls(W("Rome")),
    "S25": text("Paris: 18 °C, Tokyo: 25 °C."),
    "S26": tool_calls(W("Paris"), args_chunk_chars=1),
    "S27": tool_calls(W("Paris"), W("Tokyo"), W("Lima"), interleave=True),
    "S28": tool_calls(EVENT, args_chunk_chars=3),
}


@pytest.mark.parametrize("plans, expected", [(IDEAL, "pass"), ({}, None)])
async def test_an_ideal_model_passes_every_scenario_and_a_silent_one_does_not(plans, expected):
    by_key = {_key(s.request_body("m", max_tokens=8, temperature=0)): s.id for s in SUITE.scenarios}
    assert len(by_key) == len(SUITE.scenarios)  # every scenario is a distinct request
    script = (lambda body, count: plans[by_key[_key(body)]]) if plans else None
    with FakeServer(script, default=text("")) as server:
        results = await run_scenarios(
            SUITE.scenarios, endpoint=server.url, model_id="m", settings=RunSettings(timeout_s=10, concurrency=4)
        )
    if expected:
        assert {r.scenario_id: r.reason for r in results if r.outcome is not ToolcallOutcome.PASS} == {}
    else:  # an empty answer passes only where no call is the right answer and no text is required
        passed = {r.scenario_id for r in results if r.outcome is ToolcallOutcome.PASS}
        assert passed == {"S10", "S13", "S14", "S20", "S22"}

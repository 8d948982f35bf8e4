"""A user's tool whose schema servers refuse (issue 37): noted before sending, in the run's
output and in what is stored with it; it spoils only the scenarios that offer it, which end
unsupported naming it; `--skip-invalid-tools` leaves it out and says so.

The scripted loopback server answers as llama.cpp b11434 does: a request offering a schema
with `"type": "dict"` is refused with 400 "Unable to generate parser for this template …
unrecognized type dict" (measured on the bundled server, see docs/known-limits.md).
"""

from __future__ import annotations

import json

import pytest

from compare_tui.toolcall import ToolcallOutcome, parse_tools_bytes, user_scenarios
from compare_tui.toolcall.tools.file import UserTool
from compare_tui.toolcall.tools.shapes import refused_tools, shape_notes
from tests.core.toolcall.test_toolcall_cli import toolcall
from tests.support.fake_openai import FakeServer, ToolCall, http_error, tool_calls

LLAMA_REFUSAL = (
    "Unable to generate parser for this template. Automatic parser generation failed: JSON schema error at "
    "#/properties/options: unrecognized type dict"
)
MCP = {
    "jsonrpc": "2.0",
    "id": 1,
    "result": {
        "tools": [
            {
                "name": "search_docs",
                "inputSchema": {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]},
            },
            {
                "name": "configure",
                "inputSchema": {"type": "object", "properties": {"options": {"type": "dict"}}},
            },
        ]
    },
}


def llama_like(body: dict, count: int):
    """Refuse any request whose tools hold a `dict` type; else call the first offered tool."""
    if "dict" in json.dumps(body.get("tools") or []):
        return http_error(400, LLAMA_REFUSAL)
    first = body["tools"][0]["function"]["name"]
    return tool_calls(ToolCall(first, {"query": "refunds"} if first == "search_docs" else {}))


def write_tools(tmp_path) -> str:
    path = tmp_path / "tools.json"
    path.write_text(json.dumps(MCP))
    return str(path)


def test_shapes_servers_refuse_are_found_and_others_are_not():
    def tool(parameters):
        return UserTool("t", "t", "", parameters, "openai")

    assert refused_tools([tool({"type": "object", "properties": {"a": {"type": "string"}}})]) == {}
    [note] = shape_notes(tool({"type": "object", "properties": {"o": {"type": "dict"}}}))
    assert note.refused and "unknown type 'dict' at /properties/o" in note.text and "'object'" in note.text
    [note] = shape_notes(tool({"type": "string"}))
    assert "of type 'string', not object" in note.text
    nested = {"type": "object", "properties": {"xs": {"type": "array", "items": {"type": "float"}}}}
    assert "unknown type 'float' at /properties/xs/items" in shape_notes(tool(nested))[0].text


def test_a_named_scenario_offers_its_tool_alone_and_skip_leaves_refused_tools_out():
    tools = parse_tools_bytes(json.dumps(MCP).encode())
    assert tools.refused.keys() == {"configure"}
    assert any("tool 'configure': unknown type 'dict'" in note for note in tools.notes)
    named = {s.name: [t.name for t in s.tools] for s in user_scenarios(tools)}
    assert named["user.named:search_docs"] == ["search_docs"]
    assert named["user.required"] == ["search_docs", "configure"]
    skipped = {s.name: [t.name for t in s.tools] for s in user_scenarios(tools, skip_invalid=True)}
    assert "user.named:configure" not in skipped and skipped["user.required"] == ["search_docs"]


def test_notes_are_printed_other_scenarios_unaffected_and_the_refused_one_unsupported(tmp_path, capsys):
    with FakeServer(llama_like) as server:
        code, out, err = toolcall(
            tmp_path, server.url, "--tools", write_tools(tmp_path), "--scenario", "user.*", "--json", capsys=capsys
        )
    assert code == 0, err
    assert "your tools: note: tool 'configure': unknown type 'dict' at /properties/options" in err
    assert "the scenarios offering 'configure' will likely end unsupported; --skip-invalid-tools" in err
    [run] = json.loads(out)["runs"]
    results = {r["name"]: r for r in run["results"]}
    # search_docs, offered alone, is not touched by the other tool's schema.
    assert results["user.named:search_docs"]["outcome"] == ToolcallOutcome.PASS
    for name in ("user.named:configure", "user.required", "user.irrelevance"):
        assert results[name]["outcome"] == ToolcallOutcome.UNSUPPORTED, results[name]
        assert "the tool responsible: tool 'configure': unknown type 'dict'" in results[name]["reason"]
    # What was printed before sending is kept with the run: `show` (and the TUI's table) say it.
    code, shown, _ = toolcall(tmp_path, server.url, "show", capsys=capsys)
    assert code == 0
    assert "Your tools in fake" in shown and "unknown type 'dict'" in " ".join(shown.split())


def test_skip_invalid_tools_sends_none_of_them_and_says_so(tmp_path, capsys):
    with FakeServer(llama_like) as server:
        code, out, err = toolcall(
            tmp_path, server.url, "--tools", write_tools(tmp_path), "--scenario", "user.*", "--skip-invalid-tools",
            "--json", capsys=capsys,
        )  # fmt: skip
        sent = [json.dumps(r.body.get("tools")) for r in server.requests if r.body is not None]
    assert code == 0, err
    assert "your tools: left out (--skip-invalid-tools): 'configure'" in err
    assert sent and not any("configure" in tools for tools in sent)
    [run] = json.loads(out)["runs"]
    assert {r["name"]: r["outcome"] for r in run["results"]} == {
        "user.named:search_docs": ToolcallOutcome.PASS,
        "user.auto:search_docs": ToolcallOutcome.PASS,
        "user.required": ToolcallOutcome.PASS,
        "user.irrelevance": ToolcallOutcome.FAIL,  # the script calls a tool even to chit-chat
    }


@pytest.fixture
def dict_tools_store(tmp_path):
    """A run of the user scenarios with the dict-typed tool (sync: the CLI runs its own loop)."""

    class Capture:  # the CLI helper wants capsys; this run's output is tested above
        def readouterr(self):
            class Out:
                out = err = ""

            return Out()

    with FakeServer(llama_like) as server:
        toolcall(tmp_path, server.url, "--tools", write_tools(tmp_path), "--scenario", "user.*", capsys=Capture())
    return tmp_path / "runs.sqlite"


async def test_the_tui_table_repeats_the_notes_printed_before_sending(dict_tools_store):
    from textual.widgets import Static

    from compare_tui.store import Store
    from compare_tui.tui.screens.toolcall import ToolcallScreen
    from tests.support.home_app import settle
    from tests.support.screen_host import ScreenHost

    with Store.open(dict_tools_store) as store:
        async with ScreenHost(store, ToolcallScreen).run_test(size=(140, 45)) as pilot:
            await settle(pilot)
            legend = " ".join(str(pilot.app.screen.query_one("#toolcall-legend", Static).render()).split())
    assert "Your tools in fake" in legend and "tool 'configure': unknown type 'dict' at /properties/options" in legend

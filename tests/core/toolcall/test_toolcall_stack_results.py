"""Tool calls as stack results (issue 46, item 4): every run names its template and parser,
says whether the tools reached the prompt (asked of the server, no token generated), user
tools get a `tool_choice: auto` scenario each, and a forced call ending `stop` is flagged."""

from __future__ import annotations

import json
import threading
from dataclasses import replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from compare_tui.catalogue import ModelEntry
from compare_tui.engine.tools_reach import ToolsReach, tools_reach_now
from compare_tui.store import Store
from compare_tui.toolcall import ToolcallStore, build_table, parse_tools_bytes, user_scenarios
from compare_tui.toolcall.results.render import render_text
from compare_tui.toolcall.results.table import FORCED_ONLY, detail_lines
from compare_tui.toolcall.run.launch import serving_of
from tests.core.toolcall.test_toolcall_cli import toolcall
from tests.support.fake_openai import FakeServer, ToolCall, text, tool_calls

TOOL = {"type": "function", "function": {"name": "create_ticket", "parameters": {"type": "object", "properties": {}}}}


class _Renderer(BaseHTTPRequestHandler):
    """llama.cpp's /apply-template or vLLM's /tokenize, with a template that shows the tools or
    drops them (`server.drops`)."""

    def do_POST(self) -> None:  # noqa: N802 (http.server's name)
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        shown = "" if self.server.drops or not body.get("tools") else json.dumps(body["tools"])  # type: ignore[attr-defined]
        prompt = f"<|user|>ping{shown}<|assistant|>"
        if self.path == "/apply-template" and self.server.stack == "llama.cpp":  # type: ignore[attr-defined]
            answer: dict = {"prompt": prompt}
        elif self.path == "/tokenize" and self.server.stack == "vLLM":  # type: ignore[attr-defined]
            answer = {"count": len(prompt) // 4, "tokens": [], "max_model_len": 4096}
        else:
            self.send_response(404)
            self.end_headers()
            return
        data = json.dumps(answer).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args) -> None:
        pass


@pytest.fixture
def renderer():
    servers = []

    def start(stack: str, drops: bool) -> str:
        server = ThreadingHTTPServer(("127.0.0.1", 0), _Renderer)
        server.stack, server.drops = stack, drops  # type: ignore[attr-defined]
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return f"http://127.0.0.1:{server.server_address[1]}/v1"

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize("stack", ["llama.cpp", "vLLM"])
def test_the_server_says_whether_the_tools_reached_the_prompt(renderer, stack):
    shown = tools_reach_now(renderer(stack, drops=False), "m", [TOOL])
    dropped = tools_reach_now(renderer(stack, drops=True), "m", [TOOL])
    assert shown is not None and shown.reached and dropped is not None and not dropped.reached
    word = "characters" if stack == "llama.cpp" else "prompt tokens"
    assert "with the tools" in dropped.how and word in dropped.how
    assert tools_reach_now("http://127.0.0.1:9/v1", "m", [TOOL]) is None  # nobody to ask: unchecked


def _entry(**serving) -> ModelEntry:
    return ModelEntry.model_validate(
        {
            "name": "m",
            "kind": "local",
            "endpoint": "http://127.0.0.1:9/v1",
            "model": "m",
            "revision": "r",
            "weights_digest": "sha256:" + "0" * 64,
            "serving": serving,
        }
    )


def test_template_and_parser_are_named_as_the_catalogue_states_them_and_compare_tuis_own_template_so():
    llama = serving_of(
        _entry(
            stack="llama.cpp llama-server",
            tool_parser="jinja",
            extra={"chat_template_file": "qwen2.5-coder-tools.jinja"},
        ),
        ToolsReach(True, "llama.cpp POST /apply-template: 900 characters with the tools, 60 without"),
    )
    assert llama["template"] == "compare-tui's shipped qwen2.5-coder-tools.jinja (stated, not checked)"
    assert llama["parser"] == "jinja (stated, not checked)" and llama["tools_reach"]["reached"] is True
    vllm = serving_of(_entry(stack="vLLM 0.32", tool_parser="hermes"), None)
    assert vllm["parser"] == "hermes (stated, not checked)" and vllm["template"] == "not stated"
    assert "tools_reach" not in vllm
    bare = serving_of(_entry(), None)
    assert bare["parser"] == "not stated (the server does not report its tool-call parser)"


def test_every_run_names_template_and_parser_and_a_run_whose_tools_were_dropped_gets_a_caveat(tmp_path, capsys):
    with FakeServer(default=tool_calls(ToolCall("get_weather", {"city": "Paris"}))) as server:
        code, out, err = toolcall(tmp_path, server.url, "--scenario", "S01", capsys=capsys)
    assert code == 0, err
    assert "    template not stated; parser not stated (the server does not report its tool-call parser)" in out
    with Store.open(tmp_path / "runs.sqlite") as store:
        [header] = ToolcallStore(store).list_runs()
        run = ToolcallStore(store).get(header.id)
    reach = {"reached": False, "how": "vLLM POST /tokenize: 39 prompt tokens with the tools, 39 without"}
    dropped = replace(run, serving=run.serving | {"tools_reach": reach})
    table = build_table([dropped])
    caveat = [c for c in table.caveats if "did not reach the prompt" in c]
    assert (
        caveat
        and "the model never saw them" in caveat[0]
        and "39 prompt tokens with the tools, 39 without" in caveat[0]
    )
    detail = detail_lines(dropped.results[0], table.columns[0])
    assert detail[2].startswith("template not stated; parser") and detail[3].startswith("tools reach the prompt: NO")
    assert "tools reach the prompt: NO: the model never saw them" in render_text([dropped])


MCP = json.dumps(
    {
        "tools": [
            {
                "name": "create_ticket",
                "description": "Open a support ticket for a customer's problem.",
                "inputSchema": {"type": "object", "properties": {"title": {"type": "string"}}, "required": ["title"]},
            }
        ]
    }
).encode()


def test_each_user_tool_gets_an_auto_scenario_aimed_at_it_beside_the_forced_one():
    scenarios = user_scenarios(parse_tools_bytes(MCP, "tools.json"))
    assert [(s.id, s.name, s.tool_choice) for s in scenarios][:2] == [
        ("T01", "user.named:create_ticket", {"type": "function", "function": {"name": "create_ticket"}}),
        ("T01-auto", "user.auto:create_ticket", "auto"),
    ]
    auto = scenarios[1]
    assert "Open a support ticket for a customer's problem." in auto.messages[0]["content"]
    assert [t.name for t in auto.tools] == ["create_ticket"] and auto.expect.min_calls == 1


def _hermes_like(body: dict, count: int):
    """A stack that parses a call only when it is forced: auto gets the call back as text, and a
    forced call ends `stop`."""
    if body.get("tool_choice") == "auto":
        return text('<tool_call>{"name": "create_ticket", "arguments": {"title": "x"}}</tool_call>')
    return tool_calls(ToolCall("create_ticket", {"title": "Printer on fire"}), finish_reason="stop")


def test_auto_answered_with_text_fails_while_the_forced_call_passes_and_is_flagged(tmp_path, capsys):
    tools = tmp_path / "tools.json"
    tools.write_bytes(MCP)
    with FakeServer(_hermes_like) as server:
        code, out, err = toolcall(
            tmp_path, server.url, "--tools", str(tools), "--scenario", "T*", "--json", capsys=capsys
        )
    assert code == 0, err
    document = json.loads(out)
    results = {r["name"]: r for r in document["runs"][0]["results"]}
    assert results["user.named:create_ticket"]["outcome"] == "pass"
    assert results["user.auto:create_ticket"]["outcome"] == "fail"
    assert any('finish_reason "stop"' in n for n in results["user.named:create_ticket"]["notes"])
    assert any("forced call(s) ended with finish_reason" in c and "T01" in c for c in document["caveats"])
    assert FORCED_ONLY not in document["caveats"]  # auto was tested


def test_a_run_of_forced_user_scenarios_only_says_only_forced_calls_were_tested(tmp_path, capsys):
    tools = tmp_path / "tools.json"
    tools.write_bytes(MCP)
    with FakeServer(_hermes_like) as server:
        code, out, err = toolcall(tmp_path, server.url, "--tools", str(tools), "--scenario", "T01", capsys=capsys)
    assert code == 0, err
    assert "note: Your tools were tested with forced calls only" in out

"""The tools-file reader: every accepted shape, reversible name mapping, and hostile files
(malformed, huge, deeply nested, recursive $ref) rejected or bounded with a clear message.
"""

from __future__ import annotations

import json
import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compare_tui.toolcall import ToolsFileError, check_value, parse_tools_bytes, read_tools_file, user_scenarios
from compare_tui.toolcall.tools.file import MAX_FILE_BYTES, MAX_TOOLS
from compare_tui.toolcall.tools.names import WIRE_NAME, map_names

FUZZ = settings(
    max_examples=int(os.environ.get("COMPARE_TUI_FUZZ_EXAMPLES", "200")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)

SCHEMA = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}
FUNCTION = {"name": "read_file", "description": "Read a file", "parameters": SCHEMA}
MCP_TOOL = {
    "name": "files.read",
    "title": "Read a file",
    "inputSchema": SCHEMA,
    "annotations": {"readOnlyHint": True},
    "outputSchema": {"type": "object"},
}


def parse(value) -> object:
    return parse_tools_bytes(json.dumps(value).encode())


@pytest.mark.parametrize(
    "document, source, shape",
    [
        ({"tools": [{"type": "function", "function": FUNCTION}]}, "openai", "a tools array"),
        ([{"type": "function", "function": FUNCTION}], "openai", "a bare array of tools"),
        (FUNCTION, "function", "a single tool object"),
        ([FUNCTION], "function", "a bare array of tools"),
        ({"functions": [FUNCTION]}, "legacy", "legacy functions"),
        ({"jsonrpc": "2.0", "id": 1, "result": {"tools": [MCP_TOOL]}}, "mcp", "MCP tools/list response"),
        ({"tools": [MCP_TOOL], "nextCursor": None}, "mcp", "MCP tools/list result"),
        ([MCP_TOOL], "mcp", "a bare array of tools"),
    ],
)
def test_every_accepted_shape(document, source, shape):
    tools = parse(document)
    [tool] = tools.tools
    assert tool.source == source and tools.shape == shape
    assert tool.parameters == SCHEMA


def test_mcp_fields_map_and_extras_are_kept_not_sent():
    [tool] = parse({"jsonrpc": "2.0", "id": 1, "result": {"tools": [MCP_TOOL]}}).tools
    assert (tool.name, tool.wire_name, tool.description) == ("files.read", "files_read", "Read a file")
    assert set(tool.extras) == {"title", "annotations", "outputSchema"}
    [scenario, *_] = user_scenarios(parse([MCP_TOOL]))
    sent = scenario.request_body("m", max_tokens=8, temperature=0)
    assert sent["tools"][0] == {
        "type": "function",
        "function": {"name": "files_read", "description": "Read a file", "parameters": SCHEMA},
    }
    assert sent["tool_choice"] == {"type": "function", "function": {"name": "files_read"}}
    assert scenario.name == "user.named:files.read"  # reported under the original name


def test_several_pages_as_an_array_or_one_after_another():
    pages = [
        {"jsonrpc": "2.0", "id": i, "result": {"tools": [{**MCP_TOOL, "name": f"t{i}"}], "nextCursor": str(i)}}
        for i in range(3)
    ]
    as_array = parse(pages)
    concatenated = parse_tools_bytes("\n".join(json.dumps(p) for p in pages).encode())
    assert [t.name for t in as_array.tools] == [t.name for t in concatenated.tools] == ["t0", "t1", "t2"]
    assert "3 pages" in as_array.shape and "3 pages" in concatenated.shape


def test_a_page_saved_twice_is_deduplicated_but_a_clash_is_refused():
    page = {"jsonrpc": "2.0", "id": 1, "result": {"tools": [MCP_TOOL]}}
    assert len(parse([page, page]).tools) == 1
    with pytest.raises(ToolsFileError, match="defined again, differently"):
        parse([MCP_TOOL, {**MCP_TOOL, "description": "other"}])


def test_names_are_mapped_reversibly_and_never_steal_a_real_name():
    names = map_names(["a.b", "a_b", "a b", "x" * 80, "x" * 81, "ok-name", "ünï", ""])
    assert names.to_wire["a_b"] == "a_b" and names.to_wire["ok-name"] == "ok-name"
    assert len(set(names.to_wire.values())) == len(names.to_wire)
    assert all(WIRE_NAME.fullmatch(w) for w in names.to_wire.values())
    assert {names.to_original[w] for w in names.to_wire.values()} == set(names.to_wire)


@pytest.mark.parametrize(
    "data, message",
    [
        (b"", "empty"),
        (b"{not json", "not valid JSON (line 1)"),
        (b"NaN", "NaN is not JSON"),
        (b"\xff\xfe", "not UTF-8"),
        (b"[" * 5000 + b"]" * 5000, "nested 5000 levels deep; the limit is 64"),
        (
            json.dumps({"jsonrpc": "2.0", "id": 1, "error": {"code": -32601, "message": "Method not found"}}).encode(),
            "JSON-RPC error response ('Method not found')",
        ),
        (json.dumps({"tools": [{"type": "retrieval"}]}).encode(), "only function tools"),
        (json.dumps({"tools": [{"inputSchema": SCHEMA}]}).encode(), "non-empty string name"),
        (json.dumps({"tools": [{"name": "x", "inputSchema": None}]}).encode(), "MCP requires an inputSchema"),
        (json.dumps({"functions": [{"name": "x", "parameters": "object"}]}).encode(), "expected a JSON Schema object"),
        (
            json.dumps({"tools": [{**FUNCTION, "name": f"t{i}"} for i in range(MAX_TOOLS + 1)]}).encode(),
            "the limit is 128",
        ),
        (json.dumps({"hello": 1}).encode(), "not a recognised shape"),
        (json.dumps({"tools": []}).encode(), "no tools found"),
    ],
)
def test_bad_files_are_refused_with_a_clear_message(data, message):
    with pytest.raises(ToolsFileError) as caught:
        parse_tools_bytes(data, "tools.json")
    assert message in str(caught.value) and str(caught.value).startswith("tools.json")


def test_a_huge_file_is_refused_before_it_is_read(tmp_path):
    path = tmp_path / "huge.json"
    path.write_bytes(b" " * (MAX_FILE_BYTES + 1))
    with pytest.raises(ToolsFileError, match="the limit is 4 MiB"):
        read_tools_file(path)
    with pytest.raises(ToolsFileError, match="cannot be read"):
        read_tools_file(tmp_path / "missing.json")


def test_a_recursive_ref_is_read_and_then_checked_within_bounds():
    recursive = {
        "name": "tree",
        "parameters": {
            "$defs": {
                "n": {"type": "object", "properties": {"kids": {"type": "array", "items": {"$ref": "#/$defs/n"}}}}
            },
            "$ref": "#/$defs/n",
        },
    }
    loop = {"name": "loop", "parameters": {"$ref": "#"}}
    tools = parse([recursive, loop])
    deep: dict = {}
    for _ in range(50):
        deep = {"kids": [deep]}
    assert check_value(tools.tools[0].parameters, deep).ok
    report = check_value(tools.tools[1].parameters, {"a": 1})
    assert report.ok and report.not_checked  # bounded, and says so


# ------------------------------------------------------------------ fuzzing

leaves = (
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=10)
)
keys = st.sampled_from(
    [
        "tools",
        "functions",
        "jsonrpc",
        "id",
        "result",
        "error",
        "name",
        "type",
        "function",
        "parameters",
        "inputSchema",
        "description",
        "title",
        "nextCursor",
        "strict",
    ]
) | st.text(max_size=6)
documents = st.recursive(
    leaves, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(keys, inner, max_size=5), max_leaves=30
)


@FUZZ
@given(documents)
def test_any_json_reads_or_fails_with_a_message(document):
    try:
        tools = parse(document)
    except ToolsFileError as exc:
        assert str(exc).strip()
        return
    assert tools.tools
    assert all(WIRE_NAME.fullmatch(t.wire_name) for t in tools.tools)
    assert len({t.wire_name for t in tools.tools}) == len(tools.tools)


@FUZZ
@given(st.binary(max_size=200))
def test_any_bytes_read_or_fail_with_a_message(data):
    try:
        parse_tools_bytes(data)
    except ToolsFileError as exc:
        assert str(exc).strip()


names = st.text(min_size=1, max_size=90)


@FUZZ
@given(
    st.lists(
        st.fixed_dictionaries({"name": names, "inputSchema": st.just({"type": "object"})}),
        min_size=1,
        max_size=8,
        unique_by=lambda t: t["name"],
    )
)
def test_any_names_map_to_unique_valid_wire_names_and_back(tools):
    read = parse({"jsonrpc": "2.0", "id": 1, "result": {"tools": tools}})
    assert [t.name for t in read.tools] == [t["name"] for t in tools]
    assert all(WIRE_NAME.fullmatch(t.wire_name) for t in read.tools)
    assert {read.names.to_original[t.wire_name] for t in read.tools} == {t["name"] for t in tools}

"""Fuzzing the parsers that read what users and servers hand us (issue 12): the tools-file
reader and the log sampler (one record, and whole log files); the SSE framer and stream
accumulator are in test_fuzz_stream.py. Whatever the input, each either returns its result or raises its own clear error
(`ToolsFileError`, `Skipped`/`SamplingError`, `SseError`/`ValueError`); nothing else escapes.
The golden-set loader is fuzzed the same way in test_goldset_fuzz.py.

Examples per test default to 200; set COMPARE_TUI_FUZZ_EXAMPLES for a soak run
(`bench/soak/fuzz_soak.sh` uses 10,000).
"""

from __future__ import annotations

import gzip
import json
import os
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compare_tui.sampling import SampleOptions, SamplingError, Skipped, read_record, sample_logs
from compare_tui.toolcall.tools.file import ToolsFile, ToolsFileError, parse_tools_bytes, read_tools_file

FUZZ = settings(
    max_examples=int(os.environ.get("COMPARE_TUI_FUZZ_EXAMPLES", "200")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large],
)

KEYS = (
    "tools type function name description parameters properties required functions jsonrpc id result "
    "nextCursor inputSchema outputSchema annotations title request response messages role content "
    "model timestamp conversation_id custom_id method url body status_code error choices message "
    "delta tool_calls index arguments finish_reason usage prompt_tokens completion_tokens timings "
    "startTime metadata tags status reasoning_content object string integer enum items $ref"
).split()
WORDS = (
    "function",
    "object",
    "string",
    "user",
    "assistant",
    "system",
    "tool",
    "developer",
    "get_weather",
    "POST",
    "/v1/chat/completions",
    "failure",
    "success",
    "2026-12-01T10:00:00Z",
    "1764583200",
    "1764583200000",
    "stop",
    "tool_calls",
    "[DONE]",
    "",
    "a" * 70,
    "ünï",
    "\x00",
)

keys = st.sampled_from(KEYS) | st.text(max_size=8)
leaves = st.sampled_from(WORDS) | st.text(max_size=16) | st.integers() | st.floats() | st.booleans() | st.none()
json_values = st.recursive(
    leaves, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(keys, inner, max_size=6), max_leaves=12
)


def _dumps(value: Any) -> str:
    return json.dumps(value, allow_nan=True)


# ---------------------------------------------------------------- tools file

TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Weather",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
}
MCP = {
    "jsonrpc": "2.0",
    "id": 1,
    "result": {
        "tools": [{"name": "search", "description": "Search", "inputSchema": {"type": "object", "properties": {}}}]
    },
}


@st.composite
def tools_documents(draw: st.DrawFn) -> bytes:
    """Near-misses of real tools files (a known shape with random edits), or random bytes."""
    kind = draw(st.sampled_from(["openai", "mcp", "random-json", "bytes", "pages"]))
    if kind == "bytes":
        return draw(st.binary(max_size=300))
    if kind == "random-json":
        return _dumps(draw(json_values)).encode()
    base: Any = json.loads(_dumps({"tools": [TOOL, TOOL]} if kind == "openai" else MCP))
    for _ in range(draw(st.integers(1, 4))):
        node = base
        for _ in range(draw(st.integers(0, 4))):
            children = list(node.values()) if isinstance(node, dict) else node if isinstance(node, list) else []
            containers = [c for c in children if isinstance(c, (dict, list))]
            if not containers:
                break
            node = draw(st.sampled_from(containers))
        if isinstance(node, dict):
            node[draw(keys)] = draw(json_values)
        elif isinstance(node, list):
            node.append(draw(json_values))
    text = _dumps(base)
    if kind == "pages":
        text = text + "\n" + text
    return text.encode()


@FUZZ
@given(tools_documents())
def test_tools_file_reader_returns_tools_or_a_clear_error(data):
    try:
        result = parse_tools_bytes(data, "tools.json")
    except ToolsFileError as exc:
        assert str(exc).startswith("tools.json"), str(exc)  # names the file
    else:
        assert isinstance(result, ToolsFile) and result.tools


def test_tools_file_reader_on_files_too(tmp_path):
    (tmp_path / "t.json").write_bytes(b"\xff\xfe{")
    try:
        read_tools_file(tmp_path / "t.json")
    except ToolsFileError as exc:
        assert "t.json" in str(exc) and "UTF-8" in str(exc)
    try:
        read_tools_file(tmp_path / "missing.json")
    except ToolsFileError as exc:
        assert "missing.json" in str(exc)


# ---------------------------------------------------------------- log sampler

PLAIN = {
    "request": {"model": "m", "messages": [{"role": "user", "content": "hello"}]},
    "response": {"choices": [{"message": {"role": "assistant", "content": "hi"}}]},
    "timestamp": "2026-12-01T10:00:00Z",
    "conversation_id": "c1",
}


@st.composite
def log_lines(draw: st.DrawFn) -> bytes:
    kind = draw(st.sampled_from(["near-miss", "random-json", "bytes"]))
    if kind == "bytes":
        return draw(st.binary(max_size=200)).replace(b"\n", b" ")
    if kind == "random-json":
        return _dumps(draw(json_values)).encode()
    record = json.loads(_dumps(PLAIN))
    nodes = [record, record["request"], record["response"], record["request"]["messages"][0]]
    for _ in range(draw(st.integers(1, 3))):
        draw(st.sampled_from(nodes))[draw(keys)] = draw(json_values)  # edits a node in place
    return _dumps(record).encode()


@FUZZ
@given(log_lines())
def test_one_log_record_is_a_turn_or_a_named_skip(line):
    try:
        read_record(line)
    except Skipped as exc:
        assert exc.reason


@FUZZ
@given(st.lists(log_lines(), min_size=0, max_size=8), st.booleans())
def test_a_whole_log_file_samples_or_fails_clearly(lines, zipped):
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / ("logs.jsonl.gz" if zipped else "logs.jsonl")
        payload = b"\n".join([_dumps(PLAIN).encode(), *lines])
        path.write_bytes(gzip.compress(payload) if zipped else payload)
        try:
            sampled = sample_logs([path], SampleOptions(samples=3))
        except SamplingError as exc:
            assert str(exc)
        else:
            assert sampled is not None

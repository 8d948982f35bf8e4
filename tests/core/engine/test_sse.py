"""The SSE framer and the stream accumulator: pure, so tested hard (hypothesis)."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from compare_tui.engine.sse import SseFramer
from compare_tui.engine.stream import StreamAccumulator

SEPARATORS = [b"\n\n", b"\r\n\r\n", b"\r\r"]


def _events(payloads: list[str], sep: bytes, space: bool) -> bytes:
    prefix = b"data: " if space else b"data:"
    return b"".join(prefix + p.encode() + sep for p in payloads)


@given(
    payloads=st.lists(
        st.text(alphabet=st.characters(blacklist_characters="\r\n", blacklist_categories=["Cs"]), min_size=1),
        max_size=20,
    ),
    sep=st.sampled_from(SEPARATORS),
    space=st.booleans(),
    cuts=st.lists(st.integers(min_value=0, max_value=10_000), max_size=30),
)
def test_framing_is_independent_of_how_bytes_are_split(payloads, sep, space, cuts):
    raw = _events(payloads, sep, space)
    framer = SseFramer()
    got = []
    points = sorted({c % (len(raw) + 1) for c in cuts} | {0, len(raw)})
    for start, end in zip(points, points[1:]):
        got.extend(e.data for e in framer.feed(raw[start:end], 0))
    got.extend(e.data for e in framer.close(0))
    # A leading space is removed once; payloads that themselves start with spaces keep the rest.
    expected = [p[1:] if (p.startswith(" ") and not space) else p for p in payloads]
    assert got == expected


def _reference_events(raw: bytes) -> list[tuple[str, str | None]]:
    """The SSE rule written plainly (a boundary is the first blank line, whatever the line
    ends), against which the framer's fast paths are checked."""
    import re

    out = []
    blocks = re.split(rb"\r\n\r\n|\n\n|\r\r|\r\n\n|\n\r\n", raw)
    for block in blocks[:-1] + ([blocks[-1]] if blocks[-1].strip() else []):
        data, name = [], None
        for line in re.split(r"\r\n|\r|\n", block.decode("utf-8", errors="replace")):
            if not line or line.startswith(":"):
                continue
            field, sep, value = line.partition(":")
            value = value[1:] if sep and value.startswith(" ") else value
            if field == "data":
                data.append(value)
            elif field == "event":
                name = value
        if data:
            out.append(("\n".join(data), name))
    return out


@settings(max_examples=500)
@given(
    parts=st.lists(
        st.sampled_from(
            [
                b"data: ",
                b"data:",
                b"event: e",
                b": ping",
                b"x",
                b"{}",
                b"\n",
                b"\r",
                b"\r\n",
                b"\n\n",
                "é".encode(),
                b"[DONE]",
            ]
        ),
        max_size=40,
    ),
    cuts=st.lists(st.integers(min_value=0, max_value=400), max_size=10),
)
def test_framing_matches_the_plain_rule_however_bytes_are_split(parts, cuts):
    raw = b"".join(parts)
    framer, got = SseFramer(), []
    points = sorted({c % (len(raw) + 1) for c in cuts} | {0, len(raw)})
    for start, end in zip(points, points[1:]):
        got.extend((e.data, e.event) for e in framer.feed(raw[start:end], 0))
    got.extend((e.data, e.event) for e in framer.close(0))
    assert got == _reference_events(raw)


@settings(max_examples=300)
@given(st.binary(max_size=2000))
def test_framer_never_crashes_on_arbitrary_bytes(raw):
    framer = SseFramer()
    for i in range(0, len(raw), 7):
        framer.feed(raw[i : i + 7], 0)
    framer.close(0)


def test_comments_pings_and_event_lines_are_skipped():
    framer = SseFramer()
    events = framer.feed(b': ping\n\nevent: message\ndata: {"a":1}\n\nid: 3\nretry: 10\n\n', 5)
    assert [(e.data, e.event, e.arrived_ns) for e in events] == [('{"a":1}', "message", 5)]


def test_multi_line_data_is_joined_with_newlines():
    events = SseFramer().feed(b"data: one\ndata: two\n\n", 0)
    assert events[0].data == "one\ntwo"


def _chunk(**delta):
    return {"choices": [{"index": 0, "delta": delta, "finish_reason": None}]}


def test_ttft_ignores_role_only_and_null_content_chunks():
    acc = StreamAccumulator(sent_ns=0)
    acc.feed(_chunk(role="assistant", content=None), 1_000_000)
    acc.feed(_chunk(content=""), 2_000_000)
    acc.feed(_chunk(content="Hi"), 5_000_000)
    acc.feed(_chunk(content=" there"), 9_000_000)
    acc.feed({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}, 10_000_000)
    acc.feed({"choices": [], "usage": {"prompt_tokens": 7, "completion_tokens": 2}}, 12_000_000)
    assert acc.ttft_ms() == 5.0
    assert acc.e2e_ms() == 9.0  # the usage chunk does not move the end
    assert acc.answer().text == "Hi there"
    assert acc.tokens() == (7, 2)
    assert acc.finish_reason == "stop"


def test_reasoning_counts_as_first_token():
    acc = StreamAccumulator(sent_ns=0)
    acc.feed(_chunk(reasoning_content="thinking"), 3_000_000)
    acc.feed(_chunk(content="42"), 8_000_000)
    assert acc.ttft_ms() == 3.0
    assert acc.answer().reasoning == "thinking"


def test_usage_keeps_the_last_non_null_and_is_never_invented():
    acc = StreamAccumulator(sent_ns=0)
    acc.feed(_chunk(content="a") | {"usage": {"prompt_tokens": 1, "completion_tokens": 1}}, 1)
    acc.feed(_chunk(content="b") | {"usage": None}, 2)
    assert acc.tokens() == (1, 1)
    fresh = StreamAccumulator(sent_ns=0)
    fresh.feed(_chunk(content="a"), 1)
    assert fresh.tokens() == (None, None)


def test_tool_calls_assemble_by_index_first_id_and_name_win():
    acc = StreamAccumulator(sent_ns=0)
    acc.feed(
        _chunk(tool_calls=[{"index": 0, "id": "c1", "type": "function", "function": {"name": "get", "arguments": ""}}]),
        1,
    )
    acc.feed(_chunk(tool_calls=[{"index": 1, "id": "c2", "function": {"name": "put", "arguments": '{"x"'}}]), 2)
    acc.feed(
        _chunk(tool_calls=[{"index": 0, "id": "other", "function": {"name": "ignored", "arguments": '{"city":'}}]), 3
    )
    acc.feed(_chunk(tool_calls=[{"index": 0, "function": {"arguments": ' "Paris"}'}}]), 4)
    acc.feed(_chunk(tool_calls=[{"index": 1, "function": {"arguments": ": 1}"}}]), 5)
    calls = acc.answer().tool_calls
    assert [(c.id, c.name, json.loads(c.arguments)) for c in calls] == [
        ("c1", "get", {"city": "Paris"}),
        ("c2", "put", {"x": 1}),
    ]


def test_arguments_sent_as_an_object_are_kept_as_json_text_and_noted():
    acc = StreamAccumulator(sent_ns=0)
    acc.feed(_chunk(tool_calls=[{"index": 0, "id": "c", "function": {"name": "f", "arguments": {"a": 1}}}]), 1)
    answer = acc.answer()
    assert json.loads(answer.tool_calls[0].arguments) == {"a": 1}
    assert any("object" in note for note in acc.notes)


def test_error_payload_inside_a_stream_is_recorded():
    acc = StreamAccumulator(sent_ns=0)
    acc.feed({"error": {"message": "out of memory", "code": 500}}, 1)
    assert acc.error == "out of memory"


@settings(max_examples=200)
@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(max_size=5),
        lambda inner: (
            st.lists(inner, max_size=3)
            | st.dictionaries(
                st.sampled_from(
                    [
                        "choices",
                        "delta",
                        "content",
                        "tool_calls",
                        "usage",
                        "index",
                        "function",
                        "arguments",
                        "name",
                        "error",
                        "timings",
                    ]
                ),
                inner,
                max_size=4,
            )
        ),
        max_leaves=20,
    )
)
def test_accumulator_never_crashes_on_arbitrary_json_objects(chunk):
    acc = StreamAccumulator(sent_ns=0)
    try:
        acc.feed(chunk, 1)
    except ValueError:
        assert not isinstance(chunk, dict)
    acc.answer()
    acc.tokens()

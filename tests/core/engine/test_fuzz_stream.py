"""Fuzzing what servers send (issue 12): the SSE framer and the stream accumulator. Any byte
stream is framed into events or refused with `SseError`, the same however the bytes are cut
into reads; any chunk is accumulated or refused with `ValueError` (which the client records as
`malformed_stream`), never another exception that would crash a run.

Examples per test default to 200; COMPARE_TUI_FUZZ_EXAMPLES sets more (the soak uses 10,000).
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from compare_tui.engine.sse import SseError, SseFramer
from compare_tui.engine.stream import StreamAccumulator, accumulate_message
from tests.core.sampling.test_fuzz_parsers import FUZZ, _dumps, json_values

json_objects = st.dictionaries(
    st.sampled_from(["choices", "delta", "content", "tool_calls", "usage", "error"]) | st.text(max_size=4),
    json_values,
    max_size=4,
)

# ---------------------------------------------------------------- SSE framer + stream accumulator

SSE_PIECES = st.sampled_from(
    [
        b"data: ",
        b"data:",
        b"event: x",
        b": ping",
        b"id: 1",
        b"retry: 5",
        b"\n",
        b"\r\n",
        b"\r",
        b"\n\n",
        b"[DONE]",
        b'{"choices": []}',
        b"\xff",
        b"data",
    ]
)


@st.composite
def sse_streams(draw: st.DrawFn) -> tuple[bytes, list[int]]:
    parts = draw(
        st.lists(
            SSE_PIECES | st.binary(max_size=20) | json_objects.map(lambda o: b"data: " + _dumps(o).encode() + b"\n\n"),
            max_size=15,
        )
    )
    data = b"".join(parts)
    cuts = sorted(draw(st.lists(st.integers(0, len(data)), max_size=8)))
    return data, cuts


def _frame(data: bytes, cuts: list[int]) -> list[tuple[str, str | None]]:
    framer, events, last = SseFramer(), [], 0
    for cut in [*cuts, len(data)]:
        events += framer.feed(data[last:cut], 0)
        last = cut
    events += framer.close(0)
    return [(e.data, e.event) for e in events]


@FUZZ
@given(sse_streams())
def test_sse_framing_does_not_depend_on_how_bytes_arrive(stream):
    data, cuts = stream
    try:
        whole = _frame(data, [])
    except SseError:
        return
    assert _frame(data, cuts) == whole


@FUZZ
@given(sse_streams())
def test_the_data_only_reading_gives_each_events_data_as_framing_does(stream):
    """`feed_data` (the run's folded stream) gives the data `feed` gives, event for event,
    however the bytes arrive; bytes only where `feed` would decode them to the same text."""
    data, cuts = stream
    framer, got, last = SseFramer(), [], 0
    try:
        whole = [event for event, _ in _frame(data, cuts)]
        for cut in [*cuts, len(data)]:
            got += framer.feed_data(data[last:cut])
            last = cut
        got += [event.data for event in framer.close(0)]
    except SseError:
        return
    assert [d.decode("utf-8", errors="replace") if isinstance(d, bytes) else d for d in got] == whole


@FUZZ
@given(st.lists(json_values, max_size=6))
def test_stream_accumulator_takes_any_chunk_or_refuses_it_as_malformed(chunks):
    acc = StreamAccumulator(sent_ns=0)
    for n, chunk in enumerate(chunks):
        try:
            acc.feed(chunk, n + 1)
        except ValueError:  # the client records this as `malformed_stream`
            pass
    acc.answer()
    acc.tokens()
    acc.ttft_ms(), acc.e2e_ms()


@FUZZ
@given(json_values)
def test_a_whole_non_streamed_body_is_accumulated_or_refused(body):
    try:
        acc = accumulate_message(body, 0, 1)
    except ValueError:
        return
    acc.answer()
    acc.tokens()


# ---------------------------------------------------------------- one event's JSON

_PADS = ["", " ", " \n", "x", "}", ","]


@FUZZ
@given(
    st.one_of(
        st.tuples(st.sampled_from(_PADS), json_objects.map(_dumps), st.sampled_from(_PADS)).map("".join),
        st.text(max_size=30),
    )
)
def test_a_chunk_is_read_exactly_as_json_loads_reads_it(data):
    """The client's fast read of an event's JSON (`client._chunk`) gives what `json.loads`
    gives, or the same refusal, whatever whitespace or trailing data surrounds it."""
    import json

    from compare_tui.engine.exchange import _chunk

    def read(parse):
        try:
            return _dumps(parse(data))  # spelled out, so NaN compares equal to NaN
        except ValueError as exc:
            return type(exc)

    assert read(_chunk) == read(json.loads)


@FUZZ
@given(
    st.one_of(
        json_objects.map(lambda o: _dumps(o).encode()),
        st.binary(max_size=40),
        st.tuples(json_objects.map(lambda o: _dumps(o).encode()), st.binary(max_size=4)).map(b"".join),
    )
)
def test_a_chunk_given_as_bytes_is_read_as_its_replaced_text_would_be(data):
    """The framer hands the run's reader an event's bytes undecoded (`SseFramer.feed_data`):
    `client._chunk` must read them as `json.loads` reads the text `feed` would have given
    (bad UTF-8 replaced, not refused)."""
    import json

    from compare_tui.engine.exchange import _chunk

    def read(parse, value):
        try:
            return _dumps(parse(value))
        except ValueError as exc:
            return type(exc)

    assert read(_chunk, data) == read(json.loads, data.decode("utf-8", errors="replace"))

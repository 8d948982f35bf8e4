"""Server-sent events framed from raw bytes (docs/measurement.md §2).

Network reads are not events: bytes are buffered and split on blank lines (`\\n\\n`,
`\\r\\n\\r\\n`, `\\r\\r`). Each event keeps the arrival time of the read that completed it,
taken by the caller with `perf_counter_ns` *before* parsing, so parsing cost never moves a
timestamp.
"""

from __future__ import annotations

import re
from typing import NamedTuple

_BOUNDARY = re.compile(rb"\r\n\r\n|\n\n|\r\r|\r\n\n|\n\r\n")
_DATA_EVENT = re.compile(rb"data: ([^\n]*)\n\n")
"""The usual event: one `data: ` line and a blank line."""
_MAX_PENDING = 16 * 1024 * 1024  # an event larger than this is a broken stream, not data


class SseError(ValueError):
    """The byte stream is not server-sent events (e.g. a runaway event with no boundary)."""


class SseEvent(NamedTuple):
    """One event (a tuple: a run frames thousands a second, and a frozen dataclass costs
    three times as much to make)."""

    data: str
    """The `data:` lines of one event joined by newlines (the SSE rule)."""
    arrived_ns: int
    """`perf_counter_ns` of the read that completed this event."""
    event: str | None = None


class SseFramer:
    """Feed bytes as they arrive; get back the complete events they finish."""

    __slots__ = ("_buffer",)

    def __init__(self) -> None:
        self._buffer = b""

    def feed(self, chunk: bytes, arrived_ns: int) -> list[SseEvent]:
        self._buffer += chunk
        events: list[SseEvent] = []
        if b"\r" not in self._buffer:
            # The usual stream (`\n` only): one split finds the same boundaries as the
            # search below, a fifth of its cost (bench/RESULTS.md, "Engine overhead").
            *blocks, self._buffer = self._buffer.split(b"\n\n")
            for block in blocks:
                if block.startswith(b"data: ") and b"\n" not in block:  # the usual event, read here
                    events.append(SseEvent(block[6:].decode("utf-8", errors="replace"), arrived_ns))
                    continue
                event = _parse_block(block, arrived_ns)
                if event is not None:
                    events.append(event)
            return self._bounded(events)
        while True:
            match = _BOUNDARY.search(self._buffer)
            if match is None:
                break
            block = self._buffer[: match.start()]
            self._buffer = self._buffer[match.end() :]
            event = _parse_block(block, arrived_ns)
            if event is not None:
                events.append(event)
        return self._bounded(events)

    def feed_data(self, chunk: bytes) -> list[bytes | str]:
        """What `feed` gives, as the data of each event alone (no name, no time): bytes when
        every complete event is the usual one-line `data: ` event (found by one regex search,
        a quarter of `feed`'s cost; a run's folded stream needs nothing else), else text."""
        self._buffer += chunk
        if b"\r" not in self._buffer:
            end = self._buffer.rfind(b"\n\n") + 2
            if end < 2:
                return self._bounded_data([])
            datas: list[bytes] = _DATA_EVENT.findall(self._buffer, 0, end)
            # The events tile the buffer up to `end` only when their lengths add up to it.
            if sum(map(len, datas)) + 8 * len(datas) == end:
                self._buffer = self._buffer[end:]
                return self._bounded_data(list(datas))
        return [event.data for event in self.feed(b"", 0)]

    def _bounded_data(self, datas: list[bytes | str]) -> list[bytes | str]:
        self._bounded([])
        return datas

    def _bounded(self, events: list[SseEvent]) -> list[SseEvent]:
        """`events`, unless what is left pending has grown past the bound (a stream that never
        sends a blank line would otherwise hold memory without limit)."""
        if len(self._buffer) > _MAX_PENDING:
            raise SseError(f"an event grew past {_MAX_PENDING} bytes without a blank line")
        return events

    def close(self, arrived_ns: int) -> list[SseEvent]:
        """Flush a final event that the server ended without a blank line."""
        block, self._buffer = self._buffer, b""
        event = _parse_block(block, arrived_ns) if block.strip() else None
        return [event] if event is not None else []


def _parse_block(block: bytes, arrived_ns: int) -> SseEvent | None:
    text = block.decode("utf-8", errors="replace")
    if text.startswith("data: ") and "\n" not in text and "\r" not in text:
        return SseEvent(text[6:], arrived_ns)  # the usual event: one `data: ` line
    data_lines: list[str] = []
    event_name: str | None = None
    for line in re.split(r"\r\n|\r|\n", text):
        if not line or line.startswith(":"):
            continue  # blank, or a comment / keep-alive ping
        field, sep, value = line.partition(":")
        if sep and value.startswith(" "):
            value = value[1:]
        if field == "data":
            data_lines.append(value)
        elif field == "event":
            event_name = value
        # `id:` and `retry:` mean nothing for a single chat completion.
    if not data_lines:
        return None
    return SseEvent("\n".join(data_lines), arrived_ns, event_name)

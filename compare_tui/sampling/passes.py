"""The passes over the logs; none holds more than one line of a log at a time.

- `scan` (pass 1) parses every line once: file digests, line counts, the skip report, the
  newest usable timestamp (the window's default end), the OpenAI batch join. Each usable
  turn is spilled to a temporary file as one fixed-size record (`Seen`, 64 bytes), so the
  later passes never parse JSON again and memory does not grow with the log (the disk does,
  by 64 bytes a turn). Only the halves of batch records waiting for their other half stay
  in memory, a few small fields each (a batch holds at most 50,000 requests).
- `candidates` (passes 2 and 3) streams the spilled records back.
- `fetch` (pass 4) reads back only the chosen lines, by offset, and parses them in full.
"""

from __future__ import annotations

import hashlib
import struct
import tempfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import IO, Any

from .chat import Skipped
from .errors import SamplingError
from .records import BatchOutput, BatchRequest, LoggedTurn, joined, read_record
from .selection import conversation_hash, log_exponential
from .skips import SkipReport
from .sources import Source, SourceScan, read_at

Ref = tuple[int, int, int]
"""Where a line was logged: (source index, line number, uncompressed byte offset)."""
NO_REF = (0xFFFF, 0, 0)

Progress = Callable[[str, int], None]
"""Told (pass name, lines read so far) every `PROGRESS_EVERY` lines."""
PROGRESS_EVERY = 100_000

_RECORD = struct.Struct("<QIddHQQHQQ8s")
_CHUNK = 4096


@dataclass(frozen=True, slots=True)
class Filters:
    models: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()

    def reject(self, models: Sequence[str], tags: Sequence[str]) -> str | None:
        """The skip reason when a turn does not pass `--model` / `--tag`, else None."""
        if self.models and not any(m in self.models for m in models):
            return "wrong_model"
        if self.tags and not any(t in self.tags for t in tags):
            return "missing_tag"
        return None


@dataclass(frozen=True, slots=True)
class Seen:
    """A usable turn, reduced to what selection needs."""

    conversation: int
    """`selection.conversation_hash` of the conversation id."""
    position: int
    timestamp: float
    log_exp: float
    """`selection.log_exponential` of the turn (seeded)."""
    refs: tuple[Ref, ...]
    """One ref, or two for a joined batch turn (input line, output line)."""
    tiebreak: bytes
    """Hash of the logged line(s): orders two records of the same turn at the same time
    without depending on the order the files were given in."""

    def pack(self) -> bytes:
        first, second = (self.refs + (NO_REF,))[:2]
        return _RECORD.pack(
            self.conversation, self.position, self.timestamp, self.log_exp, *first, *second, self.tiebreak
        )

    @classmethod
    def unpack(cls, fields: tuple[Any, ...]) -> Seen:
        refs = (tuple(fields[4:7]),) if fields[7] == NO_REF[0] else (tuple(fields[4:7]), tuple(fields[7:10]))
        return cls(fields[0], fields[1], fields[2], fields[3], refs, fields[10])


@dataclass
class ScanResult:
    spill: IO[bytes]
    digests: list[str] = field(default_factory=list)
    lines: list[int] = field(default_factory=list)
    usable: int = 0
    newest: float | None = None
    skips: SkipReport = field(default_factory=SkipReport)

    def close(self) -> None:
        self.spill.close()


def place(names: Sequence[str], ref: Ref) -> str:
    return f"{names[ref[0]]}:{ref[1]}"


def _tiebreak(*raw: bytes) -> bytes:
    return hashlib.sha256(b"\x00".join(raw)).digest()[:8]


class _Scanner:
    """Pass 1's state: the result being built and the batch halves still unmatched."""

    def __init__(self, names: Sequence[str], filters: Filters, seed: str) -> None:
        self.names, self.filters, self.seed = names, filters, seed
        self.result = ScanResult(spill=tempfile.TemporaryFile(prefix="compare-tui-sample-"))
        self.requests: dict[str, tuple[int, int, float, tuple[str, ...], str | None, Ref, bytes]] = {}
        self.outputs: dict[str, tuple[float, tuple[str, ...], Ref, bytes]] = {}

    def line(self, ref: Ref, line: bytes) -> None:
        try:
            item = read_record(line)
        except Skipped as skip:
            self.result.skips.add(skip.reason, place(self.names, ref))
            return
        if isinstance(item, LoggedTurn):
            h = conversation_hash(item.conversation)
            seen = Seen(
                h,
                item.position,
                item.timestamp,
                log_exponential(self.seed, item.conversation, item.position),
                (ref,),
                _tiebreak(line),
            )
            self._usable(seen, item.models, item.tags, ref)
            return
        pending: dict[Any, Any] = self.requests if isinstance(item, BatchRequest) else self.outputs
        if item.custom_id in pending:
            self.result.skips.add("batch_duplicate_id", place(self.names, ref))
        elif isinstance(item, BatchRequest):
            c, pos = item.conversation, item.request.position
            pending[item.custom_id] = (
                conversation_hash(c),
                pos,
                log_exponential(self.seed, c, pos),
                item.tags,
                item.request.model,
                ref,
                _tiebreak(line),
            )
        else:
            assert isinstance(item, BatchOutput)
            pending[item.custom_id] = (item.timestamp, item.models, ref, _tiebreak(line))

    def _usable(self, seen: Seen, models: Sequence[str], tags: Sequence[str], ref: Ref) -> None:
        reason = self.filters.reject(models, tags)
        if reason is not None:
            self.result.skips.add(reason, place(self.names, ref))
            return
        result = self.result
        result.usable += 1
        if result.newest is None or seen.timestamp > result.newest:
            result.newest = seen.timestamp
        result.spill.write(seen.pack())

    def join_batches(self) -> None:
        for custom_id, (timestamp, out_models, out_ref, out_hash) in self.outputs.items():
            request = self.requests.pop(custom_id, None)
            if request is None:
                self.result.skips.add("batch_output_without_request", place(self.names, out_ref))
                continue
            h, position, log_exp, tags, model, in_ref, in_hash = request
            models = tuple(dict.fromkeys(m for m in (model, *out_models) if m))
            seen = Seen(h, position, timestamp, log_exp, (in_ref, out_ref), _tiebreak(in_hash, out_hash))
            self._usable(seen, models, tags, out_ref)
        for *_rest, in_ref, _hash in self.requests.values():
            self.result.skips.add("batch_request_without_output", place(self.names, in_ref))


def scan(
    sources: Sequence[Source], names: Sequence[str], filters: Filters, seed: str, progress: Progress | None = None
) -> ScanResult:
    """Pass 1 over every line of every source; the caller closes the result."""
    scanner = _Scanner(names, filters, seed)
    try:
        read = 0
        for index, source in enumerate(sources):
            reader = SourceScan(source)
            for number, offset, line in reader:
                scanner.line((index, number, offset), line)
                read += 1
                if progress and read % PROGRESS_EVERY == 0:
                    progress("scan", read)
            scanner.result.digests.append(reader.digest)
            scanner.result.lines.append(reader.lines)
        scanner.join_batches()
        scanner.result.spill.flush()
    except BaseException:
        scanner.result.close()
        raise
    return scanner.result


def candidates(scanned: ScanResult) -> Iterator[Seen]:
    """Every usable turn from the spill (passes 2 and 3), in the order scanned."""
    spill = scanned.spill
    spill.seek(0)
    while chunk := spill.read(_RECORD.size * _CHUNK):
        for fields in _RECORD.iter_unpack(chunk):
            yield Seen.unpack(fields)


def fetch(sources: Sequence[Source], wanted: Sequence[Seen]) -> dict[tuple[Ref, ...], LoggedTurn]:
    """Pass 4: the full turns for `wanted`, read back by offset."""
    offsets: dict[int, list[int]] = {}
    for seen in wanted:
        for index, _number, offset in seen.refs:
            offsets.setdefault(index, []).append(offset)
    lines: dict[tuple[int, int], bytes] = {}
    for index, wanted_offsets in sorted(offsets.items()):
        sources[index].check_unchanged()
        for offset, line in read_at(sources[index], wanted_offsets).items():
            lines[(index, offset)] = line
    turns: dict[tuple[Ref, ...], LoggedTurn] = {}
    for seen in wanted:
        try:
            items = [read_record(lines[(index, offset)]) for index, _number, offset in seen.refs]
        except Skipped:
            items = []
        turn = items[0] if len(items) == 1 else joined(*items) if len(items) == 2 else None  # type: ignore[arg-type]
        if not isinstance(turn, LoggedTurn):
            raise SamplingError(
                f"{sources[seen.refs[0][0]].path}: line {seen.refs[0][1]} reads differently now than when it was scanned; sample files nothing writes to"
            )
        turns[seen.refs] = turn
    return turns

"""Reading log files line by line, plain or gzip, without ever holding a file in memory.

Callers can rely on:
- `open_log` tells gzip from plain text by the file's magic bytes, not its name.
- `iter_lines` yields `(line_number, offset, raw_line)` with 1-based line numbers and the
  byte offset of the line in the *uncompressed* stream, so `read_at` can fetch it again.
- `scan_source` does the same while hashing the stored bytes (compressed, for gzip), so the
  first pass produces the file's sha256 without reading it twice.
- `Source.check_unchanged` raises `SamplingError` when a file changed between passes.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from .errors import SamplingError

GZIP_MAGIC = b"\x1f\x8b"


@dataclass(frozen=True, slots=True)
class Source:
    """One log file as given on the command line, with what proves it did not change."""

    path: Path
    size: int
    mtime_ns: int
    gzip: bool

    @classmethod
    def open_path(cls, path: Path) -> Source:
        try:
            stat = path.stat()
            with path.open("rb") as fh:
                magic = fh.read(2)
        except FileNotFoundError:
            raise SamplingError(f"{path}: no such file; give the path of a JSONL log (plain or gzip)") from None
        except IsADirectoryError:
            raise SamplingError(f"{path}: is a folder; give the log files inside it") from None
        except OSError as exc:
            raise SamplingError(f"{path}: cannot be read ({exc.strerror or exc})") from None
        return cls(path, stat.st_size, stat.st_mtime_ns, magic == GZIP_MAGIC)

    def check_unchanged(self) -> None:
        try:
            stat = self.path.stat()
        except OSError:
            stat = None
        if stat is None or (stat.st_size, stat.st_mtime_ns) != (self.size, self.mtime_ns):
            raise SamplingError(
                f"{self.path}: the file changed while it was being sampled; sample a file nothing writes to (rotate the log first)"
            )


class _HashingReader(io.RawIOBase):
    """A raw reader that feeds every byte it returns into a sha256."""

    def __init__(self, raw: io.RawIOBase) -> None:
        self._raw = raw
        self.sha256 = hashlib.sha256()

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        n = self._raw.readinto(buffer)
        if n:
            self.sha256.update(memoryview(buffer)[:n])
        return n or 0

    def close(self) -> None:
        self._raw.close()
        super().close()


def open_log(source: Source) -> BinaryIO:
    """The decompressed byte stream of `source` (binary; seekable, gzip seeks by decoding)."""
    try:
        fh = source.path.open("rb")
    except OSError as exc:
        raise SamplingError(f"{source.path}: cannot be read ({exc.strerror or exc})") from None
    return gzip.GzipFile(fileobj=fh, mode="rb") if source.gzip else fh  # type: ignore[return-value]


def _lines(stream: BinaryIO, source: Source) -> Iterator[tuple[int, int, bytes]]:
    offset = 0
    try:
        for number, line in enumerate(stream, start=1):
            yield number, offset, line
            offset += len(line)
    except (OSError, EOFError, gzip.BadGzipFile) as exc:
        # A truncated or corrupt gzip member: what came before it was read; say where it stopped.
        raise SamplingError(
            f"{source.path}: cannot be read past byte {offset} of its content ({exc}); repair or drop the file"
        ) from None


def iter_lines(source: Source) -> Iterator[tuple[int, int, bytes]]:
    """`(line_number, offset, raw_line)` for every line of `source`, streamed."""
    with open_log(source) as stream:
        yield from _lines(stream, source)


class SourceScan:
    """Streams one file's lines while hashing its stored bytes; `digest` is ready after."""

    def __init__(self, source: Source) -> None:
        self.source = source
        self.lines = 0
        self._hasher: _HashingReader | None = None

    def __iter__(self) -> Iterator[tuple[int, int, bytes]]:
        try:
            raw = self.source.path.open("rb", buffering=0)
        except OSError as exc:
            raise SamplingError(f"{self.source.path}: cannot be read ({exc.strerror or exc})") from None
        self._hasher = _HashingReader(raw)
        buffered = io.BufferedReader(self._hasher, buffer_size=1 << 20)
        stream: BinaryIO = gzip.GzipFile(fileobj=buffered, mode="rb") if self.source.gzip else buffered  # type: ignore[assignment]
        with stream, buffered:
            for item in _lines(stream, self.source):
                self.lines = item[0]
                yield item
            # gzip may stop before the stored bytes end (trailing padding): hash the rest.
            while buffered.read(1 << 20):
                pass

    @property
    def digest(self) -> str:
        if self._hasher is None:
            raise RuntimeError("the file has not been scanned yet")
        return "sha256:" + self._hasher.sha256.hexdigest()


def read_at(source: Source, offsets: list[int]) -> dict[int, bytes]:
    """The lines starting at `offsets` (uncompressed byte offsets from `iter_lines`)."""
    found: dict[int, bytes] = {}
    with open_log(source) as stream:
        # In increasing order, so a gzip stream only ever seeks forward (decoding once).
        for offset in sorted(set(offsets)):
            stream.seek(offset, os.SEEK_SET)
            found[offset] = stream.readline()
    return found

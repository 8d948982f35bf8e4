"""Read a few metadata values from a GGUF file's header (no dependency on the gguf package).

Used for serving notes that the server cannot tell us: whether the file carries its own chat
template (llama.cpp silently falls back to ChatML when it does not).
"""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Any, BinaryIO

# GGUF value types -> struct format of their fixed-size scalars.
_SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}
_STRING, _ARRAY = 8, 9


def _read(handle: BinaryIO, fmt: str) -> Any:
    size = struct.calcsize(fmt)
    data = handle.read(size)
    if len(data) != size:
        raise ValueError("truncated GGUF header")
    return struct.unpack(fmt, data)[0]


def _read_string(handle: BinaryIO) -> str:
    length = _read(handle, "<Q")
    return handle.read(length).decode("utf-8", errors="replace")


def _skip_value(handle: BinaryIO, kind: int) -> None:
    if kind in _SCALARS:
        handle.seek(struct.calcsize(_SCALARS[kind]), 1)
    elif kind == _STRING:
        handle.seek(_read(handle, "<Q"), 1)
    elif kind == _ARRAY:
        item_kind, count = _read(handle, "<I"), _read(handle, "<Q")
        if item_kind in _SCALARS:
            handle.seek(struct.calcsize(_SCALARS[item_kind]) * count, 1)
        else:
            for _ in range(count):
                _skip_value(handle, item_kind)
    else:
        raise ValueError(f"unknown GGUF value type {kind}")


def read_metadata(path: Path, keys: set[str]) -> dict[str, object]:
    """The values of `keys` (scalars and strings) present in the GGUF header of `path`.

    Raises ValueError when the file is not a GGUF file (a clear sign of a wrong or damaged file).
    """
    found: dict[str, object] = {}
    with path.open("rb") as handle:
        if handle.read(4) != b"GGUF":
            raise ValueError(f"{path} is not a GGUF file")
        version = _read(handle, "<I")
        if version < 2:
            raise ValueError(f"{path}: GGUF version {version} is too old")
        _read(handle, "<Q")  # tensor count
        for _ in range(_read(handle, "<Q")):
            key = _read_string(handle)
            kind = _read(handle, "<I")
            if key in keys and kind == _STRING:
                found[key] = _read_string(handle)
            elif key in keys and kind in _SCALARS:
                found[key] = _read(handle, _SCALARS[kind])
            else:
                _skip_value(handle, kind)
            if len(found) == len(keys):
                break
    return found

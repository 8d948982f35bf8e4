"""Fit tool names to OpenAI's pattern `^[a-zA-Z0-9_-]{1,64}$`, reversibly.

MCP allows 1-128 characters of `[A-Za-z0-9_.-]` (and servers in the wild use more), while
OpenAI-compatible servers refuse anything outside the pattern. Names that already fit are
sent as they are; others have every other character replaced by `_` (so `files.read`
becomes `files_read`, as BFCL does) and, when that collides or is too long, a short hash of
the original appended. The mapping is deterministic and one-to-one, and a reverse map lets
results report the names the user knows.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass

WIRE_NAME = re.compile(r"[a-zA-Z0-9_-]{1,64}")
_OUTSIDE = re.compile(r"[^a-zA-Z0-9_-]")


@dataclass(frozen=True, slots=True)
class NameMap:
    """original name -> wire name, and back. Only mapped (changed) names are `renamed`."""

    to_wire: dict[str, str]
    to_original: dict[str, str]

    @property
    def renamed(self) -> dict[str, str]:
        return {o: w for o, w in self.to_wire.items() if o != w}


def fits(name: str) -> bool:
    """Whether `name` may be sent unchanged."""
    return WIRE_NAME.fullmatch(name) is not None


def _hashed(original: str, base: str, length: int) -> str:
    digest = hashlib.sha256(original.encode("utf-8", "surrogatepass")).hexdigest()[:length]
    return f"{base[: 63 - length]}_{digest}"


def map_names(originals: Iterable[str]) -> NameMap:
    """Wire names for `originals` (distinct strings), stable whatever their order.

    Names that fit keep themselves, so a mapped name can never take a real tool's name."""
    names = list(dict.fromkeys(originals))
    taken = {n for n in names if fits(n)}
    to_wire = {n: n for n in taken}
    for original in sorted(n for n in names if n not in taken):
        base = _OUTSIDE.sub("_", original)[:64] or "tool"
        candidate = base if fits(base) and base not in taken and len(original) <= 64 else _hashed(original, base, 8)
        length = 8
        while candidate in taken:  # a hash collision between two originals: lengthen it
            length += 4
            candidate = _hashed(original, base, min(length, 62))
            if length > 62:
                raise ValueError(f"cannot find a unique wire name for tool {original!r}")
        taken.add(candidate)
        to_wire[original] = candidate
    return NameMap({n: to_wire[n] for n in names}, {w: o for o, w in to_wire.items()})

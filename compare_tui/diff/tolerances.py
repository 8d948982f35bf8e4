"""Tolerances of the reproduce check: how far two runs of one cell may drift and still agree.

Four figures, each with a documented default that a golden set's manifest (`tolerances`
table) and then the command line (`--tolerance NAME=VALUE`) may replace:

| name          | default | meaning                                                           |
|---------------|---------|-------------------------------------------------------------------|
| `pass_rate`   | `2pp`   | the pass rates may differ by at most this many percentage points  |
| `agreement`   | `95%`   | at least this share of tasks scored in both runs has one outcome  |
| `latency_p50` | `20%`   | end-to-end p50 latency may differ by at most this share of run A's |
| `tokens`      | `5%`    | total tokens may differ by at most this share of run A's          |

Values: points as `2pp` (or a bare `2`); shares as `95%` or `0.95`. A bare number above 1
for a share is refused as ambiguous (`20` could mean 20 % or 2000 %).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from compare_tui.errors import CompareTuiError

DEFAULTS: dict[str, str] = {"pass_rate": "2pp", "agreement": "95%", "latency_p50": "20%", "tokens": "5%"}
"""The documented defaults, in the form a user writes them."""


class ToleranceError(CompareTuiError, ValueError):
    """A tolerance that cannot be read; the message names it, where it came from and the form."""


@dataclass(frozen=True, slots=True)
class Tolerance:
    """One tolerance as the check applies it."""

    name: str
    limit: float
    """As a share: 0.02 for 2pp, 0.95 for 95 %, 0.2 for 20 %."""
    text: str
    """As written, e.g. `2pp`."""
    source: str
    """`default`, `manifest` or `command line`."""


def _number(text: str, name: str, where: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise ToleranceError(f"tolerance {name}={text!r} ({where}): not a number") from None
    if not math.isfinite(value) or value < 0:
        raise ToleranceError(f"tolerance {name}={text!r} ({where}): must be zero or more")
    return value


def parse_value(name: str, text: str, where: str = "command line") -> float:
    """A tolerance value as a share; `ToleranceError` for an unknown name or a bad value."""
    if name not in DEFAULTS:
        raise ToleranceError(f"unknown tolerance {name!r} ({where}): use one of {', '.join(DEFAULTS)}")
    raw = text.strip().lower()
    if name == "pass_rate":
        if raw.endswith("%"):
            raise ToleranceError(f"tolerance pass_rate={text!r} ({where}): give percentage points, e.g. 2pp")
        return _number(raw.removesuffix("pp").strip(), name, where) / 100
    if raw.endswith("%"):
        value = _number(raw[:-1].strip(), name, where) / 100
    else:
        value = _number(raw, name, where)
        if value > 1:
            raise ToleranceError(
                f"tolerance {name}={text!r} ({where}): write a share as a percentage "
                f"(e.g. {value:g}%) or as a fraction up to 1"
            )
    if name == "agreement" and value > 1:
        raise ToleranceError(f"tolerance agreement={text!r} ({where}): a share of tasks cannot exceed 100%")
    return value


def parse_assignment(item: str) -> tuple[str, str]:
    """`NAME=VALUE` → (name, value)."""
    name, sep, value = item.partition("=")
    if not sep or not name.strip() or not value.strip():
        raise ToleranceError(f"--tolerance {item!r}: expected NAME=VALUE, e.g. pass_rate=2pp")
    return name.strip(), value.strip()


def resolve_tolerances(manifest: Mapping[str, str] | None = None, given: Sequence[str] = ()) -> dict[str, Tolerance]:
    """Defaults, replaced by the manifest's, replaced by the command line's `NAME=VALUE`s."""
    chosen = {
        name: Tolerance(name, parse_value(name, text, "default"), text, "default") for name, text in DEFAULTS.items()
    }
    for name, text in (manifest or {}).items():
        chosen[name] = Tolerance(name, parse_value(name, str(text), "golden set manifest"), str(text), "manifest")
    for item in given:
        name, text = parse_assignment(item)
        chosen[name] = Tolerance(name, parse_value(name, text), text, "command line")
    return chosen

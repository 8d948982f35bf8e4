"""The sampling window and logged timestamps.

- A window is `<n>h`, `<n>d` or `<n>w`, from 1h up to 30d (the default and the maximum);
  presets people use are 1h, 6h, 12h, 1d, 3d, 7d, 14d and 30d.
- A timestamp is ISO 8601 (a missing zone means UTC) or epoch seconds (a number, or a
  string of digits). Numbers above 1e11 are read as epoch milliseconds: in seconds they
  would be past the year 5000, so no real log means that.
"""

from __future__ import annotations

import math
import re
from datetime import UTC, datetime
from typing import Any

from .errors import SamplingError

DEFAULT_WINDOW = "30d"
MAX_WINDOW_S = 30 * 86400
_UNITS = {"h": 3600, "d": 86400, "w": 7 * 86400}
_WINDOW = re.compile(r"^\s*(\d{1,4})\s*([hdw])\s*$", re.IGNORECASE)
_EPOCH_MS_ABOVE = 1e11
_NUMBER = re.compile(r"^\s*\d+(\.\d+)?\s*$")


def parse_window(text: str) -> int:
    """The window in seconds; raises `SamplingError` naming the allowed forms."""
    match = _WINDOW.match(text or "")
    if not match:
        raise SamplingError(f"--window {text!r}: give a number and a unit h, d or w, e.g. 1h, 7d or 30d")
    seconds = int(match.group(1)) * _UNITS[match.group(2).lower()]
    if seconds < 3600 or seconds > MAX_WINDOW_S:
        raise SamplingError(f"--window {text!r}: give a window from 1h to 30d (30d is the default and the maximum)")
    return seconds


def parse_timestamp(value: Any) -> float | None:
    """Epoch seconds for a logged timestamp, or None when it is missing or unreadable."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        number = float(value)
    elif isinstance(value, str):
        if _NUMBER.match(value):
            number = float(value)
        else:
            return _iso(value)
    else:
        return None
    if not math.isfinite(number) or number <= 0:
        return None
    return number / 1000.0 if number > _EPOCH_MS_ABOVE else number


def _iso(text: str) -> float | None:
    text = text.strip()
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()


def parse_now(text: str) -> float:
    """`--now`: an ISO 8601 moment (or epoch seconds) anchoring the window's end."""
    moment = parse_timestamp(text)
    if moment is None:
        raise SamplingError(f"--now {text!r}: give an ISO 8601 time such as 2025-03-10T12:00:00Z (or epoch seconds)")
    return moment


def iso(moment: float) -> str:
    """A UTC ISO 8601 text for epoch seconds, to the microsecond, always with `Z`."""
    text = datetime.fromtimestamp(moment, tz=UTC).isoformat()
    return text.replace("+00:00", "Z")


def window_label(seconds: int) -> str:
    for unit, size in (("d", _UNITS["d"]), ("h", _UNITS["h"])):
        if seconds % size == 0:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"

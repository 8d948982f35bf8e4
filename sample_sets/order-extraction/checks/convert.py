#!/usr/bin/env python3
"""Check a numeric answer (a unit conversion) against the expected value, within a tolerance.

Run by compare-tui's `command` scorer in a fresh temporary directory. Standard library only.

Input
  answer    the file named by $COMPARE_TUI_ANSWER_FILE or $COMPARE_TUI_ANSWER, else
            `answer.txt` in the working directory, else standard input.
  expected  the file named by $COMPARE_TUI_EXPECTED_FILE or $COMPARE_TUI_EXPECTED, else
            `expected.json` in the working directory. Accepted shapes:
              {"value": 3.10686, "unit": "mi", "tolerance_pct": 1}
              the same object wrapped as the task's expected block: {"json": {...}} or
              {"text": "3.10686"}, possibly with the other keys null
              a bare number, or a string holding one

The first number in the answer is compared with the expected value: it passes when it is within
`tolerance_pct` percent (default 1) of it, or within `tolerance_abs` when given (useful near 0).
"The distance is 3.11 miles" passes; "5 km is 3.11 miles" fails, because the task asks for the
number only and the first number is 5.

Exit status: 0 pass, 1 fail (including an empty answer or one with no number), 2 error (the
checker's own input is missing or malformed: no answer file and no standard input, an answer
that is not UTF-8, an unreadable or invalid expected.json).
"""

from __future__ import annotations

import json
import math
import os
import re
import sys
from pathlib import Path

PASS, FAIL, ERROR = 0, 1, 2
DEFAULT_TOLERANCE_PCT = 1.0
MAX_ANSWER_BYTES = 1_000_000

# Thousands separators ("1,609.34") are accepted only in well-formed groups of three, so "3,1"
# is read as 3 (a decimal comma is ambiguous and the tasks ask for a plain number).
_NUMBER = re.compile(
    r"(?<![\w.])[-+\u2212]?(?:\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)(?:[eE][-+]?\d+)?"
)


class CheckerInputError(Exception):
    """The checker's own input (not the model's answer) is missing or malformed."""


def _named_files(*variables: str) -> list[str]:
    """The non-empty values of the given environment variables, in order."""
    return [value for value in (os.environ.get(name) for name in variables) if value]


def _decode(data: bytes, source: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        if len(data) >= MAX_ANSWER_BYTES and exc.start >= len(data) - 3:
            return data[: exc.start].decode("utf-8")  # cut inside a character by the size cap
        # The engine always writes UTF-8 text; anything else means the input was mangled.
        raise CheckerInputError(f"the answer from {source} is not UTF-8 text") from None


def _read_answer() -> str:
    candidates = [Path(p) for p in _named_files("COMPARE_TUI_ANSWER_FILE", "COMPARE_TUI_ANSWER")]
    candidates.append(Path("answer.txt"))
    for path in candidates:
        if path.is_file():
            try:
                with path.open("rb") as handle:
                    data = handle.read(MAX_ANSWER_BYTES)
            except OSError as exc:
                raise CheckerInputError(f"cannot read the answer file {path}: {exc}") from None
            return _decode(data, str(path))
    if sys.stdin is None or sys.stdin.closed or sys.stdin.isatty():
        raise CheckerInputError("no answer: no answer file and nothing on standard input")
    return _decode(sys.stdin.buffer.read(MAX_ANSWER_BYTES), "standard input")


def _as_float(value: object, what: str) -> float:
    if isinstance(value, bool):
        raise CheckerInputError(f"{what} is a boolean, expected a number")
    if isinstance(value, (int, float)):
        number = float(value)
    elif isinstance(value, str):
        found = _first_number(value)
        if found is None:
            raise CheckerInputError(f"{what} {value!r} holds no number")
        number = found
    else:
        raise CheckerInputError(f"{what} is {type(value).__name__}, expected a number")
    if not math.isfinite(number):
        raise CheckerInputError(f"{what} is not a finite number")
    return number


def _read_expected() -> tuple[float, float | None, float]:
    """(value, absolute tolerance or None, tolerance in percent)."""
    path = Path(next(iter(_named_files("COMPARE_TUI_EXPECTED_FILE", "COMPARE_TUI_EXPECTED")), "expected.json"))
    try:
        raw = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise CheckerInputError(f"cannot read {path}: {exc}") from None
    try:
        data = json.loads(raw)
    except ValueError as exc:
        raise CheckerInputError(f"{path} is not valid JSON: {exc}") from None

    # Unwrap the task's expected block ({"text": …} / {"json": …}) and a top-level "expected".
    for _ in range(3):
        if isinstance(data, dict) and "value" not in data:
            inner = next((data[k] for k in ("json", "text", "expected") if data.get(k) is not None), None)
            if inner is None:
                break
            data = inner

    if isinstance(data, dict):
        if "value" not in data:
            raise CheckerInputError(f"{path}: no \"value\" key in {sorted(data)}")
        value = _as_float(data["value"], "expected value")
        pct = _as_float(data.get("tolerance_pct", DEFAULT_TOLERANCE_PCT), "tolerance_pct")
        absolute = data.get("tolerance_abs")
        tol_abs = None if absolute is None else _as_float(absolute, "tolerance_abs")
        if pct < 0 or (tol_abs is not None and tol_abs < 0):
            raise CheckerInputError(f"{path}: tolerances must not be negative")
        return value, tol_abs, pct
    return _as_float(data, "expected value"), None, DEFAULT_TOLERANCE_PCT


def _first_number(text: str) -> float | None:
    match = _NUMBER.search(text)
    if match is None:
        return None
    token = match.group(0).replace(",", "").replace("\u2212", "-")
    try:
        number = float(token)
    except ValueError:
        return None
    return number if math.isfinite(number) else None


def check() -> int:
    try:
        expected, tol_abs, pct = _read_expected()
        answer = _read_answer()
    except CheckerInputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return ERROR

    got = _first_number(answer)
    if got is None:
        print(f"fail: no number in the answer {answer.strip()[:80]!r}")
        return FAIL
    allowed = tol_abs if tol_abs is not None else abs(expected) * pct / 100.0
    diff = abs(got - expected)
    if diff <= allowed + 1e-12:
        print(f"pass: {got:g} is within {allowed:g} of {expected:g}")
        return PASS
    print(f"fail: {got:g} differs from {expected:g} by {diff:g} (allowed {allowed:g})")
    return FAIL


if __name__ == "__main__":
    try:
        sys.exit(check())
    except Exception as exc:  # a checker bug must read as an error, never as a pass or fail
        print(f"error: checker crashed: {type(exc).__name__}: {exc}", file=sys.stderr)
        sys.exit(ERROR)

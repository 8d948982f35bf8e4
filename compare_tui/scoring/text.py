"""The `exact` and `regex` scorers: pure functions of (task, spec, answer).

Both look at `answer.text` only; tool calls and reasoning are not part of the text.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable
from typing import Any

from compare_tui.goldset.models import ExactScorer, RegexScorer, Task
from compare_tui.scoring.result import Answer, Outcome, ScoreResult

_SHOWN = 80
"""Characters of each text shown in a one-line fail detail."""


def normalize_text(text: str, options: Iterable[str]) -> str:
    """`text` with the requested normalisations applied; idempotent for any option set.

    - `case`: Unicode case folding (`str.casefold`, so "Straße" equals "STRASSE");
    - `punctuation`: every character in a Unicode punctuation category (P*) is removed;
    - `whitespace`: leading/trailing whitespace stripped, inner runs collapsed to one space.
    Order is fixed (case, punctuation, whitespace) whatever order the options come in.
    """
    wanted = set(options)
    if "case" in wanted:
        # casefold is a per-character mapping and idempotent (checked over all code points).
        text = text.casefold()
    if "punctuation" in wanted:
        text = "".join(ch for ch in text if not unicodedata.category(ch).startswith("P"))
    if "whitespace" in wanted:
        text = " ".join(text.split())
    return text


def shorten(text: str, limit: int = _SHOWN) -> str:
    """`repr` of `text`, cut to about `limit` characters with an ellipsis when longer."""
    if len(text) > limit:
        return repr(text[:limit]) + "…"
    return repr(text)


def score_exact(task: Task, spec: ExactScorer, answer: Answer) -> ScoreResult:
    """Pass when the normalised answer text equals the normalised `expected.text`.

    The detail quotes the answer and the expected text as written (never their normalised
    forms, which would misquote the model) and names the normalisations compared under; the
    normalised forms are in the result's data. Error (not fail) when the task has no
    `expected.text`: nothing could be measured.
    """
    if task.expected.text is None:
        return ScoreResult(Outcome.ERROR, f"task {task.id}: the exact scorer needs `expected.text`")
    got = normalize_text(answer.text, spec.normalize)
    want = normalize_text(task.expected.text, spec.normalize)
    data = {"normalize": list(spec.normalize), "expected": want, "got": got}
    under = f" (compared after normalising {', '.join(spec.normalize)})" if spec.normalize else ""
    if got == want:
        return ScoreResult(Outcome.PASS, f"matches {shorten(task.expected.text)}{under}", data)
    return ScoreResult(Outcome.FAIL, f"expected {shorten(task.expected.text)}, got {shorten(answer.text)}{under}", data)


def score_regex(task: Task, spec: RegexScorer, answer: Answer) -> ScoreResult:
    """Pass when the pattern matches the answer text (`re.search` or `re.fullmatch`)."""
    pattern = spec.compiled()
    found = pattern.fullmatch(answer.text) if spec.mode == "fullmatch" else pattern.search(answer.text)
    data: dict[str, Any] = {"pattern": spec.pattern, "mode": spec.mode, "flags": list(spec.flags)}
    verb = "fullmatch" if spec.mode == "fullmatch" else "search"
    if found is None:
        return ScoreResult(Outcome.FAIL, f"/{spec.pattern}/ ({verb}) does not match {shorten(answer.text)}", data)
    data["match"] = found.group(0)
    data["span"] = list(found.span())
    return ScoreResult(Outcome.PASS, f"/{spec.pattern}/ ({verb}) matched {shorten(found.group(0))}", data)

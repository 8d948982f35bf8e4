"""One failed attempt → its cause and label (`FailureCause`), from what the attempt stored.

Pure: `classify` reads a `FailedAttempt` (the stored columns a cause is told from) and never
the golden set or the store. The order of the checks is the order of `FailureCause`'s members:
a request that failed is an error whatever else is stored; an answer cut at the token limit is
truncated before anything its scorer said about the cut text; then empty answers, refusals,
answers in another language than the request (`insights.language`), and what the scorer
recorded (its kind decides how its detail and data are read).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from compare_tui.insights.language import WINDOW as LANGUAGE_WINDOW
from compare_tui.insights.language import detect_language, language_name
from compare_tui.vocabulary import ErrorClass, FailureCause, Outcome

REFUSAL_PATTERNS: tuple[str, ...] = (
    r"i(?:'m| am) (?:sorry|afraid|unable|not able)\b",
    r"i (?:can(?:'|no)?t|cannot|won'?t|will not|am not able to) (?:help|assist|comply|provide|do that|answer)",
    r"as an ai\b",
    r"i must (?:decline|refuse)",
    r"(?:that|this) (?:request )?(?:is|goes) against (?:my|the) (?:guidelines|policy|policies)",
)
"""Openings of a refusal (case-insensitive, searched in the first `REFUSAL_WINDOW` characters of
the answer text). Deliberately short: a refusal found here is named as one; a refusal in other
words falls to its scorer's cause."""
REFUSAL_WINDOW = 160
HEAD_CHARS = max(REFUSAL_WINDOW, LANGUAGE_WINDOW)
"""The answer's first characters a `FailedAttempt` keeps (the refusal and language checks')."""
_REFUSAL = re.compile("|".join(f"(?:{p})" for p in REFUSAL_PATTERNS), re.IGNORECASE)
LABEL_CHARS = 60
"""A label longer than this is clipped (with `…`), so a group's key stays one short line."""


@dataclass(frozen=True, slots=True)
class FailedAttempt:
    """What one failed (or errored) attempt stored, as `classify` reads it."""

    task_id: str
    attempt: int
    outcome: Outcome
    scorer_kind: str = ""
    """The task's scorer kind from the golden set (`exact`, `regex`, `json`, `tool_call`,
    `command`, `human`); empty when the set could not be read."""
    answer_head: str = ""
    """The first characters of the answer text (`HEAD_CHARS`: the empty, refusal and language
    checks')."""
    has_tool_calls: bool = False
    finish_reason: str | None = None
    error_class: ErrorClass | None = None
    detail: str = ""
    """The scorer's one-line reason, or the request's error."""
    score_data: Mapping[str, Any] = field(default_factory=dict)
    request_language: str | None = None
    """The request's language (`language.detect_language` of its last user message); None when
    it could not be told, and then no answer is said to be in another language."""
    regex_miss: str = ""
    """A `regex` scorer's miss: why the pattern did not match the whole answer (`regex_miss`,
    one of `REGEX_MISSES`); empty for other scorers."""


@dataclass(frozen=True, slots=True, order=True)
class Cause:
    """A group's key: the cause and what tells its members apart (an error class, a label pair,
    a schema error, a tool name, a command's output line)."""

    kind: FailureCause
    label: str = ""

    def words(self) -> str:
        """One line for people: `wrong label: expected "billing", got "bug"`."""
        named = _WORDS.get(self.kind)
        if named is not None and "{label}" in named:
            return named.format(label=self.label)
        name = named or self.kind.value.replace("_", " ")
        return f"{name}: {self.label}" if self.label else name


_WORDS = {
    FailureCause.TRUNCATED: "truncated at the token limit",
    FailureCause.EMPTY: "empty answer",
    FailureCause.JSON_PARSE: "no JSON in the answer",
    FailureCause.JSON_FIELD: "JSON field",
    FailureCause.JSON_VALUE: "other value in JSON field {label}",
    FailureCause.TOOL_NO_CALL: "no tool call (expected {label})",
    FailureCause.TOOL_TEXT_CALL: "tool call to {label} written as text",
    FailureCause.TOOL_WRONG_TOOL: "other tools called, not {label}",
    FailureCause.TOOL_BAD_ARGUMENTS: "wrong arguments to {label}",
    FailureCause.TOOL_UNWANTED_CALL: "tool call where none was expected",
}
"""How a cause reads (`{label}` where its label goes; else `words: label`)."""


def clip(text: str, limit: int = LABEL_CHARS) -> str:
    """`text` on one line, at most `limit` characters."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def is_refusal(text: str) -> bool:
    """Whether the answer opens like a refusal (`REFUSAL_PATTERNS`)."""
    return _REFUSAL.search(text[:REFUSAL_WINDOW]) is not None


def classify(failed: FailedAttempt) -> Cause:
    """The one cause of a failed attempt (see the module docstring for the order)."""
    if failed.error_class is not None:
        return Cause(FailureCause.REQUEST_ERROR, failed.error_class.value)
    if failed.finish_reason == "length":
        return Cause(FailureCause.TRUNCATED)
    if not failed.answer_head.strip() and not failed.has_tool_calls:
        return Cause(FailureCause.EMPTY)
    if not failed.has_tool_calls and is_refusal(failed.answer_head):
        return Cause(FailureCause.REFUSAL)
    if failed.request_language is not None and not failed.has_tool_calls:
        answered = detect_language(failed.answer_head)
        if answered is not None and answered != failed.request_language:
            asked = f"asked in {language_name(failed.request_language)}, answered in {language_name(answered)}"
            return Cause(FailureCause.WRONG_LANGUAGE, asked)
    if failed.outcome is Outcome.ERROR:
        return Cause(FailureCause.SCORER_ERROR, clip(failed.detail))
    by_kind = _BY_KIND.get(failed.scorer_kind)
    found = by_kind(failed) if by_kind is not None else None
    return found if found is not None else Cause(FailureCause.OTHER, clip(failed.detail))


def _quoted(value: Any) -> str:
    return '"' + clip(str(value), 24) + '"'


def _exact(failed: FailedAttempt) -> Cause | None:
    data = failed.score_data
    if "expected" not in data or "got" not in data:
        return None
    return Cause(FailureCause.WRONG_LABEL, f"expected {_quoted(data['expected'])}, got {_quoted(data['got'])}")


REGEX_CASE = "matches only when letter case is ignored"
REGEX_WRAPPED = "matches once surrounding spaces, quotes or backticks are dropped"
REGEX_EXTRA_TEXT = "a match inside more text (the pattern must match the whole answer)"
REGEX_NOTHING = "nothing in the answer matches"
REGEX_MISSES = (REGEX_CASE, REGEX_WRAPPED, REGEX_EXTRA_TEXT, REGEX_NOTHING)
"""Why a regex missed, tried in this order on the whole answer: the group's label, so that misses
group by cause (each task has its own pattern; a cause is shared)."""
_WRAPPING = " \t\r\n\"'`"


def regex_miss(score_data: Mapping[str, Any], answer: str) -> str:
    """Why the stored pattern (`pattern`, `mode`, `flags` as the regex scorer records them) missed
    `answer`, one of `REGEX_MISSES`; empty when the data names no pattern that compiles."""
    pattern, mode = score_data.get("pattern"), score_data.get("mode", "search")
    flags = 0
    for name in score_data.get("flags") or ():
        flags |= _REGEX_FLAGS.get(str(name), 0)
    if not isinstance(pattern, str):
        return ""
    try:
        compiled, folded = re.compile(pattern, flags), re.compile(pattern, flags | re.IGNORECASE)
    except (re.error, OverflowError, RecursionError):
        return ""

    def hit(regex: re.Pattern[str], text: str, whole: bool = mode == "fullmatch") -> bool:
        return (regex.fullmatch(text) if whole else regex.search(text)) is not None

    if not flags & re.IGNORECASE and hit(folded, answer):
        return REGEX_CASE
    trimmed = answer.strip(_WRAPPING)
    if trimmed != answer and hit(compiled, trimmed):
        return REGEX_WRAPPED
    if mode == "fullmatch" and hit(compiled, answer, whole=False):
        return REGEX_EXTRA_TEXT
    return REGEX_NOTHING


_REGEX_FLAGS = {name: int(getattr(re, name)) for name in ("IGNORECASE", "MULTILINE", "DOTALL", "VERBOSE", "ASCII")}


def _regex(failed: FailedAttempt) -> Cause:
    return Cause(FailureCause.NO_MATCH, failed.regex_miss or REGEX_NOTHING)


def _json(failed: FailedAttempt) -> Cause | None:
    detail = failed.detail
    if detail.startswith("no JSON found"):
        return Cause(FailureCause.JSON_PARSE)
    errors = failed.score_data.get("schema_errors")
    if isinstance(errors, list) and errors:
        return Cause(FailureCause.JSON_SCHEMA, clip(str(errors[0])))
    if detail.startswith("field ") and detail.endswith(" missing") or detail.startswith("expected a JSON object"):
        return Cause(FailureCause.JSON_FIELD, clip(detail))
    if detail.startswith("field "):
        # `field 'x': expected …, got …`: the field names the group; values differ per task.
        return Cause(FailureCause.JSON_VALUE, clip(detail.split(":", 1)[0].removeprefix("field ")))
    return None


def _tool_call(failed: FailedAttempt) -> Cause | None:
    data = failed.score_data
    calls = data.get("calls") or []
    expected = data.get("expected_name")
    if "written_as_text" in data:
        return Cause(FailureCause.TOOL_TEXT_CALL, clip(str(expected or "")))
    if expected is None:
        return Cause(FailureCause.TOOL_UNWANTED_CALL) if calls else None
    if not calls:
        return Cause(FailureCause.TOOL_NO_CALL, clip(str(expected)))
    if "mismatches" in data:
        return Cause(FailureCause.TOOL_BAD_ARGUMENTS, clip(str(expected)))
    return Cause(FailureCause.TOOL_WRONG_TOOL, clip(str(expected)))


def _command(failed: FailedAttempt) -> Cause:
    data = failed.score_data
    for stream in ("stdout_tail", "stderr_tail"):
        lines = [line.strip() for line in str(data.get(stream) or "").splitlines() if line.strip()]
        if lines:
            return Cause(FailureCause.COMMAND_FAILED, clip(lines[0]))
    exit_code = data.get("exit_code")
    return Cause(FailureCause.COMMAND_FAILED, f"exit {exit_code}, no output" if exit_code is not None else "")


_BY_KIND = {"exact": _exact, "regex": _regex, "json": _json, "tool_call": _tool_call, "command": _command}

"""Reading a judge's reply: the verdict and the rest as rationale.

Two forms are read: a JSON object `{"verdict": …, "reason": …}` (the structured reply form),
else the text form, where the verdict is the last `VERDICT:` line. A reply without a readable
verdict is not guessed at: it becomes a failed call (`error_class = "unparseable"`), recorded
and shown like any other failure.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from compare_tui.judge.prompt.traces import strip_reasoning
from compare_tui.vocabulary import JudgeFailure

UNPARSEABLE = JudgeFailure.UNPARSEABLE

# Lenient about decoration small models add (`**VERDICT:** A`, `Verdict - Answer B`), strict
# about the word: the verdict must follow "verdict" and end its line ("verdict: a tie" is
# not A), and is never inferred from prose.
_DECOR = r"[ \t*_`\"'\[\](){}:=\-–—.]*"
_END = r"[ \t*_`\"'\])}.!]*$"
_PAIR = re.compile(rf"verdict{_DECOR}(?:answer[ \t]+)?(a|b|tie){_END}", re.IGNORECASE | re.MULTILINE)
_REASON = re.compile(r"^\W*reason\W*:\W*", re.IGNORECASE)
_GRADE = re.compile(rf"verdict{_DECOR}(pass|fail){_END}", re.IGNORECASE | re.MULTILINE)
# A grade: `GRADE: 4`, `**Grade:** 4/5`, `grade - 4 out of 5`; the digit must end the line
# (after an optional "/5" or "out of 5"), so "grade: 4 or 5" is no grade.
_SCALE = re.compile(rf"grade{_DECOR}([1-5])(?:[ \t]*(?:/|out[ \t]+of)[ \t]*5)?{_END}", re.IGNORECASE | re.MULTILINE)
# A reply that is nothing but the grade ("5", "4/5", "**3**") is unambiguous: small judges
# often answer so, dropping the written form. Anything more needs the GRADE line.
_BARE_GRADE = re.compile(r"[ \t*_`\"'\[(]*([1-5])(?:[ \t]*(?:/|out[ \t]+of)[ \t]*5)?[ \t*_`\"'\])}.!]*", re.IGNORECASE)
_CODE_FENCE = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.DOTALL)


@dataclass(frozen=True, slots=True)
class ParsedReply:
    """A verdict (None when the reply had none), the rationale, and the cleaned reply."""

    verdict: str | None
    rationale: str
    text: str
    problem: str | None = None
    no_verdict_found: bool = False
    """The reply held no verdict in any form (neither JSON nor a `VERDICT:`/`GRADE:` line), as
    opposed to a verdict that is not one of the allowed ones."""


def _from_json(text: str, allowed: tuple[str, ...], upper: bool, key: str = "verdict") -> ParsedReply | None:
    body = _CODE_FENCE.sub(r"\1", text.strip())
    if not body.startswith("{"):
        return None
    try:
        data = json.loads(body)
    except ValueError:
        return None
    if not isinstance(data, dict) or key not in data:
        return None
    reason = str(data.get("reason") or "").strip()
    verdict = str(data[key]).strip()
    verdict = verdict.upper() if upper else verdict.lower()
    if verdict not in allowed or isinstance(data[key], bool):
        return ParsedReply(
            None, reason, text, f"the judge's JSON {key} {data[key]!r} is not one of {', '.join(allowed)}"
        )
    return ParsedReply(verdict, reason, text)


def _parse(
    reply: str, pattern: re.Pattern[str], allowed: tuple[str, ...], upper: bool, expected: str, key: str = "verdict"
) -> ParsedReply:
    text = strip_reasoning(reply)
    structured = _from_json(text, allowed, upper, key)
    if structured is not None:
        return structured
    matches = list(pattern.finditer(text))
    if not matches:
        shown = text[-160:].replace("\n", " ") if text else "(empty reply)"
        return ParsedReply(None, text, text, f"no {key} line ({expected}) in the judge's reply: …{shown}", True)
    last = matches[-1]
    verdict = last.group(1).upper() if upper else last.group(1).lower()
    # The rationale is the reply without the line that carries the final verdict.
    line_start = text.rfind("\n", 0, last.start()) + 1
    line_end = text.find("\n", last.end())
    rationale = (text[:line_start] + ("" if line_end < 0 else text[line_end:])).strip()
    rationale = _REASON.sub("", rationale, count=1).strip()
    return ParsedReply(verdict, rationale, text)


def parse_pair_reply(reply: str) -> ParsedReply:
    """`A`, `B` or `TIE` from a JSON verdict or the last `VERDICT:` line (reasoning traces
    removed first); the rationale is the rest, without a leading `REASON:`."""
    return _parse(reply, _PAIR, ("A", "B", "TIE"), True, "VERDICT: A|B|TIE")


def parse_grade_reply(reply: str) -> ParsedReply:
    """`pass` or `fail` from a JSON verdict or the last `VERDICT:` line (reasoning traces removed first)."""
    return _parse(reply, _GRADE, ("pass", "fail"), False, "VERDICT: PASS|FAIL")


SCALE_GRADES = ("1", "2", "3", "4", "5")


def parse_scale_reply(reply: str) -> ParsedReply:
    """A grade `1`…`5` (as text) from a JSON `{"grade": …}`, the last `GRADE:` line, or a reply
    that is the grade alone (reasoning traces removed first); the rationale is the rest, without
    a leading `REASON:` (empty for a bare grade)."""
    bare = _BARE_GRADE.fullmatch(strip_reasoning(reply))
    if bare is not None:
        return ParsedReply(bare.group(1), "", bare.group(0))
    return _parse(reply, _SCALE, SCALE_GRADES, False, "GRADE: 1-5", key="grade")

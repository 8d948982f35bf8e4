"""Reading a judge's reply: the verdict from its final `VERDICT:` line, and the rest as rationale.

A reply without a readable verdict is not guessed at: it becomes a failed call
(`error_class = "unparseable"`), recorded and shown like any other failure.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from compare_tui.judge.traces import strip_reasoning

UNPARSEABLE = "unparseable"

# Lenient about decoration small models add (`**VERDICT:** A`, `Verdict - Answer B`), strict
# about the word: the verdict must follow "verdict" and end its line ("verdict: a tie" is
# not A), and is never inferred from prose.
_DECOR = r"[ \t*_`\"'\[\](){}:=\-–—.]*"
_END = r"[ \t*_`\"'\])}.!]*$"
_PAIR = re.compile(rf"verdict{_DECOR}(?:answer[ \t]+)?(a|b|tie){_END}", re.IGNORECASE | re.MULTILINE)
_REASON = re.compile(r"^\W*reason\W*:\W*", re.IGNORECASE)
_GRADE = re.compile(rf"verdict{_DECOR}(pass|fail){_END}", re.IGNORECASE | re.MULTILINE)


@dataclass(frozen=True, slots=True)
class ParsedReply:
    """A verdict (None when the reply had none), the rationale, and the cleaned reply."""

    verdict: str | None
    rationale: str
    text: str
    problem: str | None = None


def _parse(reply: str, pattern: re.Pattern[str], upper: bool, expected: str) -> ParsedReply:
    text = strip_reasoning(reply)
    matches = list(pattern.finditer(text))
    if not matches:
        shown = text[-160:].replace("\n", " ") if text else "(empty reply)"
        return ParsedReply(None, text, text, f"no verdict line ({expected}) in the judge's reply: …{shown}")
    last = matches[-1]
    verdict = last.group(1).upper() if upper else last.group(1).lower()
    # The rationale is the reply without the line that carries the final verdict.
    line_start = text.rfind("\n", 0, last.start()) + 1
    line_end = text.find("\n", last.end())
    rationale = (text[:line_start] + ("" if line_end < 0 else text[line_end:])).strip()
    rationale = _REASON.sub("", rationale, count=1).strip()
    return ParsedReply(verdict, rationale, text)


def parse_pair_reply(reply: str) -> ParsedReply:
    """`A`, `B` or `TIE` from the last `VERDICT:` line in the reply (reasoning traces removed
    first); the rationale is the rest, without a leading `REASON:`."""
    return _parse(reply, _PAIR, True, "VERDICT: A|B|TIE")


def parse_grade_reply(reply: str) -> ParsedReply:
    """`pass` or `fail` from the last `VERDICT:` in the reply (reasoning traces removed first)."""
    return _parse(reply, _GRADE, False, "VERDICT: PASS|FAIL")

"""What can be wrong with a golden set, said so a user can fix it.

A `Problem` names the file, the field (a dotted path such as `expected.tool_call.name`, or
None when the whole file is at fault), what was wrong and what to do. `GoldenSetError`
carries every problem found in a set, so one load reports them all, not just the first.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from compare_tui.errors import CompareTuiError


def _one_line(text: str) -> str:
    # Parser and schema messages can span lines; a problem is always one line.
    return " ".join(text.split())


def _escape_breaks(text: str) -> str:
    # A file or key name may hold a line break; escape it rather than break the line.
    return "".join(c if c == " " or not c.isspace() else c.encode("unicode_escape").decode() for c in text)


@dataclass(frozen=True, slots=True)
class Problem:
    """One thing wrong with one file of a golden set."""

    file: Path
    """The file at fault (or the set folder itself), as the caller named it."""
    field: str | None
    """Dotted path inside the file (`scorer.run[1]`), or None for the whole file."""
    message: str
    """What was wrong, without a trailing full stop."""
    fix: str = ""
    """What to do about it."""
    line: int | None = None
    """1-based line number in `file`, when the parser reported one."""

    def __str__(self) -> str:
        """`<file>: <field>: <what was wrong>. <what to do>` on one line."""
        head = _escape_breaks(f"{self.file}: {self.field}" if self.field else str(self.file))
        text = f"{head}: {_one_line(self.message).rstrip('. ')}."
        fix = _one_line(self.fix)
        if fix:
            fix = fix[0].upper() + fix[1:]
            text += " " + (fix if fix.endswith((".", "?", "!")) else fix + ".")
        return text


class GoldenSetError(CompareTuiError):
    """A golden set could not be loaded.

    `file`, `field`, `message`, `fix` and `line` describe the first problem; `problems`
    lists every problem found (always at least one). `str()` is one line: the first
    problem, plus how many more there are.
    """

    def __init__(
        self,
        file: Path | str,
        field: str | None,
        message: str,
        fix: str = "",
        *,
        line: int | None = None,
        problems: list[Problem] | None = None,
    ) -> None:
        first = Problem(Path(file), field, message, fix, line)
        self.problems: list[Problem] = list(problems) if problems else [first]
        self.file = first.file
        self.field = first.field
        self.message = first.message
        self.fix = first.fix
        self.line = first.line
        super().__init__(str(first))

    @classmethod
    def from_problems(cls, problems: list[Problem]) -> GoldenSetError:
        """An error carrying `problems` (which must not be empty); the first one leads."""
        if not problems:
            raise ValueError("GoldenSetError needs at least one problem")
        first = problems[0]
        return cls(first.file, first.field, first.message, first.fix, line=first.line, problems=problems)

    def __str__(self) -> str:
        more = len(self.problems) - 1
        if more <= 0:
            return str(self.problems[0])
        return f"{self.problems[0]} (and {more} more problem{'s' if more > 1 else ''})"

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:  # keeps the error picklable across worker processes
        return (GoldenSetError.from_problems, (self.problems,))

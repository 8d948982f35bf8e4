"""Fitting a report table to a terminal's width, for every surface that draws one (the text
report, the TUI). Pure: strings in, strings out; each renderer adds its own drawing.

The rules a reader relies on:
- a number is never cut: a number column is shown at its full width, or dropped whole and
  named in a note;
- a text cell too long for its share of the width (a GPU reason, a long cost basis) moves to a
  footnote, the cell keeps its head (`not measured [1]`) or a pointer (`see [1]`); a column
  marked `whole` (the verdict) is never footnoted: it is sized like a number;
- the label column (model names) may wrap or be ellipsised by the renderer, never below
  `LABEL_MIN` characters (or the longest name, if shorter);
- nothing is dropped or moved when the table fits as it is.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Literal

LABEL_MIN = 14
LABEL_MAX = 40
TEXT_MIN = 7
"""Room for `see [9]`: a text column is never narrower (numbers are dropped first)."""

Kind = Literal["label", "number", "text"]


@dataclass(frozen=True, slots=True)
class Column:
    """One column of a report table, its cells already spelled (`report.formatting`)."""

    header: str
    cells: tuple[str, ...]
    kind: Kind = "number"
    drop_rank: int | None = None
    """None: never dropped. Otherwise columns are dropped lowest rank first, when even the
    narrowest layout does not fit."""
    whole: bool = False
    """A text column always shown whole, as a number is (the verdict: never a footnote)."""

    @property
    def fixed(self) -> bool:
        """Shown at its natural width: a number, or a text that is always whole."""
        return self.kind == "number" or self.whole


@dataclass(frozen=True, slots=True)
class Overhead:
    """What a renderer adds around cells: `per_column` (padding, separators) and `fixed` (edges)."""

    per_column: int
    fixed: int = 0
    header_wraps: bool = False
    """True when the renderer wraps a header onto more lines (Rich), so only its longest word
    sets a minimum width; False when a header is one line (Textual's DataTable)."""


RICH_SIMPLE = Overhead(per_column=3, fixed=1, header_wraps=True)
"""A Rich `Table` with a SIMPLE box: one space of padding each side, a divider, two edges."""
DATA_TABLE = Overhead(per_column=2, fixed=2)
"""Textual's `DataTable` (cell padding 1 each side) in a container that may show a scrollbar."""


@dataclass(frozen=True, slots=True)
class FittedTable:
    """The columns to draw (cells may now carry footnote markers) and their widths."""

    columns: tuple[Column, ...]
    widths: tuple[int, ...]
    footnotes: tuple[str, ...] = ()
    """`[1] GPU peak: NVML library not found (…)`, in marker order."""
    dropped: tuple[str, ...] = ()
    """Headers of the columns left out for width."""
    width: int = field(default=0)
    """The width the table was fitted to."""

    def notes(self, whole: str = "`compare-tui report --format md`") -> tuple[str, ...]:
        """The lines to print under the table: footnotes, then what was left out and why
        (`whole`: the command that shows every column)."""
        lines = list(self.footnotes)
        if self.dropped:
            lines.append(
                f"Not shown at {self.width} columns: {', '.join(self.dropped)} "
                f"(a wider terminal shows them, as does {whole})."
            )
        return tuple(lines)


def natural_width(column: Column, overhead: Overhead) -> int:
    header = max((len(w) for w in column.header.split()), default=0) if overhead.header_wraps else len(column.header)
    return max([header, *(len(cell) for cell in column.cells)])


def fit_table(columns: Sequence[Column], width: int, overhead: Overhead) -> FittedTable:
    """Columns fitted into `width` characters under the rules of this module's docstring. When
    not even the label and the undroppable columns fit, they are returned as they are (the
    renderer then scrolls or wraps): a number is still never cut."""
    kept = list(columns)
    dropped: list[str] = []
    while _minimum(kept, overhead) > width:
        candidates = [c for c in kept if c.drop_rank is not None]
        if not candidates:
            break
        victim = min(candidates, key=lambda c: c.drop_rank)  # type: ignore[arg-type,return-value]
        kept.remove(victim)
        dropped.append(victim.header)
    room = width - overhead.fixed - overhead.per_column * len(kept)
    room -= sum(natural_width(c, overhead) for c in kept if c.fixed)
    widths = {id(c): natural_width(c, overhead) for c in kept}
    flexible = [c for c in kept if not c.fixed]
    wants = {id(c): min(widths[id(c)], LABEL_MAX) if c.kind == "label" else widths[id(c)] for c in flexible}
    floors = {id(c): _floor(c, overhead) for c in flexible}
    widths.update(_share(room, wants, floors))
    texts = [c for c in flexible if c.kind == "text"]
    # A text squeezed under its natural width needs only its footnoted form's width; the room
    # that frees goes first to texts that can then be shown whole (fewest characters first),
    # then to the labels (names read better whole).
    caps = {id(c): widths[id(c)] for c in texts if widths[id(c)] < wants[id(c)]}
    squeezed = {key: natural_width(_footnoted(c, caps[key], []), overhead) for c in texts if (key := id(c)) in caps}
    widths.update(squeezed)
    spare = room - sum(widths[id(c)] for c in flexible)
    for column in sorted((c for c in texts if id(c) in squeezed), key=lambda c: wants[id(c)] - widths[id(c)]):
        need = wants[id(column)] - widths[id(column)]
        if need <= spare:
            widths[id(column)] = wants[id(column)]
            spare -= need
            del squeezed[id(column)]
    footnotes: list[str] = []
    fitted: dict[int, Column] = {}
    for column in texts:
        if id(column) in squeezed:
            fitted[id(column)] = _footnoted(column, caps[id(column)], footnotes)
            # Markers are numbered in table order now, so a width may differ by a digit.
            widths[id(column)] = natural_width(fitted[id(column)], overhead)
    for column in (c for c in flexible if c.kind == "label"):
        extra = min(spare, wants[id(column)] - widths[id(column)])
        if extra > 0:
            widths[id(column)] += extra
            spare -= extra
    final = tuple(fitted.get(id(c), c) for c in kept)
    return FittedTable(final, tuple(widths[id(c)] for c in kept), tuple(footnotes), tuple(dropped), width)


def _floor(column: Column, overhead: Overhead) -> int:
    natural = natural_width(column, overhead)
    if column.fixed:
        return natural
    if column.kind == "label":
        return min(natural, LABEL_MIN)
    if column.kind == "text":
        header = natural_width(Column(column.header, ()), overhead)
        return min(natural, max(header, TEXT_MIN))
    return natural


def _share(room: int, wants: dict[int, int], floors: dict[int, int]) -> dict[int, int]:
    """Water-filling: every flexible column rises from its floor to a common level (never past
    what it wants) as high as `room` allows; the few characters left below the next level go
    one each to the columns still short, in order."""

    def at(level: int) -> dict[int, int]:
        return {k: max(floors[k], min(wants[k], level)) for k in wants}

    level = 0
    while level < max(wants.values(), default=0) and sum(at(level + 1).values()) <= room:
        level += 1
    given = at(level)
    left = room - sum(given.values())
    for key, want in wants.items():
        if left <= 0:
            break
        if given[key] < want:
            given[key] += 1
            left -= 1
    return given


def _minimum(columns: Sequence[Column], overhead: Overhead) -> int:
    return overhead.fixed + sum(overhead.per_column + _floor(c, overhead) for c in columns)


def _footnoted(column: Column, cap: int, footnotes: list[str]) -> Column:
    cells = []
    for cell in column.cells:
        if len(cell) <= cap:
            cells.append(cell)
            continue
        note = f"{column.header}: {cell}"
        marker = next((f"[{n}]" for n, text in enumerate(footnotes, 1) if text == f"[{n}] {note}"), None)
        if marker is None:
            marker = f"[{len(footnotes) + 1}]"
            footnotes.append(f"{marker} {note}")
        head = cell.split(" (", 1)[0]
        shortened = f"{head} {marker}"
        cells.append(shortened if len(shortened) <= cap else f"see {marker}")
    return replace(column, cells=tuple(cells))

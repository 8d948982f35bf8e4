"""The cells of Home's Sets table, fitted to the screen's width. Pure: no Textual here.

At 120 columns every column is shown whole. Narrower, the table gives up first what the line
under it (the highlighted set's detail) says whole anyway: the digest, then the version; then
the end of a long set name (cut with `…`). The status, the task count and the scorers are never
cut: a set's name from its manifest may be forty characters, and the screen's edge used to cut
the scorers column to `comman`.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.cells import cell_len

from compare_tui.report import formatting as fmt
from compare_tui.tui.home_data import SetRow
from compare_tui.tui.run_cells import clip

HEADERS = ("set", "status", "version", "tasks", "scorers", "digest")
"""The Sets table's columns when the screen is wide enough for all of them, in order."""
LEFT_OUT_FIRST = ("digest", "version")
"""Columns the table leaves to the detail line at a narrow width, the first first."""
NAME_MIN = 12
"""A set name is never cut shorter than this (the table then scrolls sideways)."""
SCORERS_WIDTH = 22
"""The scorers cell's widest: past it, as many kinds as fit and `+N more`."""
_PADDING = 2
"""Cells a DataTable adds to each column (one each side)."""


def fit_list(text: str, width: int) -> str:
    """`exact×10, human×2` whole when it fits `width`, else as many items as fit and `+N more`."""
    if len(text) <= width:
        return text
    items = text.split(", ")
    for keep in range(len(items) - 1, 0, -1):
        shown = ", ".join(items[:keep]) + f" +{len(items) - keep} more"
        if len(shown) <= width:
            return shown
    return f"{len(items)} kinds"


def status_cell(row: SetRow) -> str:
    """`✓ valid`, or `✗ N problem(s)`: the problems themselves are on the detail line."""
    if not row.problems:
        return "✓ valid"
    return f"✗ {len(row.problems)} problem{'s' if len(row.problems) != 1 else ''}"


def set_cells(row: SetRow) -> dict[str, str]:
    """Every cell of one set's row, by header."""
    tasks = fmt.DASH if row.tasks is None else str(row.tasks)
    cells = (row.name, status_cell(row), row.version, tasks, fit_list(row.scorers, SCORERS_WIDTH), row.digest)
    return dict(zip(HEADERS, cells, strict=True))


def fit_sets(rows: Sequence[SetRow], width: int) -> tuple[tuple[str, ...], list[tuple[str, ...]], list[int]]:
    """The headers to show, each row's cells under them and each column's width, in `width` cells."""
    whole = [set_cells(row) for row in rows]
    headers = list(HEADERS)
    widths = _widths(headers, whole)
    for header in LEFT_OUT_FIRST:
        if _table_width(widths) <= width:
            break
        headers.remove(header)
        widths = _widths(headers, whole)
    over = _table_width(widths) - width
    if over > 0:  # the name gives way, down to NAME_MIN; the other cells stay whole
        room = max(widths[0] - over, min(widths[0], NAME_MIN))
        whole = [{**cells, "set": clip(cells["set"], room)} for cells in whole]
        widths = _widths(headers, whole)
    return tuple(headers), [tuple(cells[h] for h in headers) for cells in whole], widths


def _widths(headers: Sequence[str], rows: Sequence[dict[str, str]]) -> list[int]:
    return [max([cell_len(h), *(cell_len(row[h]) for row in rows)]) for h in headers]


def _table_width(widths: Sequence[int]) -> int:
    return sum(widths) + _PADDING * len(widths)

"""The cells of Home's runs table, fitted to the screen's width. Pure: no Textual here.

At 120 columns every cell is whole. Narrower, the table gives up first what the line under it
(the highlighted run's detail) says whole anyway: the set's version, and the date's year when
every run listed is of one year; then the end of a long model or set name (cut with `…`). The
run id, the pass rate and the status are never cut.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.cells import cell_len

from compare_tui.report import formatting as fmt
from compare_tui.store import RunRecord
from compare_tui.tui.home_data import run_date

HEADERS = ("run", "date (UTC)", "model", "pass rate", "status", "set")
"""The runs table's columns, in order."""
RATE = HEADERS.index("pass rate")
_MODEL, _SET = HEADERS.index("model"), HEADERS.index("set")
_PADDING = 2
"""Cells a DataTable adds to each column (one each side)."""


def rate_room(tasks_planned: int) -> str:
    """The widest pass-rate cell a run of `tasks_planned` tasks can show (`100.0% (12/12)`), so
    the column has room for every rate before the reports that give them are read."""
    return max(f"100.0% ({tasks_planned}/{tasks_planned})", f"{fmt.DASH} (0 scored)", key=cell_len)


def run_cells(run: RunRecord, rate: str, *, short: bool = False, year: bool = True) -> tuple[str, ...]:
    """One run's cells; `short` leaves out the set's version, and `year` false the date's year."""
    date = run_date(run.created_at)
    date = date if year or not run.created_at else date[5:]
    golden = run.goldset_id if short else f"{run.goldset_id} {run.goldset_version}"
    return (run.id[:8], date, run.model_name, rate, str(run.status), golden)


def column_widths(rows: Sequence[Sequence[str]], rate_width: int = 0) -> list[int]:
    """Each column's width: its widest cell or header (the pass rate at least `rate_width`)."""
    widths = [max([cell_len(h), *(cell_len(row[i]) for row in rows)]) for i, h in enumerate(HEADERS)]
    widths[RATE] = max(widths[RATE], rate_width)
    return widths


def table_width(widths: Sequence[int]) -> int:
    return sum(widths) + _PADDING * len(widths)


def fit_runs(
    runs: Sequence[RunRecord], rates: Sequence[str], rooms: Sequence[str], width: int
) -> tuple[list[tuple[str, ...]], list[int]]:
    """The rows of `runs` (their pass-rate cells `rates`, the widest each could become `rooms`)
    fitted to `width` cells, and each column's width (the pass rate's with room for `rooms`)."""
    rate_width = max([cell_len(r) for r in [*rates, *rooms]], default=0)
    whole = [run_cells(r, rate) for r, rate in zip(runs, rates, strict=True)]
    widths = column_widths(whole, rate_width)
    if table_width(widths) <= width:
        return whole, widths
    year = len({r.created_at[:4] for r in runs}) > 1  # a year shared by all tells no run apart
    rows = [run_cells(r, rate, short=True, year=year) for r, rate in zip(runs, rates, strict=True)]
    widths = column_widths(rows, rate_width)
    over = table_width(widths) - width
    if over <= 0:
        return rows, widths
    model, golden = widths[_MODEL], widths[_SET]
    room = max(model + golden - over, cell_len(HEADERS[_MODEL]) + cell_len(HEADERS[_SET]))
    # The set gives way first, down to half the room; the model keeps what is left.
    golden_fit = max(min(golden, room // 2), room - model)
    rows = [_cut(row, room - golden_fit, golden_fit) for row in rows]
    return rows, column_widths(rows, rate_width)


def _cut(row: tuple[str, ...], model: int, golden: int) -> tuple[str, ...]:
    cells = list(row)
    cells[_MODEL], cells[_SET] = clip(cells[_MODEL], model), clip(cells[_SET], golden)
    return tuple(cells)


def clip(text: str, width: int) -> str:
    """`text` whole when it fits `width` cells, else its start and `…` in exactly `width`."""
    if cell_len(text) <= width:
        return text
    kept = ""
    for char in text:
        if cell_len(kept + char) > width - 1:
            break
        kept += char
    return kept + "…"

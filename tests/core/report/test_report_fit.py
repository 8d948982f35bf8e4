"""Report tables fitted to the terminal's width (`report.fit`) and the text report at 80
columns with real-length texts: the NVML reason, long model names, six-figure costs."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st
from rich.console import Console

from compare_tui.report import RunInput, build_report, fit
from compare_tui.report import formatting as fmt
from compare_tui.report.render_text import render_text
from tests.core.report.test_report import TOKEN_PRICE, attempts, inputs, make_run

NVML_REASON = "NVML library not found (no NVIDIA driver installed on this machine)"
LONG_A = "Qwen2.5-Coder-32B-Instruct-Q4_K_M-long-name"
LONG_B = "meta-llama/Llama-3.1-70B-Instruct-Turbo"


def long_texts_report():
    """Two runs whose every text is as long as real ones get: names, reasons, six-figure costs."""
    a = RunInput(
        make_run(
            "run-a",
            LONG_A,
            gpu={"measured": False, "reason": NVML_REASON},
            cost_basis={"basis": "hardware", "usd_per_hour": 250000.0, "gpu_count": 1},
        ),
        attempts("pppppppffe" * 3),
    )
    b = RunInput(
        make_run("run-b", LONG_B, cost_basis=TOKEN_PRICE, model_entry={"kind": "hosted"}, gpu=None),
        attempts("ppppfffeep" * 3, ttft_ms=12345.0, e2e_ms=123456.0, prompt_tokens=123456, completion_tokens=4567),
    )
    return build_report(inputs(a, b))


def text_at(report, width: int) -> str:
    console = Console(record=True, width=width, color_system=None)
    console.print(render_text(report))
    return console.export_text()


def figures_of(report) -> dict[str, list[str]]:
    """Every number a table cell shows, by the header of its column."""
    out: dict[str, list[str]] = {}
    for row in report.models:
        cells = {
            "pass rate": fmt.pass_rate(row.pass_rate),
            "95% CI": fmt.interval(row.pass_rate.interval),
            "TTFT p50/p95/p99": fmt.latency(row.latency.ttft_ms),
            "E2E p50/p95/p99": fmt.latency(row.latency.e2e_ms),
            "tokens/task": fmt.tokens(row.tokens),
            "run total": fmt.money(row.cost.total),
            "per completed task": fmt.cost_per_task(row.cost),
        }
        for point in row.cost.utilisation:
            cells[f"{point.utilisation * 100:.0f}%"] = fmt.money(point.per_task)
        for header, cell in cells.items():
            out.setdefault(header, []).append(cell)
    return out


def dropped_headers(text: str) -> set[str]:
    flat = " ".join(text.split())
    found = set()
    for match in re.finditer(r"Not shown at \d+ columns: (.*?) \(a wider terminal", flat):
        found |= {h.strip() for h in match.group(1).split(",")}
    return found


def test_the_text_report_fits_80_columns_and_shows_every_number_whole_or_says_it_left_it_out():
    report = long_texts_report()
    text = text_at(report, 80)
    lines = text.splitlines()
    assert max(len(line.rstrip()) for line in lines) <= 80
    dropped = dropped_headers(text)
    for header, cells in figures_of(report).items():
        for cell in cells:
            assert cell in text or header in dropped, f"{header}: {cell!r} neither shown whole nor noted as left out"
    assert "…" not in text  # nothing ellipsised
    # The GPU reason is a footnote, not a 15-line cell; the cost basis names no GPU that is not there.
    assert any(line.startswith("[") and "GPU peak: not measured (NVML library" in line for line in lines)
    assert "(1 GPU)" not in text
    assert "$125,000.00" in text


def test_at_120_columns_nothing_is_left_out():
    report = long_texts_report()
    text = text_at(report, 120)
    assert max(len(line.rstrip()) for line in text.splitlines()) <= 120
    assert not dropped_headers(text)
    for cells in figures_of(report).values():
        assert all(cell in text for cell in cells)


def test_the_cost_basis_says_when_a_stated_gpu_was_not_measured():
    report = long_texts_report()
    row = report.models[0]
    assert fmt.cost_basis(row.cost, row.gpu) == "hardware $250,000.00/h (1 GPU stated; none measured)"
    assert fmt.cost_basis(row.cost) == "hardware $250,000.00/h (1 GPU)"  # no GPU figure given: as stated


# ------------------------------------------------------------------ fit_table properties

cells = st.text(alphabet="abc ()$,.0123456789", min_size=0, max_size=60)


@st.composite
def tables(draw):
    rows = draw(st.integers(1, 4))
    kinds = draw(st.lists(st.sampled_from(["number", "text"]), min_size=1, max_size=7))
    columns = [fit.Column("model", tuple(draw(st.text("xyz-", min_size=1, max_size=50)) for _ in range(rows)), "label")]
    for n, kind in enumerate(kinds):
        values = tuple(draw(cells) for _ in range(rows))
        rank = draw(st.one_of(st.none(), st.integers(0, 9))) if kind == "number" else None
        columns.append(fit.Column(f"col {n}", values, kind, rank))
    return columns


@given(tables(), st.integers(20, 200), st.sampled_from([fit.RICH_SIMPLE, fit.DATA_TABLE]))
def test_a_fitted_table_keeps_numbers_whole_and_fits_when_it_can(columns, width, overhead):
    fitted = fit.fit_table(columns, width, overhead)
    by_header = {c.header: c for c in columns}
    kept = {c.header for c in fitted.columns}
    assert kept | set(fitted.dropped) == set(by_header) and not kept & set(fitted.dropped)
    assert "model" in kept
    for column, w in zip(fitted.columns, fitted.widths, strict=True):
        original = by_header[column.header]
        if column.kind == "number":
            assert column.cells == original.cells and w >= max(len(c) for c in column.cells)
        if column.kind == "text":
            assert all(len(c) <= w for c in column.cells)
            for before, after in zip(original.cells, column.cells, strict=True):
                if before != after:  # moved to a footnote, which holds the whole text
                    marker = after.split()[-1]
                    assert any(note.startswith(marker) and note.endswith(before) for note in fitted.footnotes)
    total = overhead.fixed + sum(overhead.per_column + w for w in fitted.widths)
    undroppable = [c for c in columns if c.drop_rank is None]
    if fit._minimum(undroppable, overhead) <= width:
        assert total <= width


@given(tables())
def test_a_table_that_fits_is_left_as_it_is(columns):
    fitted = fit.fit_table(columns, 10_000, fit.RICH_SIMPLE)
    assert fitted.columns == tuple(columns) and not fitted.footnotes and not fitted.dropped


@given(st.text(alphabet="abcdefghij.-0123456789", min_size=1, max_size=40), st.integers(min_value=4, max_value=40))
def test_a_cut_model_label_keeps_the_winners_star(name, width):
    from compare_tui.report.columns import WINNER_MARK
    from compare_tui.tui.widgets.report_tables import shorten

    starred = name + WINNER_MARK
    if len(starred) > width:
        cut = shorten(starred, width)
        assert len(cut) == width and cut.endswith("…" + WINNER_MARK) and starred.startswith(cut[:-3])
    plain = name * 3
    if len(plain) > width:
        assert shorten(plain, width) == plain[: width - 1] + "…"


def test_the_verdict_column_is_always_whole_never_a_footnote():
    # At 120×40 the verdict moved to `see [1]` … `[1] verdict: inconclusive`; at 80 columns one
    # candidate's verdict was inline and another's footnoted in the same column.
    from compare_tui.report.fit import DATA_TABLE, Column, fit_table

    cols = [
        Column("candidate", ("qwen2.5-coder-0.5b", "gemma3-270m"), "label"),
        Column("verdict", ("inconclusive", "no worse"), "text", whole=True),
        Column("Δ pass", ("+10.0 pts", "-2.0 pts")),
        Column("95% CI", ("-28.0 to +45.4 pts", "-4.0 to +1.6 pts")),
        Column("McNemar p", ("1", "0.5"), drop_rank=4),
    ]
    for width in (40, 60, 80, 120):
        fitted = fit_table(cols, width, DATA_TABLE)
        verdicts = next(c for c in fitted.columns if c.header == "verdict")
        assert verdicts.cells == ("inconclusive", "no worse")
        assert not any("verdict:" in note for note in fitted.footnotes)

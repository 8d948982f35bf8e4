"""The report screen's latency histograms (the report's own distributions) and its publish key:
`b` writes the bundle in a worker under the bundles folder, records it and notifies the path."""

from __future__ import annotations

import dataclasses
import hashlib
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from compare_tui.report import build_report, load_report_inputs
from compare_tui.report.server_latency import LatencyCrossCheck
from compare_tui.tui.shown_path import fit_path, home_relative, toast_text_width
from compare_tui.tui.widgets.latency_histogram import (
    LatencyHistogram,
    bars,
    histogram_text,
)
from tests.support.home_app import settle
from tests.tui.test_tui_data import COMPARISON_ID, build_store
from tests.tui.test_tui_decision import app_for, open_report


def test_the_ttft_cross_check_follows_the_histograms_in_the_reports_words(tmp_path):
    store, _ = build_store(tmp_path)
    report = build_report(load_report_inputs(store, COMPARISON_ID))
    store.close()
    assert report.server_latency == ()  # the fixture's servers reported no latency of their own
    check = LatencyCrossCheck("r", "m", "llama.cpp timings", 3, 110.0, None, 112.0, 130.0, 131.0)
    text = histogram_text(dataclasses.replace(report, server_latency=(check,)))
    assert text == histogram_text(report) + "\n" + check.line()
    assert "llama.cpp prompt processing (timings.prompt_ms: from a slot starting on the prompt; no queue) " in text
    assert "(llama.cpp timings, 3 requests) p50 110 ms" in text and "server-side TTFT" not in text


def test_bars_scale_to_the_fullest_bin_and_never_hide_a_task():
    assert bars((0, 1, 5, 10), 10) == " ▁▄█"
    assert bars((0, 0), 0) == "  "


async def test_the_figures_tab_shows_each_models_distribution_and_b_publishes(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    store, app = app_for(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_report(pilot)
        report = build_report(load_report_inputs(store, COMPARISON_ID))
        shown = str(screen.query_one(LatencyHistogram).render())
        assert shown == histogram_text(report)
        for row in report.models:
            assert f"n={row.latency.ttft_ms.n}" in shown and row.label[:27] in shown
        await pilot.press("b")
        await settle(pilot)
        index = tmp_path / "data" / "compare-tui" / "bundles" / COMPARISON_ID / "index.html"
        assert index.exists()
        notes = [n.message for n in pilot.app._notifications]
        shown = fit_path(index, toast_text_width(80))
        assert any(n.startswith(shown + "\n") for n in notes)
        recorded = store.list_bundles(COMPARISON_ID)
        assert [b.sha256 for b in recorded] == ["sha256:" + hashlib.sha256(index.read_bytes()).hexdigest()]
    store.close()


async def test_a_folder_that_cannot_be_written_is_a_notification_not_a_crash(tmp_path, monkeypatch):
    (tmp_path / "data").write_text("a file where the data folder should be")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    store, app = app_for(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_report(pilot)
        await pilot.press("b")
        await settle(pilot)
        notes = [(n.title, n.message) for n in pilot.app._notifications]
        assert any(title == "Not published" and "cannot write the bundle" in message for title, message in notes)
        assert store.list_bundles() == []
    store.close()


async def test_a_long_path_outside_home_keeps_its_file_name_whole_in_the_toast_at_80_columns(tmp_path, monkeypatch):
    # A path wider than the toast folded at any character (`…/compare-tui` / `/bundles/…`):
    # now its middle gives way to `…` and the line ends with the page's name, whole.
    from textual.widgets._toast import Toast

    deep = tmp_path / "srv" / "a-rather-long-folder-name" / "and-another-one-below-it" / "data"
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_DATA_HOME", str(deep))
    store, app = app_for(tmp_path)
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await open_report(pilot)
        await pilot.press("b")
        await settle(pilot)
        await pilot.pause(0.3)
        index = deep / "compare-tui" / "bundles" / COMPARISON_ID / "index.html"
        assert index.exists() and len(str(index)) > 80
        toasts = [t for t in app.screen.query(Toast) if "Published" in str(t.render())]
        assert toasts, "no toast says the bundle was published"
        toast = toasts[0]
        lines = str(toast.render()).splitlines()
        path_line = lines[1]
        assert path_line.endswith(f"/bundles/{COMPARISON_ID}/index.html") and "…/" in path_line
        assert path_line.startswith(f"/{index.parts[1]}/…/")  # its first folder, then the ellipsis
        assert len(path_line) <= toast.content_region.width
        assert "compare-tui publish --list" in str(toast.render())
    store.close()


@given(
    parts=st.lists(st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789._-", min_size=1, max_size=30), min_size=1),
    absolute=st.booleans(),
    width=st.integers(min_value=3, max_value=120),
)
def test_a_fitted_path_fits_and_ends_with_as_much_of_the_file_name_as_fits(parts, absolute, width):
    path = Path(("/" if absolute else "") + "/".join(parts))
    text = str(path)
    shown = fit_path(path, width, home=Path("/nonexistent-home"))
    assert len(shown) <= width
    if len(text) <= width:
        assert shown == text
        return
    name = path.name
    assert shown.endswith(name if len(name) + 2 <= width else name[-(width - 1) :])
    assert "…" in shown
    # What is kept is the path's own start and end, around one ellipsis.
    head, _, tail = shown.partition("…")
    assert text.startswith(head) and text.endswith(tail)


def test_home_is_written_as_a_tilde(tmp_path):
    assert home_relative(tmp_path / "a" / "b.html", home=tmp_path) == "~/a/b.html"
    assert fit_path(tmp_path / "x" / "y" / "page.html", 13, home=tmp_path) == "~/…/page.html"

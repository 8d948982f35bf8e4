"""The report screen's serving block and the stack caveat (issue 46): a llama.cpp Q4_K_M run
against a vLLM bf16 run of one model, at 80×24. Pilot checks what the block says; the snapshot
shows it."""

from __future__ import annotations

import pytest
from textual.widgets import Static

from compare_tui.report.serving import STACK_CAVEAT
from compare_tui.tui.app import create_app
from tests.support.home_app import open_report, settle
from tests.support.stack_comparison import build_stack_store
from tests.tui.test_tui_data import fixed_probe, write_catalogue

SIZE = (80, 24)


@pytest.fixture
def make_app(tmp_path):
    store, sets = build_stack_store(tmp_path)
    catalogue = write_catalogue(tmp_path / "models.toml")
    yield lambda: create_app(store=store, catalogue_path=catalogue, sets_dir=sets, reviewer="tester", probe=fixed_probe)
    store.close()


async def test_the_figures_tab_ends_with_the_serving_block_and_the_summary_names_the_stack_caveat(make_app):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        report = await open_report(pilot)
        block = str(report.query_one("#serving", Static).render())
        assert "qwen-vllm\n  stack: vLLM 0.32.0" in block
        assert "  tool-call parser: hermes (stated, not checked)" in block
        assert "  chat template: compare-tui's shipped qwen2.5-coder-tools.jinja, sha256:6f1c0ab20000" in block
        assert STACK_CAVEAT in str(report.query_one("#caveats", Static).render())


async def _serving_in_view(pilot) -> None:
    await settle(pilot)
    await pilot.press("enter")
    await settle(pilot)
    await pilot.press("2")
    await settle(pilot)
    pilot.app.screen.query_one("#serving-title").scroll_visible(top=True, animate=False)
    await settle(pilot)


def test_report_serving_block(make_app, snap_compare):
    assert snap_compare(make_app(), terminal_size=SIZE, run_before=_serving_in_view)

"""The app over the small store of `tests/tui/test_tui_data.py`, at 80x24, for Pilot tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from compare_tui.tui.app import CompareApp, create_app
from tests.tui.test_tui_data import build_store, fixed_probe, write_catalogue

SIZE = (80, 24)


def home_app(tmp_path: Path) -> Iterator[CompareApp]:
    """A fixture's body: the app (reviewer `tester`, fixed health), its store closed after."""
    store, sets = build_store(tmp_path)
    catalogue = write_catalogue(tmp_path / "models.toml")
    yield create_app(store=store, catalogue_path=catalogue, sets_dir=sets, reviewer="tester", probe=fixed_probe)
    store.close()


async def settle(pilot, rounds: int = 3) -> None:
    """Let workers finish and the screen catch up, `rounds` times."""
    for _ in range(rounds):
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()


async def open_report(pilot):
    """Enter on Home's first run: the report screen, once it is up."""
    from compare_tui.tui.screens.report import ReportScreen

    await pilot.press("enter")
    await settle(pilot)
    assert isinstance(pilot.app.screen, ReportScreen)
    return pilot.app.screen

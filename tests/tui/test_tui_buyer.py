"""The New run screen chosen like a buyer: today's model panel, the catalogue grouped by blended
price with the recommended set pre-selected, the selection saved per workload and restored,
ctrl+r back to the recommended, the footer, and the daily eval budget's warning.

The store holds past runs of the catalogue's fake-a (token price) and fake-b (hourly, promoted:
today's model) on the mini set: fake-b's measured throughput makes it dearer than fake-a at the
workload's measured mix, so fake-a is cheaper, measured and recommended; `unpinned` has no price.
"""

from __future__ import annotations

import pytest

from compare_tui.goldset import load_golden_set
from compare_tui.store import DecisionRecord
from compare_tui.tui.app import create_app
from compare_tui.tui.screens.new_run import NewRunScreen
from tests.support.home_app import settle
from tests.tui.test_tui_data import (
    OUTCOMES,
    SET_NAME,
    TOKEN_PRICE,
    _attempts,
    _run,
    build_store,
    fixed_probe,
    write_catalogue,
)

FAKE_A_PRICE = {**TOKEN_PRICE, "usd_per_mtok_input": 1.0, "usd_per_mtok_output": 2.0}
FAKE_B_HOURLY = {"basis": "hardware", "usd_per_hour": 0.5}


@pytest.fixture
def buyer_store(tmp_path):
    store, sets = build_store(tmp_path)
    loaded = load_golden_set(store.get_run("a1a1").goldset_path)
    store.create_run(_run("fake-a", "d4d4d4d4d4d4d4d4", loaded, cost=FAKE_A_PRICE))
    store.record_attempts(_attempts("d4d4d4d4d4d4d4d4", OUTCOMES["smollm2-135m"]))  # 7 of 9
    store.create_run(_run("fake-b", "e5e5e5e5e5e5e5e5", loaded, cost=FAKE_B_HOURLY))
    store.record_attempts(_attempts("e5e5e5e5e5e5e5e5", OUTCOMES["gemma3-270m"]))  # 8 of 10
    store.record_decision(
        DecisionRecord(
            id="dec0000000000001",
            workload_id="support-mini",
            model="fake-b",
            kind="initial",
            reason="what we run",
            decided_at="2026-01-06T09:00:00Z",
        )
    )
    yield store, sets
    store.close()


def make_app(tmp_path, buyer_store, config: str | None = None):
    store, sets = buyer_store
    config_path = None
    if config is not None:
        config_path = tmp_path / "config.toml"
        config_path.write_text(config)
    catalogue = write_catalogue(tmp_path / "models.toml")
    return create_app(
        store=store,
        catalogue_path=catalogue,
        sets_dir=sets,
        reviewer="tester",
        probe=fixed_probe,
        config_path=config_path,
    )


async def open_new_run(pilot, sets) -> NewRunScreen:
    await settle(pilot)
    pilot.app.open_new_run(str(sets / SET_NAME))
    await settle(pilot)
    screen = pilot.app.screen
    assert isinstance(screen, NewRunScreen)
    return screen


def text_of(screen, selector: str) -> str:
    return str(screen.query_one(selector).render())


async def test_today_panel_grouped_catalogue_pre_selection_and_footer(tmp_path, buyer_store):
    app = make_app(tmp_path, buyer_store)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_new_run(pilot, buyer_store[1])
        today = text_of(screen, "#today")
        assert "Today's model: fake-b (promoted)" in today and "/Mtok blended" in today
        assert "Mix: 60 in / 3 out tokens a request (measured)" in today
        models = screen.query_one("#model-list")
        # Headings are not models; fake-a is cheaper and measured, so recommended with today's.
        prompts = [str(models.get_option_at_index(i).prompt) for i in range(models.option_count)]
        assert prompts[0] == "cheaper" and prompts[2].startswith("about the same")
        assert prompts[1].startswith("✓ fake-a ★ · $1.05/Mtok · saves 95% · 78% (40–97%) 2026-01-05")
        assert prompts[3].startswith("✓ fake-b ★ · $22.05/Mtok · today · 80% (44–97%)")
        assert prompts[4] == "price not known"
        assert prompts[5].startswith("unpinned (refused) · no price · not measured yet")
        assert sorted(models.selected) == ["fake-a", "fake-b"]
        assert text_of(screen, "#selection-footer") == "2 selected · $1.05–$22.05/Mtok blended vs today's $22.05/Mtok"


async def test_the_selection_is_saved_per_workload_restored_and_reset(tmp_path, buyer_store):
    store, sets = buyer_store
    app = make_app(tmp_path, buyer_store)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_new_run(pilot, sets)
        await pilot.press("space")  # the highlighted row is fake-a, the first model: unpick it
        await settle(pilot)
        assert screen.query_one("#model-list").selected == ["fake-b"]
        assert store.saved_selection("support-mini") == ("fake-b",)
        assert text_of(screen, "#selection-footer") == "1 selected · $22.05/Mtok blended vs today's $22.05/Mtok"
        await pilot.press("escape")
        await settle(pilot)
        screen = await open_new_run(pilot, sets)  # the next run: restored, not recommended
        assert screen.query_one("#model-list").selected == ["fake-b"]
        await pilot.press("ctrl+r")
        await settle(pilot)
        assert sorted(screen.query_one("#model-list").selected) == ["fake-a", "fake-b"]
        assert store.saved_selection("support-mini") is None


async def test_the_daily_budget_warns_which_model_a_run_would_skip(tmp_path, buyer_store):
    # The baseline (fake-b, ≤ $0.000542) is weighed first: $0.0006 a day has room for it alone.
    app = make_app(tmp_path, buyer_store, config="[budget]\nusd_per_day = 0.0006\n")
    plans = []
    app.open_live = plans.append  # capture the plan instead of starting a run
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_new_run(pilot, buyer_store[1])
        estimate = text_of(screen, "#estimate")
        assert "Daily eval budget $0.0006: $0 spent today, $0.0006 left; resets at 00:00 UTC" in estimate
        assert "⚠ 1 of 2 models would not fit in today's eval budget and will be skipped (fake-a)" in estimate
        assert "fake-a: skipped before it started: its estimated spend ≤ $" in estimate
        await pilot.press("ctrl+s")
        await settle(pilot)
    [plan] = plans
    assert plan.budget is not None and plan.budget.usd_per_day == 0.0006
    assert plan.model_names == ("fake-b", "fake-a")  # the engine skips fake-a and records why


async def test_ctrl_s_starts_nothing_when_the_budget_leaves_no_model_and_says_so(tmp_path, buyer_store):
    app = make_app(tmp_path, buyer_store, config="[budget]\nusd_per_day = 0.0000001\n")
    plans = []
    app.open_live = plans.append
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_new_run(pilot, buyer_store[1])
        status = text_of(screen, "#start-status")
        assert status.startswith("✗ Not ready: today's eval budget leaves nothing for 2 chosen models; resets at")
        await pilot.press("ctrl+s")
        await settle(pilot)
        [message] = [n.message for n in app._notifications]
        assert message.startswith("Nothing started: today's eval budget leaves nothing for 2 chosen models;")
    assert plans == []


SIZES = {"80x24": (80, 24), "120x40": (120, 40)}


@pytest.mark.parametrize("size", list(SIZES), ids=list(SIZES))
def test_snapshot_new_run_buyer(tmp_path, buyer_store, snap_compare, size):
    app = make_app(tmp_path, buyer_store)

    async def run_before(pilot) -> None:
        await open_new_run(pilot, buyer_store[1])

    assert snap_compare(app, terminal_size=SIZES[size], run_before=run_before)


def test_the_new_run_view_reads_the_gateway_traffic_log_once_for_every_workload(tmp_path, monkeypatch):
    import json
    import shutil
    from datetime import UTC, datetime
    from pathlib import Path

    from compare_tui.tui import new_run_choices
    from compare_tui.tui.workspace import Workspace
    from compare_tui.vocabulary import SpendSource

    store, sets = build_store(tmp_path)
    workloads = ["alpha", "beta", "gamma"]
    for index, workload in enumerate(workloads):
        copy = shutil.copytree(sets / SET_NAME, sets / workload)
        manifest = copy / "golden.toml"
        manifest.write_text(manifest.read_text().replace('workload_id = "support-mini"', f'workload_id = "{workload}"'))
        store.record_decision(
            DecisionRecord(
                id=f"dec{index:013d}",
                workload_id=workload,
                model="fake-a",
                kind="initial",
                reason="what we run",
                decided_at="2026-01-06T09:00:00Z",
            )
        )
    log = tmp_path / "traffic.jsonl"
    moment = datetime.now(UTC).timestamp() - 60
    log.write_text(
        "".join(
            json.dumps({"model_group": w, "endTime": moment, "response_cost": 0.25 * (i + 1)}) + "\n"
            for i, w in enumerate(workloads)
        )
    )
    monkeypatch.setattr(new_run_choices, "gateway_traffic_log", lambda: log)
    reads = []
    read_text = Path.read_text

    def counted(self, *args, **kwargs):
        if self == log:
            reads.append(self)
        return read_text(self, *args, **kwargs)

    monkeypatch.setattr(Path, "read_text", counted)
    workspace = Workspace(store, write_catalogue(tmp_path / "models.toml"), sets, "tester", fixed_probe)
    try:
        choices = new_run_choices.read_choices(workspace, None)
    finally:
        store.close()
    assert len(reads) == 1  # once for the view, not once per workload
    for index, workload in enumerate(workloads):
        today = choices.shortlists[workload].today
        assert today is not None and today.spend_source is SpendSource.GATEWAY_LOG
        assert today.spend == pytest.approx({1: 0.25 * (index + 1), 7: 0.25 * (index + 1), 30: 0.25 * (index + 1)})

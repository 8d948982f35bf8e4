"""The Live switches screen (`tui/screens/live_switches.py`): each workload's latest canary as
`canary status` computes it, the highlighted one's reason and last change, a hand edit shown as
a refusal, and `a` taking the next step through `compare-tui canary advance` only when the
evidence allows it. Snapshots at 80×24 and 120×40."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from textual.widgets import DataTable, Static

from compare_tui.canary import routes
from compare_tui.store import CanaryChangeRecord, CanaryPair, CanaryRecord, Store
from compare_tui.tui.screens.live_switches import EMPTY, LiveSwitchesScreen
from compare_tui.vocabulary import CanaryChange, CanaryState
from tests.support.home_app import settle
from tests.support.screen_host import ScreenHost

AT = "2026-12-07T15:00:00Z"
A_PARAMS = {"model": "openai/smollm2-135m", "api_base": "http://127.0.0.1:18181/v1", "api_key": "none"}
B_PARAMS = {"model": "openai/gemma3-270m", "api_base": "http://127.0.0.1:18182/v1", "api_key": "none"}


def _canary(store: Store, folder: Path, workload: str, outcomes: list[int], state: CanaryState, weight: float) -> None:
    entries = routes.canary_entries(workload, A_PARAMS, "smollm2-135m", B_PARAMS, "gemma3-270m", weight)
    config = folder / f"{workload}.yaml"
    config.write_text(json.dumps({"model_list": entries}))
    canary = CanaryRecord(
        id=f"canary-{workload}", workload_id=workload, alias=workload, baseline="smollm2-135m", candidate="gemma3-270m",
        set_path="set", steps=(25.0, 50.0, 100.0), step=0, weight=weight, routes_digest=routes.routes_digest(entries),
        state=state, margin_pp=10.0, min_pairs=5, gateway_config=str(config), traffic_log=str(folder / "t.jsonl"),
        started_at=AT, updated_at=AT,
    )  # fmt: skip
    change = CanaryChangeRecord(
        canary_id=canary.id, workload_id=workload, at=AT, change=CanaryChange.STARTED, from_weight=0, to_weight=weight,
        decided_by="ana", reason=f"B enters at {weight:g}%",
    )  # fmt: skip
    store.start_canary(canary, change)
    for i, x in enumerate(outcomes):
        store.add_canary_pair(CanaryPair(canary_id=canary.id, call_id=f"c{i}", seq=i, paired=x, at=AT), i)


@pytest.fixture
def store(tmp_path: Path):
    with Store.open(tmp_path / "runs.sqlite") as opened:
        _canary(opened, tmp_path, "tickets", [0] * 70, CanaryState.STEPPING, 25.0)
        _canary(opened, tmp_path, "greetings", [1, 0, 0], CanaryState.STEPPING, 25.0)
        yield opened


class Launches:
    def __init__(self) -> None:
        self.argv: list[list[str]] = []

    def __call__(self, argv: list[str]) -> tuple[int, str]:
        self.argv.append(argv)
        return 0, ""


def _rows(table: DataTable) -> list[list[str]]:
    return [[str(cell) for cell in table.get_row_at(i)] for i in range(table.row_count)]


async def test_each_canary_is_a_row_with_its_verdict_and_what_is_next(store: Store) -> None:
    async with ScreenHost(store, LiveSwitchesScreen).run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        rows = _rows(pilot.app.screen.query_one("#switches-table", DataTable))
        assert rows[0] == ["greetings", "gemma3-270m", "25%", "not yet", "[−76, +95]", "3", "hold"]
        assert rows[1] == ["tickets", "gemma3-270m", "25%", "no worse", "[−8, +8]", "70", "ready"]
        detail = str(pilot.app.screen.query_one("#switch-detail", Static).render())
        assert "stepping, step 1 of 3, gemma3-270m at 25% vs smollm2-135m" in detail
        assert "verdict not yet" in detail and "last change 2026-12-07T15:00:00: started 0% → 25%" in detail


async def test_a_takes_the_next_step_only_when_the_evidence_allows_it(store: Store) -> None:
    launches = Launches()
    async with ScreenHost(store, lambda: LiveSwitchesScreen(launches)).run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("a")  # greetings: hold
        await settle(pilot)
        assert launches.argv == []
        await pilot.press("down", "a")  # tickets: ready → asked first
        await settle(pilot)
        await pilot.press("y")
        await settle(pilot)
        assert [argv[3:6] for argv in launches.argv] == [["canary", "advance", "tickets"]]


async def test_a_hand_edit_is_shown_as_a_refusal(store: Store, tmp_path: Path) -> None:
    config = tmp_path / "tickets.yaml"
    document = json.loads(config.read_text())
    document["model_list"][1]["litellm_params"]["weight"] = 60
    config.write_text(json.dumps(document))
    async with ScreenHost(store, LiveSwitchesScreen).run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert _rows(pilot.app.screen.query_one("#switches-table", DataTable))[1][6] == "refused"
        await pilot.press("down")
        edit = pilot.app.screen.query_one("#switch-edit", Static)
        assert edit.display and "changed by hand" in str(edit.render())


async def test_judged_evidence_is_split_by_grader_under_the_table(tmp_path: Path) -> None:
    from compare_tui.vocabulary import PairGrader, PairSkip

    with Store.open(tmp_path / "judged.sqlite") as judged:
        _canary(judged, tmp_path, "tickets", [1, 0], CanaryState.STEPPING, 25.0)
        canary_id = "canary-tickets"
        for i, (result, paired) in enumerate([("baseline", -1), ("tie", 0), ("inconsistent", None)], start=2):
            skipped = PairSkip.JUDGE_INCONSISTENT if paired is None else None
            pair = CanaryPair(
                canary_id=canary_id, call_id=f"c{i}", seq=i, paired=paired, at=AT, grader=PairGrader.JUDGE,
                judge="qwen2.5-coder-0.5b", judge_result=result, skipped=skipped,
            )  # fmt: skip
            judged.add_canary_pair(pair, i)
        async with ScreenHost(judged, LiveSwitchesScreen).run_test(size=(80, 24)) as pilot:
            await settle(pilot)
            detail = " ".join(str(pilot.app.screen.query_one("#switch-detail", Static).render()).split())
            assert (
                "evidence: 2 pairs by the golden set's checks, 2 by judge qwen2.5-coder-0.5b (both orders asked: "
                "B preferred 0, A preferred 1, tie 1; 1 inconsistent (the orders disagreed: a tie, no evidence))"
            ) in detail


async def test_no_canary_says_how_to_start_one(tmp_path: Path) -> None:
    with Store.open(tmp_path / "empty.sqlite") as empty:
        async with ScreenHost(empty, LiveSwitchesScreen).run_test(size=(80, 24)) as pilot:
            await settle(pilot)
            assert str(pilot.app.screen.query_one("#switches-empty", Static).render()) == EMPTY


@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=["80x24", "120x40"])
def test_snapshot_live_switches(store: Store, snap_compare, size) -> None:
    assert snap_compare(ScreenHost(store, LiveSwitchesScreen), terminal_size=size, run_before=settle)

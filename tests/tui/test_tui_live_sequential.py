"""The Live screen of a `--stop-when-settled` session (issue 50): each candidate's confidence
sequence after every look, moving toward a settled verdict, and the runs that stop there shown
settled, not failed. A scripted session stands in for the engine (no server, no clock)."""

from __future__ import annotations

import pytest

from compare_tui.engine import RunOverrides
from compare_tui.engine.events import AttemptFinished, RunFinished, RunStarted, SequenceLooked
from compare_tui.tui import messages
from compare_tui.tui.engine_bridge import NewRunPlan, gpu_before_run
from compare_tui.tui.screens.live import LiveScreen
from compare_tui.tui.widgets.model_progress import ModelProgress
from tests.tui.test_tui_data import build_store, fixed_probe, write_catalogue
from tests.tui.test_tui_snapshots import SIZE, opened


@pytest.fixture
def make_app(tmp_path):
    from compare_tui.tui.app import create_app

    store, sets = build_store(tmp_path)
    catalogue = write_catalogue(tmp_path / "models.toml")
    yield lambda: create_app(store=store, catalogue_path=catalogue, sets_dir=sets, reviewer="tester", probe=fixed_probe)
    store.close()


# (tasks looked at, low, high, verdict, settled): the candidate's sequence, look by look
LOOKS = [
    (1, -0.5, 1.0, "inconclusive", False),
    (4, -0.3, 0.95, "inconclusive", False),
    (8, -0.05, 0.9, "inconclusive", False),
    (11, 0.0625, 0.9375, "better", True),
]


class SequentialSession:
    """Two runs interleaved: the baseline and one candidate, which settles at task 11 of 16."""

    def __init__(self, workspace, plan, tally, post) -> None:
        self.tally, self.post = tally, post

    def cancel(self) -> None:
        pass

    def run(self) -> None:
        self.post(messages.RunsPrepared("cmp-seq", ("seq-run-a", "seq-run-b"), interleaved=True))
        for name in ("fake-a", "fake-b"):
            self.tally.set_gpu(name, gpu_before_run("hosted"))
        self.tally.on_event(RunStarted("seq-run-a", "fake-a", "Support mini", 16, 0, "verified", "≤ $0.0008"))
        self.tally.on_event(RunStarted("seq-run-b", "fake-b", "Support mini", 16, 0, "verified", "≤ $0.0012"))
        looks = iter(LOOKS)
        look = next(looks)
        for n in range(12):
            for run, name, outcome in (("seq-run-a", "fake-a", "fail"), ("seq-run-b", "fake-b", "pass")):
                self.tally.on_event(AttemptFinished(run, name, f"ticket-{n:02d}", 1, outcome, True, 40.0, 300.0))
            if look is not None and n + 1 >= look[0]:
                self.tally.on_event(SequenceLooked("fake-b", look[0], 16, *look[1:]))
                look = next(looks, None)
        why = "4 of 16 tasks not sent: every verdict it serves had settled (not failures)"
        self.tally.on_event(RunFinished("seq-run-a", "fake-a", "settled", {}, why))
        self.tally.on_event(RunFinished("seq-run-b", "fake-b", "settled", {}, why))
        self.post(messages.SessionEnded(("settled", "settled"), False))


def _push(app) -> None:
    plan = NewRunPlan(app.workspace.sets_dir / "support-mini", ("fake-a", "fake-b"), RunOverrides(), baseline="fake-a")
    app.push_screen(LiveScreen(plan, session_factory=SequentialSession))


async def test_the_live_screen_shows_the_candidate_sequence_and_the_runs_settled(make_app):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await opened(_push)(pilot)
        for _ in range(10):
            await pilot.pause(0.1)
        panels = {p.model_name: p for p in app.screen.query(ModelProgress)}
        texts = {name: {k: v for k, v in p._texts.items()} for name, p in panels.items()}
        assert texts["fake-b"]["mp-evidence"] == "better, settled · Δ vs baseline +6.2…+93.8 pts after 11/16"
        assert texts["fake-a"].get("mp-evidence", "") == ""  # the baseline has no sequence of its own
        assert "settled: the rest not sent" in texts["fake-b"]["mp-title"]
        assert panels["fake-b"].has_class("-done") and not panels["fake-b"].has_class("-bad")


def test_live_progress_sequential(make_app, snap_compare):
    assert snap_compare(make_app(), terminal_size=SIZE, run_before=opened(_push))


def test_the_tally_follows_each_look_toward_the_threshold():
    from compare_tui.tui.live_tally import LiveTally

    tally = LiveTally([("fake-a", 16, ""), ("fake-b", 16, "")])
    seen = []
    for look in LOOKS:
        tally.on_event(SequenceLooked("fake-b", look[0], 16, *look[1:]))
        seen.append(tally.snapshot()[1].evidence)
    assert seen[0] == "inconclusive, not settled · Δ vs baseline −50.0…+100.0 pts after 1/16"
    assert seen[-1].startswith("better, settled · ") and seen[-1].endswith("after 11/16")
    tally.on_event(RunFinished("seq-run-b", "fake-b", "settled", {}, None))
    assert tally.snapshot()[1].state == "settled"


class QuietSession:
    def __init__(self, workspace, plan, tally, post) -> None:
        pass

    def cancel(self) -> None:
        pass

    def run(self) -> None:
        pass


async def test_a_model_the_session_adds_mid_run_is_painted_once_its_panel_is_composed(make_app):
    """Resuming one run of a sequential comparison resumes its other runs too: their panels are
    mounted mid-run, and a repaint before one has composed must wait for it, not crash."""
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        plan = NewRunPlan(app.workspace.sets_dir / "support-mini", ("fake-a",), RunOverrides())
        app.push_screen(LiveScreen(plan, session_factory=QuietSession))
        await pilot.pause()
        screen = app.screen
        screen.tally.on_event(RunStarted("seq-run-b", "fake-b", "Support mini", 12, 0, "verified", "≤ $0.01"))
        screen._repaint()  # mounts fake-b's panel
        screen.tally.on_event(AttemptFinished("seq-run-b", "fake-b", "ticket-00", 1, "pass", True, 40.0, 300.0))
        screen._repaint()  # before it composed: no crash, painted on a later tick
        for _ in range(5):
            await pilot.pause(0.1)
        panel = next(p for p in screen.query(ModelProgress) if p.model_name == "fake-b")
        assert "1/12 tasks" in panel._texts["mp-title"]


REAL_NAMES = ("qwen2.5-coder-0.5b", "smollm2-135m")


class LongSession:
    """The candidate's sequence after 999 of 1,600 tasks, its bounds as wide as they get, beside
    real-length names and run ids."""

    def __init__(self, workspace, plan, tally, post) -> None:
        self.tally, self.post = tally, post

    def cancel(self) -> None:
        pass

    def run(self) -> None:
        runs = ("3f2a9c1d77aa0001", "9b1c2d3e4f5a0002")
        self.post(messages.RunsPrepared("cmp-seq", runs, interleaved=True))
        for run, name in zip(runs, REAL_NAMES, strict=True):
            self.tally.set_gpu(name, gpu_before_run("hosted"))
            self.tally.on_event(RunStarted(run, name, "Support mini", 1600, 0, "verified", "≤ $0.0008"))
        self.tally.on_event(SequenceLooked(REAL_NAMES[1], 999, 1600, -0.999, 1.0, "inconclusive", False))


def _push_long(app) -> None:
    plan = NewRunPlan(app.workspace.sets_dir / "support-mini", REAL_NAMES, RunOverrides(), baseline=REAL_NAMES[0])
    app.push_screen(LiveScreen(plan, session_factory=LongSession))


async def test_the_delta_row_keeps_its_verdict_and_bounds_on_one_line_at_80_columns(make_app):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await opened(_push_long)(pilot)
        for _ in range(10):
            await pilot.pause(0.1)
        panel = next(p for p in app.screen.query(ModelProgress) if p.model_name == REAL_NAMES[1])
        row = panel.query_one(".mp-evidence")
        assert (
            panel._texts["mp-evidence"] == "inconclusive, not settled · Δ vs baseline −99.9…+100.0 pts after 999/1600"
        )
        assert row.region.height == 1  # one line: the verdict and the figure both on it


def test_live_progress_sequential_real_length_names(make_app, snap_compare):
    assert snap_compare(make_app(), terminal_size=SIZE, run_before=opened(_push_long))

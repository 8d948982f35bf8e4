"""Pilot tests for rough edges a new user hit (issue 22): live progress: ETA, tok/s, waiting, and q
and c asking first during a run. Each reproduces the key sequence of the report first, then
checks what the screen does now."""

from __future__ import annotations

import pytest

from tests.support.home_app import SIZE, home_app, settle


@pytest.fixture
def app(tmp_path):
    yield from home_app(tmp_path)


# ------------------------------------------------------------------ Live: ETA, tok/s, waiting


def test_live_tally_gives_an_eta_a_whole_run_rate_that_outlives_the_run_and_says_waiting():
    from compare_tui.engine.events import (
        AttemptFinished,
        RunFinished,
        RunStarted,
        VerificationProgressed,
    )
    from compare_tui.tui.live_tally import LiveTally
    from compare_tui.tui.widgets.model_progress import STATE_WORDS, figures

    now = [0.0]
    tally = LiveTally([("a", 0, ""), ("b", 0, "")], clock=lambda: now[0])
    tally.on_event(VerificationProgressed("b", "b.gguf", 50, 100))
    assert {v.model_name: v.state for v in tally.snapshot()}["b"] == "verifying"
    tally.on_event(VerificationProgressed("b", "b.gguf", 100, 100))
    b = tally.snapshot()[1]
    assert b.state == "waiting" and "waiting for its turn" in b.detail and "100%" not in b.detail
    assert STATE_WORDS[b.state] == "waiting for its turn"

    tally.on_event(RunStarted("r1", "a", "set", 10, 0, "verified", "≤ $0.01"))
    assert tally.snapshot()[0].eta_s is None  # nothing finished yet: no rate to go by
    for n in range(4):
        now[0] += 5.0
        tally.on_event(AttemptFinished("r1", "a", f"t{n}", 1, "pass", True, 10.0, 100.0, 5, 20))
    a = tally.snapshot()[0]
    assert a.eta_s == 6 * 20.0 / 4  # 6 tasks left at 4 tasks per 20 s
    assert a.run_tokens_per_s == 80 / 20.0
    assert "ETA 30 s" in figures(a) and "4.0 whole run" in figures(a)
    tally.on_event(RunFinished("r1", "a", "completed", {}, None))
    now[0] += 600.0  # long after the end: the whole-run rate does not decay to nothing
    a = tally.snapshot()[0]
    assert a.tokens_per_s is None and a.run_tokens_per_s == 80 / 20.0 and a.eta_s is None
    assert "– now · 4.0 whole run" in figures(a) and "ETA" not in figures(a)


# ------------------------------------------------------------------ q and c during a run ask first


class BlockingSession:
    """A run that goes on until it is cancelled, like a long real one (no server needed)."""

    cancelled = 0

    def __init__(self, workspace, plan, tally, post) -> None:
        import threading

        self.tally, self.post, self.stop = tally, post, threading.Event()

    def cancel(self) -> None:
        BlockingSession.cancelled += 1
        self.stop.set()

    def run(self) -> None:
        from compare_tui.engine.events import RunFinished, RunStarted
        from compare_tui.tui import messages

        self.post(messages.RunsPrepared("cmp-block", ("block-run",)))
        self.tally.on_event(RunStarted("block-run", "fake-a", "Support mini", 12, 0, "verified", "≤ $0.01"))
        self.stop.wait(30)
        self.tally.on_event(RunFinished("block-run", "fake-a", "interrupted", {}, "interrupted by the user"))
        self.post(messages.SessionEnded(("interrupted",), True))


async def _live(pilot):
    from compare_tui.engine import RunOverrides
    from compare_tui.tui.engine_bridge import NewRunPlan
    from compare_tui.tui.screens.live import LiveScreen

    app = pilot.app
    plan = NewRunPlan(app.workspace.sets_dir / "support-mini", ("fake-a",), RunOverrides())
    live = LiveScreen(plan, session_factory=BlockingSession)
    app.push_screen(live)
    await pilot.pause()
    return live


async def test_cancel_during_a_run_asks_first_and_esc_keeps_it_going(app):
    from compare_tui.tui.screens.confirm import ConfirmScreen

    BlockingSession.cancelled = 0
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        live = await _live(pilot)
        await pilot.press("c")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen)
        assert "resume" in str(app.screen.query_one("#refusal-reason").render()).lower()
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is live and live.running and BlockingSession.cancelled == 0
        await pilot.press("c", "y")
        await settle(pilot)
        assert BlockingSession.cancelled == 1 and live.statuses == ("interrupted",)


async def test_quit_during_a_run_asks_first(app):
    from compare_tui.tui.screens.confirm import ConfirmScreen

    BlockingSession.cancelled = 0
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        live = await _live(pilot)
        await pilot.press("q")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen) and app.is_running
        await pilot.press("n")
        await pilot.pause()
        assert app.screen is live and live.running and BlockingSession.cancelled == 0
        await pilot.press("q", "y")
        await settle(pilot)
        assert BlockingSession.cancelled == 1 and live.statuses == ("interrupted",)
        assert app.return_code == 0  # and then it quit


# ------------------------------------------------------------------ tok/s after a resume


class ResumedSession:
    """A resume of a run an earlier process had taken to 3 of 4 tasks: the last task, 40 tokens."""

    def __init__(self, workspace, plan, tally, post) -> None:
        self.tally, self.post = tally, post

    def cancel(self) -> None:
        pass

    def run(self) -> None:
        from compare_tui.engine.events import AttemptFinished, RunFinished, RunStarted
        from compare_tui.tui import messages

        self.post(messages.RunsPrepared("cmp-resumed", ("c3c3c3c3c3c3c3c3",)))
        prior = {"pass": 2, "fail": 1}
        self.tally.on_event(RunStarted("c3c3c3c3c3c3c3c3", "gemma3-270m", "Support mini", 4, 3, "verified", "–", prior))
        self.tally.on_event(
            AttemptFinished("c3c3c3c3c3c3c3c3", "gemma3-270m", "t4", 1, "pass", True, 10.0, 50.0, 5, 40)
        )
        self.tally.on_event(RunFinished("c3c3c3c3c3c3c3c3", "gemma3-270m", "completed", {}, None))
        self.post(messages.SessionEnded(("completed",), False))


async def test_a_resumed_run_says_its_tok_s_is_since_the_resume_not_the_whole_run(app):
    """Resumed after 14 of 21 tasks, the screen said `27.3 whole run`: the tokens and the time
    of the last 7 tasks only (the first 14 ran in another process, unseen here)."""
    from textual.widgets import Static

    from compare_tui.tui.engine_bridge import ResumePlan
    from compare_tui.tui.screens.live import LiveScreen

    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        live = LiveScreen(ResumePlan(("c3c3c3c3c3c3c3c3",)), session_factory=ResumedSession)
        app.push_screen(live)
        await settle(pilot)
        live._repaint()
        await pilot.pause()
        text = str(live.query_one(".mp-figures", Static).render())
        assert "since resume" in text and "whole run" not in text, text
        assert "4/4 tasks" in str(live.query_one(".mp-title", Static).render())


def test_the_tok_s_of_a_resumed_run_counts_only_what_this_session_saw():
    from compare_tui.engine.events import AttemptFinished, RunStarted
    from compare_tui.tui.live_tally import LiveTally
    from compare_tui.tui.widgets.model_progress import figures

    now = [0.0]
    tally = LiveTally([], clock=lambda: now[0])
    tally.on_event(RunStarted("r1", "a", "set", 21, 14, "verified", "–", {"pass": 3, "fail": 11}))
    now[0] += 10.0
    tally.on_event(AttemptFinished("r1", "a", "t15", 1, "pass", True, 10.0, 100.0, 5, 200))
    view = tally.snapshot()[0]
    assert view.resumed_after == 14 and view.run_tokens_per_s == 200 / 10.0
    assert "20.0 since resume" in figures(view)
    fresh = LiveTally([], clock=lambda: now[0])
    fresh.on_event(RunStarted("r2", "a", "set", 21, 0, "verified", "–"))
    assert fresh.snapshot()[0].resumed_after == 0 and "whole run" in figures(fresh.snapshot()[0])

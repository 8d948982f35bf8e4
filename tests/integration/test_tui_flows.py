"""Pilot tests: each flow of the TUI driven by keys over a temporary store.

New run against the real local llama.cpp servers (the `local_cluster` fixture), cancel and
resume against the fake OpenAI server, open a report, diff two runs, review tasks, and what
the engine would refuse. Waits are on workers and on the app's own state, never on sleeps.
"""

from __future__ import annotations

import contextlib
import time

import pytest

from compare_tui.store import Store
from compare_tui.tui.app import create_app
from compare_tui.tui.screens.diff import DiffScreen
from compare_tui.tui.screens.live import LiveScreen
from compare_tui.tui.screens.new_run import NewRunScreen
from compare_tui.tui.screens.refusal import RefusalScreen
from compare_tui.tui.screens.report import ReportScreen
from compare_tui.tui.screens.review import ReviewScreen
from compare_tui.tui.screens.run_picker import RunPickerScreen
from compare_tui.tui.screens.task_detail import TaskDetailScreen
from compare_tui.tui.widgets.model_progress import ModelProgress
from tests.support.builders import write_set
from tests.support.fake_openai import FakeServer, text
from tests.support.home_app import settle
from tests.tui.test_tui_data import COMPARISON_ID, RUN_IDS, build_store, fixed_probe, write_catalogue

SIZE = (100, 30)


async def until(pilot, condition, timeout_s: float = 60.0, what: str = "the condition") -> None:
    """Pump the app until `condition()` holds (a run's end, a row in the store)."""
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout_s:g} s waiting for {what}")
        await pilot.pause(0.05)


def _app(store, sets, catalogue, probe=fixed_probe):
    return create_app(store=store, catalogue_path=catalogue, sets_dir=sets, reviewer="tester", probe=probe)


@contextlib.asynccontextmanager
async def driven(store, sets, catalogue, size=SIZE, probe=fixed_probe, *, settled=True):
    """The app over `store`, driven by a Pilot at `size`; with `settled`, once every worker
    started on Home has finished (leave it off when a probe is held back on purpose)."""
    async with _app(store, sets, catalogue, probe).run_test(size=size) as pilot:
        if settled:
            await settle(pilot)
        yield pilot


@contextlib.asynccontextmanager
async def home_at(tmp_path, size=SIZE, probe=fixed_probe, *, settled=True):
    """The app on the test store's Home (`tests/tui/test_tui_data.py`), as `driven` gives it."""
    store, sets = build_store(tmp_path)
    with store:
        async with driven(
            store, sets, write_catalogue(tmp_path / "models.toml"), size, probe, settled=settled
        ) as pilot:
            yield pilot


async def _start_new_run(pilot, *, toggles: int = 1, concurrency: str | None = None) -> LiveScreen:
    """From Home: n, choose the first `toggles` models, optionally a concurrency, ctrl+s."""
    await pilot.press("1", "n")
    await settle(pilot)
    assert isinstance(pilot.app.screen, NewRunScreen)
    for index in range(toggles):
        if index:
            await pilot.press("down")
        await pilot.press("space")
    if concurrency is not None:
        await pilot.press("tab", "tab", "backspace", *concurrency)
    await pilot.press("ctrl+s")
    await pilot.pause()
    assert isinstance(pilot.app.screen, LiveScreen), pilot.app.screen
    return pilot.app.screen


@pytest.mark.integration
async def test_new_run_against_the_real_local_server(local_cluster, tmp_path):
    sets = tmp_path / "sets"
    write_set(sets / "tiny", {"billing-1": "billing", "billing-2": "billing", "bug-1": "bug"}, max_tokens=8)
    with Store.open(tmp_path / "runs.sqlite") as store:
        async with driven(store, sets, local_cluster.catalogue_path) as pilot:
            live = await _start_new_run(pilot, toggles=2)
            await until(pilot, lambda: live.statuses, timeout_s=600, what="both runs to finish")
            assert live.statuses == ("completed", "completed")
            views = {v.model_name: v for v in live.tally.snapshot()}
            assert set(views) == {"smollm2-135m", "gemma3-270m"}
            assert all(v.done == 3 and sum(v.counts.values()) == 3 for v in views.values())
            await pilot.press("o")
            await settle(pilot)
            report = pilot.app.screen.report
            assert isinstance(pilot.app.screen, ReportScreen) and report is not None
            assert {row.model_name for row in report.models} == {"smollm2-135m", "gemma3-270m"}
            assert all(row.provenance == "verified" for row in report.models)
        runs = store.list_runs()
        assert {r.status for r in runs} == {"completed"} and len(runs) == 2
        assert all(len(store.attempts_for_run(r.id)) >= 3 for r in runs)


async def test_cancel_keeps_the_run_resumable_and_resume_finishes_it(tmp_path):
    sets = tmp_path / "sets"
    tasks = {f"t{i:02d}": "billing" for i in range(40)}
    write_set(sets / "slow", tasks, max_tokens=8)
    with (
        FakeServer(default=text("billing", chunk_chars=1, chunk_delay_s=0.03)) as server,
        Store.open(tmp_path / "runs.sqlite") as store,
    ):
        async with driven(store, sets, write_catalogue(tmp_path / "models.toml", server.url)) as pilot:
            live = await _start_new_run(pilot, concurrency="2")
            await until(
                pilot,
                lambda: live.run_ids and len(store.attempts_for_run(live.run_ids[0])) >= 5,
                what="five recorded attempts",
            )
            await pilot.press("c", "y")  # cancelling asks first
            await until(pilot, lambda: live.statuses, what="the cancelled run to stop")
            run_id = live.run_ids[0]
            assert live.statuses == ("interrupted",)
            assert store.get_run(run_id).status == "interrupted"
            before = {a.id for a in store.attempts_for_run(run_id)}
            assert 5 <= len(before) < 40
            requests_before = len(server.requests)
            live.statuses = ()
            await pilot.press("r")
            await until(pilot, lambda: live.statuses, what="the resumed run to finish")
            assert live.statuses == ("completed",)
            view = live.tally.snapshot()[0]
            assert (view.done, view.total, view.counts.get("pass")) == (40, 40, 40)
        attempts = store.attempts_for_run(run_id)
        assert store.get_run(run_id).status == "completed"
        assert sorted(a.task_id for a in attempts) == sorted(tasks)  # each task exactly once
        assert before <= {a.id for a in attempts}  # nothing lost
        asked_again = {r.task for r in server.requests[requests_before:] if r.path.endswith("/chat/completions")}
        assert asked_again.isdisjoint({i.split(":")[1] for i in before})  # nothing repeated


async def test_repaints_are_coalesced_at_a_high_attempt_rate(tmp_path, monkeypatch):
    sets = tmp_path / "sets"
    write_set(sets / "many", {f"t{i:03d}": "the quick brown fox." for i in range(300)}, max_tokens=8)
    shows = []
    original = ModelProgress.show
    monkeypatch.setattr(ModelProgress, "show", lambda self, view: (shows.append(view.done), original(self, view))[1])
    with FakeServer(mode="zero-delay", record=False) as server, Store.open(tmp_path / "runs.sqlite") as store:
        async with driven(store, sets, write_catalogue(tmp_path / "models.toml", server.url)) as pilot:
            started = time.monotonic()
            live = await _start_new_run(pilot, concurrency="8")
            await until(pilot, lambda: live.statuses, what="the run to finish")
            elapsed = time.monotonic() - started
            await pilot.pause(0.3)
            assert live.statuses == ("completed",)
            assert live.tally.snapshot()[0].done == 300
    # The screen repaints on its timer, a few times a second, never once per attempt.
    assert shows and shows[-1] == 300
    assert len(shows) <= elapsed / 0.25 + 4, f"{len(shows)} repaints for 300 attempts in {elapsed:.1f} s"


async def test_the_engine_refusal_is_shown_and_nothing_is_created(tmp_path):
    async with home_at(tmp_path) as pilot:
        store = pilot.app.workspace.store
        await pilot.press("1")
        await pilot.press("down")  # the valid set (the broken one is listed first)
        await pilot.press("n")
        await settle(pilot)
        await pilot.press("down", "down", "space", "ctrl+s")  # the unpinned model
        await pilot.pause()
        assert isinstance(pilot.app.screen, RefusalScreen)
        assert "revision" in pilot.app.screen.reason
        await pilot.press("escape")
        assert isinstance(pilot.app.screen, NewRunScreen)
        assert len(store.list_runs()) == 3 and len(store.list_comparisons()) == 1


async def test_open_a_report_and_a_task_from_its_grid(tmp_path):
    async with home_at(tmp_path) as pilot:
        await pilot.press("enter")  # the newest run, gemma: its comparison's report
        await settle(pilot)
        screen = pilot.app.screen
        assert isinstance(screen, ReportScreen) and screen.ref == COMPARISON_ID
        assert screen.report.recommendation.winner == "gemma3-270m"
        assert screen.report.recommendation.confidence == "low"
        await pilot.press("3", "right", "right", "down")
        assert "ticket-01 · gemma3-270m · ✓ pass" in str(screen.query_one("#block-line").render())
        await pilot.press("enter")
        await settle(pilot)
        detail = pilot.app.screen
        assert isinstance(detail, TaskDetailScreen) and detail.facts.task_id == "ticket-01"
        assert [r.run.model_name for r in detail.facts.runs] == ["smollm2-135m", "gemma3-270m"]
        await pilot.press("n")
        await settle(pilot)
        assert detail.facts.task_id == "ticket-02"
        await pilot.press("escape")
        assert pilot.app.screen is screen


async def test_diff_two_runs_and_open_a_changed_task_side_by_side(tmp_path):
    async with home_at(tmp_path) as pilot:
        await pilot.press("down", "d")  # A = smollm2 (the highlighted run)
        await settle(pilot)
        assert isinstance(pilot.app.screen, RunPickerScreen)
        await pilot.press("enter")  # B = the first run listed on the same set: gemma
        await settle(pilot)
        diff_screen = pilot.app.screen
        assert isinstance(diff_screen, DiffScreen)
        diff = diff_screen.diff
        assert (diff_screen.run_a, diff_screen.run_b) == (RUN_IDS["smollm2-135m"], RUN_IDS["gemma3-270m"])
        assert (diff.paired.both, diff.paired.only_a, diff.paired.only_b, diff.paired.neither) == (6, 1, 2, 1)
        assert diff.paired.mcnemar_p is not None and diff.paired.interval is not None
        await pilot.press("2", "enter")
        await settle(pilot)
        detail = pilot.app.screen
        assert isinstance(detail, TaskDetailScreen)
        assert detail.facts.task_id == "ticket-03" and len(detail.facts.runs) == 2
        assert [str(a.outcome) for r in detail.facts.runs for a in r.attempts] == ["fail", "pass"]
        await pilot.press("escape", "x")
        await settle(pilot)
        assert diff_screen.diff.paired.only_a == 2  # swapped: gemma is A now


async def test_the_runs_cursor_stays_on_its_run_when_home_reads_the_runs_again(tmp_path):
    # Back from a review (a verdict moves pass rates) Home reads every run again: Enter must
    # still open the run the cursor was on, not the first row.
    async with home_at(tmp_path, (80, 24)) as pilot:
        await pilot.press("down", "down")
        await settle(pilot)
        home = pilot.app.screen
        chosen = home._selected_run().run.id
        assert chosen != home.shown_runs[0].run.id
        home.action_refresh()
        await settle(pilot)
        assert home._selected_run().run.id == chosen


async def test_the_models_line_says_the_health_once_it_is_known(tmp_path):
    import threading

    answered = threading.Event()

    def slow_probe(endpoint: str):  # the health arrives after the row is highlighted
        answered.wait(10)
        return fixed_probe(endpoint)

    async with home_at(tmp_path, (80, 24), slow_probe, settled=False) as pilot:
        home = pilot.app.screen
        await until(
            pilot, lambda: home.data is not None and not home.query_one("#home-tabs").loading, what="Home's first read"
        )
        await pilot.press("2")
        detail = home.query_one("#model-detail")
        await until(pilot, lambda: "checking…" in str(detail.render()), what="the highlighted model's line")
        answered.set()
        await pilot.app.workers.wait_for_complete()
        await settle(pilot)
        line = str(detail.render())
        assert "checking…" not in line and ("(healthy)" in line or "unreachable" in line), line


async def test_the_diff_pane_scrolls_from_the_keyboard_at_once_at_80x24(tmp_path):
    async with home_at(tmp_path, (80, 24)) as pilot:
        await pilot.press("down", "d")
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        scroll = pilot.app.screen.query_one("#flips-scroll")
        assert scroll.max_scroll_y > 0 and scroll.scroll_y == 0  # the deltas start below the fold
        await pilot.press("end")  # no Tab first: the pane has the focus
        await settle(pilot)
        assert scroll.scroll_y == scroll.max_scroll_y


async def test_review_saves_each_verdict_at_once_and_clears_the_caveat(tmp_path):
    async with home_at(tmp_path) as pilot:
        store = pilot.app.workspace.store
        await pilot.press("enter")
        await settle(pilot)
        report_screen = pilot.app.screen
        assert any(c.code == "review" for c in report_screen.report.caveats)
        await pilot.press("v")
        await settle(pilot)
        review = pilot.app.screen
        assert isinstance(review, ReviewScreen) and len(review.queue) == 4
        await pilot.press("n", *"polite enough", "enter", "p")
        await settle(pilot)
        saved = store.reviews_for_run(RUN_IDS["smollm2-135m"])["reply-01"]
        assert (saved.verdict, saved.note, saved.reviewer) == ("pass", "polite enough", "tester")
        assert saved.at.startswith("20") and saved.id is not None
        assert len(review.queue) == 3
        await pilot.press("s")  # a skip is saved too, and the task keeps waiting
        await settle(pilot)
        assert store.reviews_for_run(RUN_IDS["gemma3-270m"])["reply-01"].verdict == "skip"
        assert len(review.queue) == 3 and review.queue[review.position].task_id == "reply-02"
        await pilot.press("f", "p")
        await settle(pilot)
        assert [i.task_id for i in review.queue] == ["reply-01"]
        assert any(row.awaiting_review for row in review.rows.models)  # the report's "review" caveat
        await pilot.press("p")
        await settle(pilot)
        assert review.queue == [] and not any(row.awaiting_review for row in review.rows.models)
        await pilot.press("escape")
        await settle(pilot)
        assert pilot.app.screen is report_screen  # and it rebuilt on return
        assert not any(c.code == "review" for c in report_screen.report.caveats)
        assert not any("human review" in r for r in report_screen.report.recommendation.reasons)


async def test_quitting_during_a_run_leaves_it_interrupted_and_resumable(tmp_path):
    sets = tmp_path / "sets"
    write_set(sets / "slow", {f"t{i:02d}": "billing" for i in range(40)}, max_tokens=8)
    with (
        FakeServer(default=text("billing", chunk_chars=1, chunk_delay_s=0.03)) as server,
        Store.open(tmp_path / "runs.sqlite") as store,
    ):
        async with driven(store, sets, write_catalogue(tmp_path / "models.toml", server.url)) as pilot:
            live = await _start_new_run(pilot, concurrency="2")
            await until(
                pilot,
                lambda: live.run_ids and len(store.attempts_for_run(live.run_ids[0])) >= 3,
                what="three recorded attempts",
            )
            await pilot.press("q", "y")  # quitting during a run asks first
            await until(pilot, lambda: not pilot.app.is_running, what="the app to quit", timeout_s=60)
        run = store.get_run(live.run_ids[0])
        assert run.status == "interrupted" and "resume" in (run.error or "")


async def test_palette_lists_the_actions_and_a_missing_report_is_an_error_not_a_crash(tmp_path):
    async with home_at(tmp_path) as pilot:
        titles = {command.title for command in pilot.app.get_system_commands(pilot.app.screen)}
        assert {
            "Home",
            "New run",
            "A/B diff",
            "Latest report",
            "Review latest",
            "Help",
            "Experiments",
            "Tool-call conformance",
            "Triage latest judging",
        } <= titles
        pilot.app.open_report("no-such-run")
        await settle(pilot)
        screen = pilot.app.screen
        assert isinstance(screen, ReportScreen) and screen.report is None
        assert "no comparison or run" in str(screen.query_one("#recommendation").render())
        await pilot.press("escape", "question_mark")
        await settle(pilot)
        assert pilot.app.screen.__class__.__name__ == "HelpScreen"


async def test_a_flagged_task_joins_the_review_queue(tmp_path):
    async with home_at(tmp_path) as pilot:
        await pilot.press("enter")
        await settle(pilot)
        await pilot.press("3", "right", "right", "f", "v")  # ticket-01 of smollm2, a pass
        await settle(pilot)
        review = pilot.app.screen
        assert isinstance(review, ReviewScreen)
        assert [(i.task_id, i.reason) for i in review.queue][-1] == ("ticket-01", "flagged")


async def test_home_opens_experiments_tool_calls_and_triage_by_key(tmp_path):
    from compare_tui.tui.screens.experiments import ExperimentsScreen
    from compare_tui.tui.screens.home import HomeScreen
    from compare_tui.tui.screens.toolcall import ToolcallScreen
    from compare_tui.tui.screens.triage import TriageScreen

    async with home_at(tmp_path) as pilot:
        for key, screen_type in (("e", ExperimentsScreen), ("t", ToolcallScreen), ("j", TriageScreen)):
            await pilot.press(key)
            await settle(pilot)
            assert isinstance(pilot.app.screen, screen_type), (key, pilot.app.screen)
            await pilot.press("escape")
            await settle(pilot)
            assert isinstance(pilot.app.screen, HomeScreen), key


async def test_a_long_refusal_scrolls_and_its_close_button_stays_on_screen_at_80x24():
    from textual.app import App

    reason = "\n".join(
        f"✗ tasks/t{i:02d}.toml: expected: unknown field `texts` (did you mean `text`?)" for i in range(30)
    )

    class Host(App):
        def on_mount(self) -> None:
            self.push_screen(RefusalScreen("broken-set cannot run: 30 problems", reason + "\nthe last line"))

    async with Host().run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        screen = pilot.app.screen
        button = screen.query_one("#refusal-close")
        assert button.region.bottom <= 24 and button.region.height > 0  # never pushed off the screen
        scroll = screen.query_one("#refusal-scroll")
        assert scroll.max_scroll_y > 0
        await pilot.press("end")
        await pilot.pause()
        assert scroll.scroll_y == scroll.max_scroll_y
        await pilot.press("enter")
        await pilot.pause()
        assert not isinstance(pilot.app.screen, RefusalScreen)

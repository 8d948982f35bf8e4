"""Pilot tests for the rough edges a new user hit (issue 22): each reproduces the key sequence
of the report first, then checks what the screen does now."""

from __future__ import annotations

import re

import pytest
from textual.widgets import DataTable, Input

from compare_tui.tui.app import create_app
from compare_tui.tui.screens.help import HelpScreen
from compare_tui.tui.screens.home import HomeScreen
from compare_tui.tui.task_facts import ATTEMPTS
from tests.test_tui_data import build_store, fixed_probe, write_catalogue

SIZE = (80, 24)


@pytest.fixture
def app(tmp_path):
    store, sets = build_store(tmp_path)
    catalogue = write_catalogue(tmp_path / "models.toml")
    yield create_app(store=store, catalogue_path=catalogue, sets_dir=sets, reviewer="tester", probe=fixed_probe)
    store.close()


async def settle(pilot, rounds: int = 3) -> None:
    for _ in range(rounds):
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()


async def test_escape_leaves_the_filter_and_the_shortcuts_work_again(app):
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("3", "slash")
        assert isinstance(app.focused, Input)
        await pilot.press("b", "escape")
        home = app.screen
        assert isinstance(home, HomeScreen)
        assert isinstance(app.focused, DataTable) and app.focused.id == "runs-table"
        filter_box = home.query_one("#run-filter", Input)
        assert filter_box.value == "b"  # Esc keeps what was typed: the list stays filtered
        await pilot.press("question_mark")
        await settle(pilot)
        assert isinstance(app.screen, HelpScreen)
        assert filter_box.value == "b"  # the key went to the app, not into the filter


async def test_arrows_move_the_list_after_escape_from_the_filter(app):
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("3", "slash", "escape", "down")
        table = app.screen.query_one("#runs-table", DataTable)
        assert table.cursor_row == 1
        assert app.screen.query_one("#run-filter", Input).value == ""


# ------------------------------------------------------------------ the report screen at 80 columns


async def _open_report(pilot):
    from compare_tui.tui.screens.report import ReportScreen

    await pilot.press("enter")
    await settle(pilot)
    assert isinstance(pilot.app.screen, ReportScreen)
    return pilot.app.screen


def _cells_fit(screen) -> None:
    """Every cell of every figure table is no wider than its column (a DataTable would crop it
    without a mark)."""
    for table in screen.query(DataTable):
        widths = [column.width for column in table.columns.values()]
        for row_key in table.rows:
            for cell, width in zip(table.get_row(row_key), widths, strict=True):
                assert len(str(cell)) <= width, (table.id, str(cell), width)


async def test_pagedown_scrolls_the_figures_from_the_first_key(app):
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        report = await _open_report(pilot)
        await pilot.press("2")
        await settle(pilot)
        scroll = report.query_one("#figures-scroll")
        assert app.focused is scroll
        await pilot.press("pagedown")
        await settle(pilot)
        assert scroll.scroll_y > 0


async def test_the_summary_has_focus_on_its_scroll_when_the_report_opens(app):
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        report = await _open_report(pilot)
        assert app.focused is report.query_one("#summary-scroll")


async def test_tables_are_laid_out_again_after_a_verdict_and_after_a_resize(app):
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        report = await _open_report(pilot)
        _cells_fit(report)
        headers = lambda: [str(c.label) for c in report.query_one("#pass-table", DataTable).columns.values()]  # noqa: E731
        assert "· not done" not in headers()  # left out at 80 columns, with a note
        assert "· not done" in str(report.query_one("#pass-notes").render())
        await pilot.press("v")
        await settle(pilot)
        await pilot.press("p")
        await settle(pilot)
        await pilot.press("escape")
        await settle(pilot)
        assert app.screen is report
        _cells_fit(report)
        await pilot.resize_terminal(120, 40)
        await settle(pilot)
        assert "· not done" in headers()
        assert "not done" not in str(report.query_one("#pass-notes").render())  # only the rule's caption
        _cells_fit(report)


# ------------------------------------------------------------------ Home at 80 columns


async def test_home_footer_shows_every_home_key_at_80_columns(app):
    from textual.widgets._footer import FooterKey

    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        keys = {key.key_display or key.key for key in app.screen.query(FooterKey)}
        assert {"n", "d", "v", "e", "t", "j", "/", "s", "?", "q"} <= keys
        right_edge = max(key.region.right for key in app.screen.query(FooterKey))
        assert right_edge <= SIZE[0]


async def test_runs_list_leads_with_the_run_id_and_the_whole_date(app):
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        table = app.screen.query_one("#runs-table", DataTable)
        headers = [str(c.label) for c in table.columns.values()]
        assert headers[:2] == ["run", "date (UTC)"]
        first = [str(cell) for cell in table.get_row_at(0)]
        assert first[0] == "b2b2b2b2" and first[1] == "2026-01-05 10:00"
        widths = [c.get_render_width(table) for c in table.columns.values()]
        assert sum(widths[:2]) <= SIZE[0]  # both on screen without scrolling


# ------------------------------------------------------------------ A/B diff deltas


def test_diff_deltas_never_print_plus_minus_and_keep_one_latency_unit():
    from compare_tui.diff import deltas
    from compare_tui.report import RunInput, build_report
    from tests.test_report import attempts, inputs, make_run

    slow = RunInput(
        make_run("run-a", "slow"), attempts("ppff", e2e_ms=25_000.0, prompt_tokens=900, completion_tokens=400)
    )
    fast = RunInput(make_run("run-b", "fast"), attempts("pppf", e2e_ms=400.0, prompt_tokens=384, completion_tokens=42))
    report = build_report(inputs(slow, fast))
    rows = {d.figure: d for d in deltas(report.models[0], report.models[1])}
    text = " ".join(d.delta for d in rows.values())
    assert "+ -" not in text and "+ +" not in text
    assert re.fullmatch(r"prompt -[\d,]+, completion -[\d,]+", rows["tokens/task"].delta), rows["tokens/task"].delta
    e2e = rows["E2E p50/p95/p99"]
    assert e2e.a.endswith(" s") and "ms" not in e2e.delta and e2e.delta.startswith("p50 -24.6 s")


# ------------------------------------------------------------------ review: the rule and the answer


def _grid_status(report, label_start: str, task_id: str) -> str:
    row = next(r for r in report.report.models if r.label.startswith(label_start))
    return next(b.status for b in row.blocks if b.task_id == task_id)


async def test_a_flagged_fail_marked_pass_in_review_changes_block_counts_and_rate(app):
    from compare_tui.tui.screens.review import ReviewScreen

    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        report = await _open_report(pilot)

        def cells():
            return [str(c) for c in report.query_one("#pass-table", DataTable).get_row_at(0)]

        assert cells()[1] == "70.0% (7/10)"
        assert "a person's verdict on a flagged one replaces the scorer's" in str(
            report.query_one("#pass-notes").render()
        )
        await pilot.press("3", "right", "right", "right", "right")  # ticket-03 of smollm2: ✗ fail
        await settle(pilot)
        assert _grid_status(report, "smollm2", "ticket-03") == "fail"
        await pilot.press("f", "v")
        await settle(pilot)
        review = app.screen
        assert isinstance(review, ReviewScreen) and review.queue[-1].task_id == "ticket-03"
        await pilot.press("k")  # from the first item back to the last: the flagged one
        await settle(pilot)
        await pilot.press("p")
        await settle(pilot)
        await pilot.press("escape")
        await settle(pilot)
        assert app.screen is report
        assert _grid_status(report, "smollm2", "ticket-03") == "pass"
        assert cells()[1] == "80.0% (8/10)"
        assert "ticket-03 fail → pass" in str(report.query_one("#caveats").render())
        line = str(report.query_one("#block-line").render())
        assert "✓ pass by a person (scorer: ✗ fail)" in line, line


@pytest.fixture
def fresh_attempts():
    """The attempt cache is per process and keyed by run id; these tests add an attempt to a run
    id every test store shares, so nothing cached may leak in or out."""
    ATTEMPTS.forget()
    yield
    ATTEMPTS.forget()


async def test_a_verdict_on_an_answer_never_scrolled_into_view_asks_first(tmp_path, fresh_attempts):
    from compare_tui.store import AttemptRecord
    from compare_tui.tui.screens.review import ReviewScreen
    from tests.test_tui_data import RUN_IDS

    store, sets = build_store(tmp_path)
    long_answer = "\n".join(f"line {n}: we are sorry, and we have refunded you." for n in range(40))
    store.record_attempts(
        [
            AttemptRecord(
                run_id=RUN_IDS["smollm2-135m"],
                task_id="reply-01",
                attempt=2,
                outcome="review",
                answer_text=long_answer,
                score_detail="a person decides (human scorer)",
                started_at="2026-01-05T10:00:03Z",
                finished_at="2026-01-05T10:00:04Z",
            )
        ]
    )
    catalogue = write_catalogue(tmp_path / "models.toml")
    app = create_app(store=store, catalogue_path=catalogue, sets_dir=sets, reviewer="tester", probe=fixed_probe)
    with store:
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            await _open_report(pilot)
            await pilot.press("v")
            await settle(pilot)
            review = app.screen
            assert isinstance(review, ReviewScreen) and review.queue[0].task_id == "reply-01"
            answer = review.query_one("#review-answer")
            assert answer.region.y < 6  # the answer comes first, under the status line
            assert not review.answer_seen and review.lines_below() > 0
            assert "more lines" in str(review.query_one("#review-seen").render())
            await pilot.press("p")
            await settle(pilot)
            assert "reply-01" not in store.reviews_for_run(RUN_IDS["smollm2-135m"])  # not taken silently
            assert any("not seen the whole answer" in n.message for n in app._notifications)
            await pilot.press("p")  # the same key again: saved anyway, as asked
            await settle(pilot)
            assert store.reviews_for_run(RUN_IDS["smollm2-135m"])["reply-01"].verdict == "pass"
            # The next item has a short answer: its end is on screen, the verdict is taken at once.
            await pilot.press("f")
            await settle(pilot)
            assert store.reviews_for_run(RUN_IDS["gemma3-270m"])["reply-01"].verdict == "fail"


async def test_scrolling_to_the_end_of_the_answer_lets_the_verdict_through(tmp_path, fresh_attempts):
    from compare_tui.store import AttemptRecord
    from compare_tui.tui.screens.review import ReviewScreen
    from tests.test_tui_data import RUN_IDS

    store, sets = build_store(tmp_path)
    long_answer = "\n".join(f"line {n}" for n in range(40))
    store.record_attempts(
        [
            AttemptRecord(
                run_id=RUN_IDS["smollm2-135m"],
                task_id="reply-01",
                attempt=2,
                outcome="review",
                answer_text=long_answer,
                started_at="2026-01-05T10:00:03Z",
                finished_at="2026-01-05T10:00:04Z",
            )
        ]
    )
    app = create_app(
        store=store,
        catalogue_path=write_catalogue(tmp_path / "models.toml"),
        sets_dir=sets,
        reviewer="tester",
        probe=fixed_probe,
    )
    with store:
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            await _open_report(pilot)
            await pilot.press("v")
            await settle(pilot)
            review = app.screen
            assert isinstance(review, ReviewScreen) and not review.answer_seen
            for _ in range(4):
                await pilot.press("pagedown")
            await settle(pilot)
            assert review.answer_seen and not review.query_one("#review-seen").display
            await pilot.press("f")
            await settle(pilot)
            assert store.reviews_for_run(RUN_IDS["smollm2-135m"])["reply-01"].verdict == "fail"


# ------------------------------------------------------------------ triage with no judging


async def test_triage_without_a_judging_says_how_to_make_one(app):
    from compare_tui.tui.screens.triage import TriageScreen

    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("j")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, TriageScreen)
        status = str(screen.query_one("#triage-status").render())
        assert "reading the judging" not in status
        assert "compare-tui judge RUN_A RUN_B --judge MODEL" in status and "press g" in status
        assert "this store has no judging yet" in str(screen.query_one("#triage-figures").render())
        assert not screen.query_one("#triage-answers").display  # no empty boxes
        assert not any(n.severity == "error" or "Error" in n.message for n in app._notifications)
        await pilot.press("p", "g")  # keys do nothing harmful on the empty state
        await settle(pilot)
        assert isinstance(app.screen, TriageScreen) and not app._notifications


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


# ------------------------------------------------------------------ A/B diff across golden sets


def add_run_on_another_set(store, tmp_path) -> str:
    """A run of a second set (same workload id and version, other digest): what an edited set gives."""
    from compare_tui.goldset import load_golden_set
    from tests.test_tui_data import OUTCOMES, _attempts, _run, write_mini_set

    other = load_golden_set(write_mini_set(tmp_path / "other"))
    run = store.create_run(
        _run("other-model", "d4d4d4d4d4d4d4d4", other).model_copy(update={"goldset_digest": "sha256:" + "f" * 64})
    )
    store.record_attempts(_attempts(run.id, OUTCOMES["gemma3-270m"]))
    return run.id


async def test_a_diff_across_golden_sets_refuses_the_paired_verdict_and_labels_each_side(app, tmp_path):
    from compare_tui.tui.screens.diff import DiffScreen
    from tests.test_tui_data import RUN_IDS

    other = add_run_on_another_set(app.workspace.store, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.open_diff(RUN_IDS["smollm2-135m"], other)
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, DiffScreen) and screen.diff is not None
        assert screen.diff.paired is None
        title = str(screen.query_one("#diff-title").render())
        assert "A: smollm2-135m" in title and "B: other-model" in title
        a_line, b_line = title.splitlines()
        assert "sha256:ffffffff" in b_line and "sha256:ffffffff" not in a_line
        sentence = str(screen.query_one("#flips-sentence").render())
        assert "no paired verdict" in sentence and "noise" not in sentence
        assert "no paired verdict across sets" in str(screen.query_one("#diff-problems").render())


# ------------------------------------------------------------------ human-scorer instructions


def test_instructions_reflow_hard_line_breaks_and_keep_paragraphs():
    from compare_tui.tui.task_facts import reflow

    text = "Pass if the reply is polite\n  and offers a refund.\n\nFail if it\nblames the customer.\n"
    assert reflow(text) == "Pass if the reply is polite and offers a refund.\n\nFail if it blames the customer."
    assert reflow(None) == "" and reflow("one line") == "one line"


async def test_review_shows_instructions_as_prose(tmp_path):
    from compare_tui.tui.screens.review import ReviewScreen

    store, sets = build_store(tmp_path)
    task = sets / "support-mini" / "tasks" / "reply-01.json"
    import json

    data = json.loads(task.read_text())
    data["scorer"]["instructions"] = "Pass if the reply\nis polite and offers\na refund.\n\nFail otherwise."
    task.write_text(json.dumps(data))
    app = create_app(
        store=store,
        catalogue_path=write_catalogue(tmp_path / "models.toml"),
        sets_dir=sets,
        reviewer="tester",
        probe=fixed_probe,
    )
    with store:
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            app.open_review("latest")
            await settle(pilot)
            assert isinstance(app.screen, ReviewScreen)
            text = str(app.screen.query_one("#review-scorer").render())
            assert "Pass if the reply is polite and offers a refund.\n\nFail otherwise." in text


# ------------------------------------------------------------------ a fast burst of keys, the run picker


async def test_a_fast_burst_of_keys_ends_on_home(app):
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("n", "escape", "n", "escape", "o", "escape", "d", "escape", "n", "escape", "d", "escape")
        await settle(pilot, rounds=5)
        assert isinstance(app.screen, HomeScreen), app.screen_stack


async def test_run_picker_esc_steps_back_only_from_a_choice_made_in_it(app):
    from compare_tui.tui.screens.run_picker import RunPickerScreen

    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.open_diff()  # nothing preselected: pick A, then B
        await settle(pilot)
        picker = app.screen
        assert isinstance(picker, RunPickerScreen)
        await pilot.press("enter")
        await settle(pilot)
        assert picker.run_a is not None
        headers = [str(c.label) for c in picker.query_one("#picker-table", DataTable).columns.values()]
        assert headers[3:5] == ["model", "status"]
        await pilot.press("escape")  # back to picking A
        await settle(pilot)
        assert app.screen is picker and picker.run_a is None
        await pilot.press("escape")
        await settle(pilot)
        assert isinstance(app.screen, HomeScreen)


# ------------------------------------------------------------------ Enter on an invalid set


async def test_enter_on_an_invalid_set_shows_its_problems_not_new_run(app):
    from compare_tui.tui.screens.new_run import NewRunScreen
    from compare_tui.tui.screens.refusal import RefusalScreen

    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("1")  # the broken set sorts first
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, RefusalScreen), app.screen_stack
        text = str(app.screen.query_one("#refusal-reason").render())
        assert "✗" in text and "sets validate" in text
        assert "broken-set cannot run" in str(app.screen.query_one("#refusal-title").render())
        await pilot.press("escape", "down", "enter")  # the valid set opens New run on that set
        await settle(pilot)
        assert isinstance(app.screen, NewRunScreen)


# ------------------------------------------------------------------ the theme is kept at restart


async def test_a_theme_chosen_in_the_app_is_kept_at_restart(tmp_path, monkeypatch):
    from compare_tui.paths import user_config_path

    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    config = user_config_path()
    assert config == tmp_path / "config" / "compare-tui" / "config.toml"
    store, sets = build_store(tmp_path)
    catalogue = write_catalogue(tmp_path / "models.toml")

    def make(theme=None):
        return create_app(
            store=store,
            catalogue_path=catalogue,
            sets_dir=sets,
            reviewer="tester",
            probe=fixed_probe,
            theme=theme,
            config_path=config,
        )

    with store:
        first = make()
        async with first.run_test(size=SIZE) as pilot:
            await settle(pilot)
            default = first.theme
            first.theme = "compare-light" if default != "compare-light" else "compare-dark"
            chosen = first.theme
            await settle(pilot)
        assert f'theme = "{chosen}"' in config.read_text()
        again = make()
        async with again.run_test(size=SIZE) as pilot:
            await settle(pilot)
            assert again.theme == chosen != default
        assert make(theme="high-contrast").theme != chosen  # --theme wins over the remembered one


def test_unreadable_preferences_are_a_problem_not_a_crash(tmp_path):
    from compare_tui.tui.preferences import read_preferences, save_theme

    path = tmp_path / "config.toml"
    path.write_text("# mine\ntheme = \n")
    assert read_preferences(path).problem and read_preferences(path).theme is None
    path.write_text("# my note\nother = 1\n")
    assert save_theme(path, "compare-light") is None
    text = path.read_text()
    assert "# my note" in text and "other = 1" in text and read_preferences(path).theme == "compare-light"


# ------------------------------------------------------------------ New run: money, refusal words, checkbox


def test_new_run_preview_spells_money_one_way_adds_up_and_names_no_flag(tmp_path):
    from compare_tui.catalogue import load_catalogue
    from compare_tui.engine import RunOverrides
    from compare_tui.goldset import load_golden_set
    from compare_tui.tui.screens.new_run import _preview_lines
    from compare_tui.tui.spend_preview import preview
    from tests.test_tui_data import write_mini_set

    goldset = load_golden_set(write_mini_set(tmp_path / "set"))
    catalogue = load_catalogue(write_catalogue(tmp_path / "models.toml"))
    entries = [catalogue.get("fake-a"), catalogue.get("fake-b")]
    capped = preview(goldset, entries, RunOverrides(attempts=3), max_cost=0.00001)
    text = "\n".join(_preview_lines(capped, 0.00001)) + "\n".join(r for m in capped.models for r in m.refusals)
    assert "e-0" not in text and "--" not in text, text
    assert "$0.0000100" in text or "$0.00001" in text
    amounts = [float(m.estimate.split("$")[1].split(" ")[0]) for m in capped.models]
    assert round(sum(amounts), capped.decimals) == capped.total_usd  # the lines add up to the total
    assert f"≤ ${capped.total_usd:.{capped.decimals}f}" in text
    assert all("lower attempts or max tokens, or raise the spend cap" in m.refusals[-1] for m in capped.models)


async def test_the_model_checkbox_is_empty_until_picked(app):
    from compare_tui.tui.widgets.model_choices import ModelChoices

    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("1", "down", "n")
        await settle(pilot)
        choices = app.screen.query_one(ModelChoices)
        line = lambda n: choices.render_line(n).text  # noqa: E731
        assert "X" not in line(0)[:4] and "X" not in line(1)[:4]
        await pilot.press("space")
        await settle(pilot)
        assert "X" in line(0)[:4] and "X" not in line(1)[:4]


# ------------------------------------------------------------------ cells that fit at 80 columns


def test_home_cells_are_short_and_the_detail_line_says_it_whole():
    from compare_tui.tui.screens.home import fit_list, short_cost, short_health, short_provenance

    many = "command×2, exact×10, human×2, json×3, tool_call×4"
    assert fit_list("exact×10, human×2", 22) == "exact×10, human×2"
    assert fit_list(many, 22) == "command×2 +4 more" and len(fit_list(many, 22)) <= 22
    assert short_health("unreachable: Connection refused") == "✗ unreachable" and short_health("healthy") == "✓ healthy"
    assert short_provenance("provenance by host attestation, not verified", "x") == "host attested"
    assert short_cost("token $1/$2 per Mtok (2026-12-01)") == "token $1/$2 per Mtok"
    assert short_cost("none (runs will be refused in reports)") == "✗ none"


async def test_home_models_table_fits_at_80_columns(app):
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("2")
        await settle(pilot)
        table = app.screen.query_one("#models-table", DataTable)
        widths = [c.get_render_width(table) for c in table.columns.values()]
        assert sum(widths[:5]) <= SIZE[0]  # model, kind, health, provenance, cost basis on screen


def test_experiment_arm_cells_are_short():
    from compare_tui.experiment.render import interval_cell

    class Rates:
        values, low, high = (0.5, 0.7), 0.5, 0.7

    class Arm:
        interval, rate_range = None, Rates()

    assert interval_cell(Arm()) == "range 50.0–70.0 %"
    Arm.rate_range = type("R", (), {"values": (), "low": None, "high": None})()
    assert interval_cell(Arm()) == "– (<3 runs)"


async def test_task_detail_footer_fits_at_80_columns(app):
    from textual.widgets._footer import FooterKey

    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        await pilot.press("3", "enter")
        await settle(pilot)
        keys = {key.key_display or key.key for key in app.screen.query(FooterKey)}
        assert {"n", "p", "f", "?", "q"} <= keys
        quit_key = next(k for k in app.screen.query(FooterKey) if k.key == "q")
        assert quit_key.region.x + len(" q Quit") <= SIZE[0] - len("▏^p palette")  # left of the palette key

"""Pilot tests for rough edges a new user hit (issue 22): human review and triage: the verdict
rule, answers read before a verdict, instructions as prose, triage with no judging. Each
reproduces the key sequence of the report first, then checks what the screen does now."""

from __future__ import annotations

import pytest
from textual.widgets import DataTable

from compare_tui.tui.app import create_app
from compare_tui.tui.task_facts import ATTEMPTS
from tests.support.home_app import SIZE, home_app, open_report, settle
from tests.tui.test_tui_data import build_store, fixed_probe, write_catalogue


@pytest.fixture
def app(tmp_path):
    yield from home_app(tmp_path)


# ------------------------------------------------------------------ review: the rule and the answer


def _grid_status(report, label_start: str, task_id: str) -> str:
    row = next(r for r in report.report.models if r.label.startswith(label_start))
    return next(b.status for b in row.blocks if b.task_id == task_id)


async def test_a_flagged_fail_marked_pass_in_review_changes_block_counts_and_rate(app):
    from compare_tui.tui.screens.review import ReviewScreen

    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        report = await open_report(pilot)

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
    from tests.tui.test_tui_data import RUN_IDS

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
            await open_report(pilot)
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
    from tests.tui.test_tui_data import RUN_IDS

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
            await open_report(pilot)
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

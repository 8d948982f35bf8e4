"""The review queue proposes the answers that calibrate a judge (issue 52): after the tasks that
need a person, the answers `label_plan` picks (a fair sample by candidate and the judge's
verdict), with each judge's agreement and the labels needed for ±5 points on one line."""

from __future__ import annotations

import pytest

from compare_tui.store import ReviewRecord
from compare_tui.store.judgements import JudgementRecord, JudgingRecord
from compare_tui.tui.review_queue import NEEDS_A_PERSON, TO_CALIBRATE
from tests.support.home_app import settle
from tests.support.screen_host import ScreenHost
from tests.tui.test_tui_data import COMPARISON_ID, OUTCOMES, RUN_IDS, build_store


def _graded_store(tmp_path):
    """The TUI's two-run store, both runs graded by `judge-x` (5 for a passing ticket, 2 for a
    failing one, and one passing ticket of each run graded 2), three answers labelled."""
    store, _ = build_store(tmp_path)
    for model, run_id in RUN_IDS.items():
        judging = store.save_judging(
            JudgingRecord(
                kind="scale", run_id=run_id, judge_model="judge-x", rubric_digest="sha256:" + "b" * 64, mode="quality"
            )
        )
        for i, outcome in enumerate(OUTCOMES[model][:10]):
            if outcome == "e":
                continue
            grade = 5 if outcome == "p" and i != 0 else 2
            store.record_judgement(
                JudgementRecord(
                    judging_id=judging.id,
                    task_id=f"ticket-{i + 1:02d}",
                    ordering="single",
                    verdict=str(grade),
                    grade=grade,
                    attempt=1,
                )
            )
    for task, verdict in (("ticket-01", "pass"), ("ticket-02", "pass"), ("ticket-03", "fail")):
        store.add_review(ReviewRecord(run_id=RUN_IDS["smollm2-135m"], task_id=task, verdict=verdict, reviewer="ann"))
    return store


def _host(store):
    from compare_tui.tui.screens.review import ReviewScreen

    return ScreenHost(store, lambda: ReviewScreen(COMPARISON_ID))


async def test_the_review_queue_proposes_labels_for_the_judge_after_the_waiting_tasks(tmp_path):
    store = _graded_store(tmp_path)
    app = _host(store)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        review = app.screen
        reasons = [item.reason for item in review.queue]
        assert reasons[:4] == [NEEDS_A_PERSON] * 4 and set(reasons[4:]) == {TO_CALIBRATE}
        proposed = [item.key for item in review.queue[4:]]
        assert len(proposed) == 10 and (RUN_IDS["smollm2-135m"], "ticket-01") not in proposed  # labelled
        assert {run for run, _ in proposed} == set(RUN_IDS.values())  # both candidates
        line = str(review.query_one("#review-calibration").render())
        assert "judge judge-x: judge agrees with your labels: passes 1/2 right answers, fails 1/1" in line
        assert "labels needed for ±5 points" in line
        # Labelling a proposed answer takes it out of the queue and into the judge's figures.
        while review.queue[review.position].reason != TO_CALIBRATE:
            await pilot.press("j")
            await settle(pilot)
        key = review.queue[review.position].key
        await pilot.press("end", "f", "f")
        await settle(pilot)
        assert key not in [item.key for item in review.queue if item.reason == TO_CALIBRATE]
        assert "/3 wrong ones" in str(review.query_one("#review-calibration").render())  # the new label counts
    store.close()


@pytest.mark.parametrize("size", [(80, 24)], ids=["80x24"])
def test_snapshot_review_queue_proposing_labels(tmp_path, snap_compare, size):
    store = _graded_store(tmp_path)

    async def keys(pilot):
        await settle(pilot)
        for _ in range(4):  # past the four tasks that need a person: the first proposed answer
            await pilot.press("j")
            await settle(pilot)

    assert snap_compare(_host(store), terminal_size=size, run_before=keys)
    store.close()

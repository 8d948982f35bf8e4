"""The triage queue (pure loader) and the triage screen driven through keys by Pilot: j/k,
labels saved at once with who and when, notes, filters, n of m progress, live figures and badge."""

from __future__ import annotations

import pytest

from compare_tui.judge.evaluator.triage import load_triage, save_label
from compare_tui.store import Store
from compare_tui.store.judgements import JudgementRecord, JudgingRecord
from compare_tui.tui.screens.note_entry import NoteEntryScreen
from compare_tui.tui.screens.triage import TriageScreen
from tests.core.judge.test_judge_support import add_run, golden, scored
from tests.support.home_app import settle
from tests.support.screen_host import ScreenHost

TASKS = {"t1": "billing", "t2": "billing", "t3": "billing", "t4": "billing"}


def _pair_store(tmp_path) -> tuple[Store, str, str, str]:
    """t1 inconsistent, t2 judge (baseline) vs scorer (candidate), t3 a failed call, t4 an agreed tie."""
    store = Store.open(tmp_path / "runs.sqlite")
    goldset = golden(tmp_path, TASKS)
    base = add_run(
        store,
        goldset,
        "base-model",
        {"t1": scored("billing"), "t2": scored("bug"), "t3": scored("billing"), "t4": scored("billing")},
    )
    cand = add_run(store, goldset, "cand-model", {t: scored("billing") for t in TASKS})
    judging = store.save_judging(
        JudgingRecord(
            kind="pair",
            run_id=base,
            other_run_id=cand,
            judge_model="judge-model",
            rubric_digest="sha256:" + "3" * 64,
            mode="reference",
        )
    )
    calls = {
        ("t1", "ab"): ("A", "baseline"),
        ("t1", "ba"): ("A", "candidate"),
        ("t2", "ab"): ("A", "baseline"),
        ("t2", "ba"): ("B", "baseline"),
        ("t3", "ab"): (None, None),
        ("t3", "ba"): ("TIE", "tie"),
        ("t4", "ab"): ("TIE", "tie"),
        ("t4", "ba"): ("TIE", "tie"),
    }
    for (task, ordering), (verdict, preferred) in calls.items():
        store.record_judgement(
            JudgementRecord(
                judging_id=judging.id,
                task_id=task,
                ordering=ordering,
                verdict=verdict,
                preferred=preferred,
                rationale=f"reason {task} {ordering}",
                error_class=None if verdict else "http_5xx",
                error=None if verdict else "HTTP 500",
            )
        )
    return store, judging.id, base, cand


def _grade_store(tmp_path) -> tuple[Store, str, str]:
    """A candidate grade judging of a run: it fails t1 (the scorer passed it) and its t3 call failed."""
    store = Store.open(tmp_path / "runs.sqlite")
    run = add_run(store, golden(tmp_path, TASKS), "cand-model", {t: scored("billing") for t in TASKS})
    judging = store.save_judging(
        JudgingRecord(
            kind="grade",
            run_id=run,
            judge_model="judge-model",
            rubric_digest="sha256:" + "4" * 64,
            mode="reference",
            current="scorer",
        )
    )
    for task, verdict in (("t1", "fail"), ("t2", "pass"), ("t3", None), ("t4", "pass")):
        store.record_judgement(
            JudgementRecord(
                judging_id=judging.id,
                task_id=task,
                ordering="single",
                verdict=verdict,
                preferred=verdict,
                rationale=f"grade {task}",
                error_class=None if verdict else "unparseable",
                error=None if verdict else "no verdict",
            )
        )
    return store, judging.id, run


def test_the_pair_queue_holds_each_kind_of_disagreement(tmp_path):
    store, judging, base, cand = _pair_store(tmp_path)
    with store:
        view = load_triage(store, judging)
        kinds = {item.task_id: item.kinds for item in view.items}
        assert kinds == {"t1": ("inconsistent",), "t2": ("judge vs scorer",), "t3": ("failed call",)}
        t2 = view.items[1]
        assert t2.answers[0] == ("baseline · base-model", "bug") and t2.answers[1][1] == "billing"
        assert t2.rationales[0][1] == "reason t2 ab" and "candidate shown first: B → baseline" in t2.rationales[1][0]
        assert view.progress() == (0, 3)
        save_label(store, view, "t2", "pass", reviewer="ann")  # a person says the candidate is better
        again = load_triage(store, judging)
        assert {i.task_id: i.kinds for i in again.items}["t2"] == ("judge vs label", "judge vs scorer")
        assert again.progress() == (1, 3) and "agrees with people on 0 of 1" in again.figures[1]
        assert store.pair_labels(base, cand)["t2"].label == "candidate"


def test_the_grade_queue_compares_with_the_current_evaluator(tmp_path):
    store, judging, run = _grade_store(tmp_path)
    with store:
        view = load_triage(store, judging)
        assert view.kind == "grade" and view.badge == "Not enough data"
        kinds = {item.task_id: item.kinds for item in view.items}
        assert kinds == {"t1": ("judge vs scorer", "current vs candidate"), "t3": ("failed call",)}
        assert view.items[0].answers[1] == ("expected outcome", "billing")
        with pytest.raises(ValueError, match="tie applies to a pair"):
            save_label(store, view, "t1", "tie", reviewer="ann")


def _Host(store: Store, screen: TriageScreen) -> ScreenHost:  # noqa: N802 - reads as the app it builds
    return ScreenHost(store, lambda: screen, reviewer="tester")


def _text(screen, selector: str) -> str:
    return str(screen.query_one(selector).render())


async def test_pilot_pair_triage_moves_labels_notes_and_filters(tmp_path):
    store, judging, base, cand = _pair_store(tmp_path)
    with store:
        screen = TriageScreen(judging[:6])
        async with _Host(store, screen).run_test(size=(120, 40)) as pilot:
            await settle(pilot)
            status = _text(screen, "#triage-status")
            assert "0 of 3 triaged" in status and "item 1 of 3" in status and "t1" in status
            assert "inconsistent" in _text(screen, "#triage-figures")
            assert "reason t1 ab" in _text(screen, "#rationale-left") and "reason t1 ba" in _text(
                screen, "#rationale-right"
            )
            await pilot.press("j")
            assert "t2" in _text(screen, "#triage-status") and _text(screen, "#answer-left") == "bug"
            await pilot.press("k")
            assert "t1" in _text(screen, "#triage-status")
            await pilot.press("t")  # tie on t1, saved at once, then on to t2
            await settle(pilot)
            label = store.pair_labels(base, cand)["t1"]
            assert (label.label, label.reviewer) == ("tie", "tester") and label.at
            status = _text(screen, "#triage-status")
            assert "1 of 3 triaged" in status and "t2" in status
            await pilot.press("n")
            await pilot.pause()
            assert isinstance(pilot.app.screen, NoteEntryScreen)
            await pilot.press(*"clearer", "enter")
            await pilot.pause()
            assert "note for the next label: clearer" in _text(screen, "#triage-label")
            await pilot.press("p")
            await settle(pilot)
            saved = store.pair_labels(base, cand)["t2"]
            assert (saved.label, saved.note, saved.reviewer) == ("candidate", "clearer", "tester")
            # Live figures: the tie on t1 agrees with the (inconsistent = tie) judge; t2 does not.
            assert "judge agrees with people on 1 of 2" in _text(screen, "#triage-figures")
            await pilot.press("k")
            assert "labelled candidate by tester" in _text(screen, "#triage-label")
            await pilot.press("3")  # inconsistent only
            status = _text(screen, "#triage-status")
            assert "item 1 of 1 (filter: inconsistent)" in status and "t1" in status
            await pilot.press("5")  # failed calls only
            assert "t3" in _text(screen, "#triage-status") and "HTTP 500" in _text(screen, "#rationale-left")
            await pilot.press("2")
            assert "item 1 of 1 (filter: judge vs scorer)" in _text(screen, "#triage-status")
            await pilot.press("0", "j")
            assert "item 3 of 3 (filter: all)" in _text(screen, "#triage-status")
            await pilot.press("s")  # a skip counts as triaged: the person looked and moved on
            await settle(pilot)
            assert "3 of 3 triaged" in _text(screen, "#triage-status")
            assert store.pair_labels(base, cand)["t3"].label == "skip"


async def test_pilot_grade_triage_updates_the_badge_figures_live(tmp_path):
    store, judging, run = _grade_store(tmp_path)
    with store:
        screen = TriageScreen("latest")
        async with _Host(store, screen).run_test(size=(120, 40)) as pilot:
            await settle(pilot)
            figures = _text(screen, "#triage-figures")
            assert "labelled 0" in figures and "badge: Not enough data" in figures
            assert "p pass · f fail · s skip" in _text(screen, "#triage-label")
            await pilot.press("t")
            await settle(pilot)
            assert store.reviews_for_run(run) == {}  # a tie on a single answer saves nothing
            await pilot.press("f")  # a person agrees with the candidate judge on t1
            await settle(pilot)
            review = store.reviews_for_run(run)["t1"]
            assert (review.verdict, review.reviewer) == ("fail", "tester")
            figures = _text(screen, "#triage-figures")
            assert "labelled 1" in figures and "correct: current 0, candidate 1" in figures
            assert "1 of 2 triaged" in _text(screen, "#triage-status")
            await pilot.press("escape")
            await pilot.pause()
            assert not isinstance(pilot.app.screen, TriageScreen)


async def test_the_footer_names_p_and_f_as_the_body_does_and_r_shows_the_reasoning_whole(tmp_path):
    # At 80×24 the footer said `p Pass f Fail` while the body said `p candidate better · f
    # baseline better`, and the judge's reasoning showed one line with no way to read the rest.
    store, judging, base, cand = _pair_store(tmp_path)
    with store:
        screen = TriageScreen(judging[:6])
        async with _Host(store, screen).run_test(size=(80, 24)) as pilot:
            await settle(pilot)
            shown = {b.binding.description for b in screen.active_bindings.values() if b.enabled and b.binding.show}
            assert {"Cand. better", "Base better"} <= shown and not {"Pass", "Fail"} & shown
            answers = screen.query_one("#triage-answers")
            rationale = screen.query_one("#rationale-left")
            before = rationale.parent.size.height
            await pilot.press("r")
            await pilot.pause()
            assert not answers.display and rationale.parent.size.height > before
            await pilot.press("r")
            await pilot.pause()
            assert answers.display
            await pilot.press("p")  # still labels the candidate better
            await settle(pilot)
            assert store.pair_labels(base, cand)["t1"].label == "candidate"

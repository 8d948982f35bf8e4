"""A judge calibrated against people's labels: the estimator (Rogan–Gladen, bounded, with the
exact box interval), the paired corrected comparison, the labels proposed next, the drift
caveat, and what the store and the grade report carry."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from compare_tui.judge.calibration.figures import (
    NOT_ENOUGH,
    LabelCounts,
    calibrate,
    correct_rate,
    corrected_interval,
    rogan_gladen,
)
from compare_tui.judge.calibration.load import Label, drift_caveat, load_calibration
from compare_tui.judge.calibration.next_labels import Candidate, labels_needed, propose
from compare_tui.judge.calibration.paired import corrected_difference
from compare_tui.vocabulary import Correction

counts = st.builds(
    LabelCounts,
    st.integers(0, 60),
    st.integers(0, 60),
    st.integers(0, 60),
    st.integers(0, 60),
)


@settings(max_examples=60, deadline=None)
@given(counts, st.integers(1, 300), st.data())
def test_the_corrected_rate_is_bounded_and_inside_its_interval(c, judged, data):
    passed = data.draw(st.integers(0, judged))
    rate = correct_rate(passed, judged, calibrate(c))
    assert rate.raw == passed / judged
    assert rate.raw_interval is not None and rate.raw_interval.contains(rate.raw)
    if rate.calibrated:
        assert rate.corrected is not None and rate.interval is not None
        assert 0 <= rate.interval.low <= rate.corrected <= rate.interval.high <= 1
    else:
        assert rate.corrected is None and rate.interval is None and "not verified" in rate.reason


@settings(max_examples=40, deadline=None)
@given(st.integers(10, 200), st.integers(10, 200), st.integers(1, 300), st.data())
def test_a_judge_right_on_every_label_leaves_the_rate_as_it_is(right, wrong, judged, data):
    passed = data.draw(st.integers(0, judged))
    rate = correct_rate(passed, judged, calibrate(LabelCounts(right, 0, wrong, 0)))
    assert rate.status == Correction.CALIBRATED and abs((rate.corrected or 0) - passed / judged) < 1e-12
    assert rate.interval is not None and rate.interval.contains(passed / judged)


@given(st.floats(0, 1), st.floats(0.51, 1), st.floats(0.51, 1))
def test_rogan_gladen_inverts_what_the_judge_does(p, se, sp):
    q = p * se + (1 - p) * (1 - sp)
    assert abs(rogan_gladen(q, se, sp) - p) < 1e-9


@given(st.floats(0, 1), st.floats(0.51, 1), st.floats(0.51, 1), st.floats(0, 1))
def test_rogan_gladen_is_increasing_in_the_judge_rate_and_bounded(q1, se, sp, q2):
    low, high = sorted((q1, q2))
    assert 0 <= rogan_gladen(low, se, sp) <= rogan_gladen(high, se, sp) <= 1


def test_the_issue_example_a_lenient_judge_overstates_and_the_correction_takes_it_back():
    # Passes 20 % of wrong answers, fails 10 % of right ones: a true 50 % reads 55 %.
    calibration = calibrate(LabelCounts(900, 100, 800, 200))
    assert (
        calibration.sentence()
        == "judge agrees with your labels: passes 900/1000 right answers, fails 800/1000 wrong ones"
    )
    rate = correct_rate(5500, 10000, calibration)
    assert rate.raw == 0.55 and abs((rate.corrected or 0) - 0.5) < 1e-9
    assert rate.interval is not None and rate.interval.contains(0.5) and not rate.interval.contains(0.6)


def test_below_the_threshold_no_corrected_figure_is_given():
    rate = correct_rate(30, 50, calibrate(LabelCounts(9, 0, 20, 0)))
    assert rate.status == Correction.TOO_FEW_LABELS and rate.corrected is None
    assert (
        rate.reason.startswith(NOT_ENOUGH) and "9 right and 20 wrong answers labelled; 10 of each needed" in rate.reason
    )


def test_a_judge_no_better_than_a_coin_is_not_inverted():
    rate = correct_rate(30, 50, calibrate(LabelCounts(10, 10, 10, 10)))
    assert rate.status == Correction.NOT_INFORMATIVE and rate.corrected is None
    # Enough labels, but too few to show the judge beats a coin: no figure either.
    shaky = correct_rate(30, 50, calibrate(LabelCounts(7, 3, 7, 3)))
    assert shaky.status == Correction.TOO_FEW_LABELS and "too uncertain" in shaky.reason
    assert corrected_interval(30, 50, LabelCounts(7, 3, 7, 3)) is None


def test_the_paired_corrected_difference_keeps_the_judges_sign_and_widens():
    calibration = calibrate(LabelCounts(45, 5, 40, 10))
    candidate = {f"t{i}": i < 70 for i in range(100)}
    baseline = {f"t{i}": i < 40 for i in range(100)}
    d = corrected_difference(candidate, baseline, calibration)
    assert d.raw == 0.3 and d.corrected is not None and d.corrected > d.raw and d.conclusion == "candidate higher"
    same = corrected_difference(baseline, baseline, calibration)
    assert same.interval is not None and same.interval.contains(0) and same.conclusion == "within noise"
    few = corrected_difference(candidate, baseline, calibrate(LabelCounts(3, 0, 3, 0)))
    assert few.interval is None and "not enough labels to correct" in few.reason


def _pool(labelled: int = 0):
    items = []
    for model, passes in (("a", 30), ("b", 10)):
        for i in range(40):
            items.append(Candidate(f"run-{model}", model, f"t{i}", i < passes))
    return [
        Candidate(i.run_id, i.model, i.task_id, i.passed, True if n < labelled else None) for n, i in enumerate(items)
    ]


def test_label_next_keeps_the_labels_proportional_to_what_the_judge_decided():
    proposals = propose(_pool(), 40)
    assert len(proposals) == 40 and len({(p.run_id, p.task_id) for p in proposals}) == 40
    groups = {(m, v): sum(1 for p in proposals if (p.model, p.passed) == (m, v)) for m in "ab" for v in (True, False)}
    # The pool is 30/80, 10/80, 10/80 and 30/80: half of each group once 40 are proposed.
    assert groups == {("a", True): 15, ("a", False): 5, ("b", True): 5, ("b", False): 15}
    assert proposals == propose(_pool(), 40)  # a fixed order, never a random draw
    # Each line counts the labels people gave, not the proposals listed above it.
    assert all(": 0 of " in p.why for p in proposals), [p.why for p in proposals[:3]]
    assert all(p.task_id != "t0" or p.model != "a" for p in propose(_pool(labelled=1), 79))


def test_labels_needed_for_five_points():
    c = LabelCounts(45, 5, 40, 10)
    small = labels_needed(c, [("a", 50, 100)])
    assert small.more is None and "out of reach for a: its 100 judged answers" in small.sentence
    big = labels_needed(c, [("a", 5000, 10000)])
    assert big.more is not None and big.more > 0 and f"about {big.more} more" in big.sentence
    assert labels_needed(LabelCounts(10, 0, 0, 0), [("a", 5, 10)]).more is None


def test_a_judge_that_drifts_gets_a_caveat():
    steady = [Label("r", f"t{i}", True, i % 10 != 0, f"2026-12-01T00:{i:02d}:00Z") for i in range(40)]
    assert drift_caveat(steady) is None
    drifted = steady[:20] + [Label("r", f"u{i}", True, i % 2 == 0, f"2026-12-02T00:{i:02d}:00Z") for i in range(20)]
    caveat = drift_caveat(drifted)
    assert caveat is not None and caveat.startswith("Judge drift: the judge agrees with 10/20 of your newer labels")
    assert drift_caveat(drifted[:30]) is None  # below 40 labels nothing is re-measured


# ---------------------------------------------------------------- from the store, through `report`

TWENTY_FOUR = {f"t{i:02d}": "billing" for i in range(24)}


def _stored(tmp_path, labelled: int, rubric: str = ""):
    """Two runs of a 24-task set graded by `judge` (grade 5 for `billing`, else 2, except four
    right answers of each run graded 2: a judge that misses some right answers), and a person's
    labels on the first `labelled` tasks of each run."""
    from compare_tui.store import ComparisonRecord, ReviewRecord, Store
    from compare_tui.store.judgements import JudgementRecord, JudgingRecord
    from tests.core.judge.test_judge_support import add_run, golden, scored

    goldset = golden(tmp_path, TWENTY_FOUR)
    store_path = tmp_path / "runs.sqlite"
    with Store.open(store_path) as s:
        runs = {}
        for model, right in (("base-model", 10), ("cand-model", 16)):
            answers = {t: scored("billing" if i < right else "bug") for i, t in enumerate(TWENTY_FOUR)}
            run = add_run(s, goldset, model, answers)
            runs[model] = run
            judging = s.save_judging(
                JudgingRecord(
                    kind="scale",
                    run_id=run,
                    judge_model="judge",
                    rubric_digest="sha256:" + "a" * 64,
                    mode="quality",
                    rubric=rubric,
                )
            )
            for i, task in enumerate(TWENTY_FOUR):
                grade = 5 if i < right and i >= 4 else 2
                s.record_judgement(
                    JudgementRecord(
                        judging_id=judging.id,
                        task_id=task,
                        ordering="single",
                        verdict=str(grade),
                        grade=grade,
                        attempt=1,
                    )
                )
            for i, task in enumerate(list(TWENTY_FOUR)[:labelled]):
                verdict = "pass" if i < right else "fail"
                s.add_review(ReviewRecord(run_id=run, task_id=task, verdict=verdict, reviewer="ann"))
        comparison = s.create_comparison(ComparisonRecord(name="c", baseline="base-model"))
        s.set_comparison_runs(comparison.id, [runs["base-model"], runs["cand-model"]])
    return store_path, runs, comparison.id


def test_the_store_gives_the_judges_calibration_and_each_runs_corrected_rate(tmp_path):
    from compare_tui.store import Store

    store_path, runs, _ = _stored(tmp_path, labelled=24)
    with Store.open(store_path) as s:
        workload = s.get_run_exact(runs["base-model"]).goldset_id
        jc = load_calibration(s, "judge", "sha256:" + "a" * 64, workload)
    c = jc.calibration.counts
    # Right answers: 10 + 16, four of each run graded 2; wrong: 14 + 8, all graded 2.
    assert (c.right_passed, c.right_failed, c.wrong_failed, c.wrong_passed) == (18, 8, 22, 0)
    assert (
        jc.calibration.sentence() == "judge agrees with your labels: passes 18/26 right answers, fails 22/22 wrong ones"
    )
    base = jc.rate(runs["base-model"])
    assert base is not None and base.raw == 6 / 24 and base.calibrated
    assert base.corrected is not None and abs(base.corrected - (6 / 24) / (18 / 26)) < 1e-9


def test_report_shows_raw_and_corrected_side_by_side(tmp_path, capsys):
    from compare_tui.cli import main

    store_path, runs, comparison = _stored(tmp_path, labelled=24)
    assert main(["report", comparison, "--store", str(store_path)]) in (0, 1)
    out = capsys.readouterr().out
    block = " ".join(out[out.index("Judge pass rate (grade ≥ 4)") :].split())
    assert "judge agrees with your labels: passes 18/26 right answers, fails 22/22 wrong ones" in block
    assert "base-model: judge pass rate 25% (" in block and "human-calibrated, 48 labels" in block
    assert "cand-model vs base-model, paired over 24 tasks: corrected Δ +" in block
    assert main(["report", comparison, "--store", str(store_path), "--format", "json"]) in (0, 1)
    (grades,) = json.loads(capsys.readouterr().out)["grades"]
    assert grades["calibration"]["labels"] == 48 and grades["calibration"]["sensitivity"] == 18 / 26
    rate = grades["runs"][0]["judge_pass_rate"]
    assert rate["raw"] == 0.25 and rate["status"] == "human-calibrated" and rate["corrected"] > 0.25
    assert grades["runs"][1]["corrected_delta_vs_baseline"]["tasks"] == 24
    assert main(["report", comparison, "--store", str(store_path), "--format", "md"]) in (0, 1)
    md = capsys.readouterr().out
    assert "| judge pass rate (raw, 95% CI) | corrected (95% CI) |" in md and "human-calibrated |" in md


def test_report_with_few_labels_shows_the_raw_rate_not_verified(tmp_path, capsys):
    from compare_tui.cli import main

    store_path, _, comparison = _stored(tmp_path, labelled=8)
    assert main(["report", comparison, "--store", str(store_path)]) in (0, 1)
    out = capsys.readouterr().out
    assert "base-model: judge pass rate 25% (" in out
    assert "raw · not enough labels to correct: raw judge rate shown, not verified (16 right and 0 wrong" in " ".join(
        out.split()
    )
    assert "human-calibrated," not in out and "no wrong answer labelled yet" in " ".join(out.split())


def test_label_set_import_and_next_from_the_command_line(tmp_path, capsys):
    from compare_tui.cli import main
    from compare_tui.store import Store

    store_path, runs, _ = _stored(tmp_path, labelled=0)
    base = runs["base-model"]
    assert main(["label", "next", base[:6], "--store", str(store_path), "--count", "3"]) == 0
    out = capsys.readouterr().out
    assert "no answer judged here is labelled by a person yet" in out and "Label next (a fair sample" in out
    assert out.count("compare-tui label set ") == 3
    assert main(["label", "set", base[:6], "t00", "pass", "--store", str(store_path), "--reviewer", "ann"]) == 0
    assert main(["label", "set", base[:6], "nope", "pass", "--store", str(store_path)]) == 2
    assert "has no answer to task 'nope'" in capsys.readouterr().err
    good = tmp_path / "labels.csv"
    good.write_text(
        "run,task,verdict,note\n" + "".join(f"{base},t{i:02d},fail,\n" for i in range(12, 24)), encoding="utf-8"
    )
    bad = tmp_path / "bad.csv"
    bad.write_text(f"run,task,verdict\n{base},t01,pass\n{base},t02,maybe\n", encoding="utf-8")
    assert main(["label", "import", str(bad), "--store", str(store_path)]) == 2
    assert "bad.csv:3: verdict 'maybe' is not pass, fail or skip" in capsys.readouterr().err
    with Store.open(store_path) as s:
        scored = {a.task_id: a.outcome for a in s.attempts_for_run(base)}
    overridden = sum(scored.get(f"t{i:02d}") == "pass" for i in range(12, 24))  # scorer pass, labelled fail
    assert main(["label", "import", str(good), "--store", str(store_path), "--reviewer", "bo"]) == 0
    out = capsys.readouterr().out
    assert "imported 12 label(s)" in out
    note = "of these label(s) disagree with the scorer's outcome of a task it scored"
    assert (f"note: {overridden} {note}" in out) if overridden else (note not in out)
    with Store.open(store_path) as s:
        reviews = s.reviews_for_run(base)
    assert set(reviews) == {"t00", *(f"t{i:02d}" for i in range(12, 24))}  # nothing of the bad file
    assert main(["label", "next", base, "--store", str(store_path), "--format", "json"]) == 0
    (doc,) = json.loads(capsys.readouterr().out)
    assert (doc["right"], doc["wrong"]) == (1, 12) and len(doc["next"]) == 10
    assert all((p["run"], p["task"]) not in {(base, "t00"), (base, "t12")} for p in doc["next"])
    # A label against the scorer's outcome says it will replace it in every report.
    task, outcome = next(
        (t, o) for t, o in sorted(scored.items()) if t not in reviews if o in ("pass", "fail") and t != "t00"
    )
    other = "fail" if outcome == "pass" else "pass"
    assert main(["label", "set", base, task, other, "--store", str(store_path), "--reviewer", "ann"]) == 0
    assert f"note: 1 {note}" in capsys.readouterr().out


def test_the_published_page_carries_raw_and_corrected_rates(tmp_path, capsys):
    from compare_tui.cli import main

    store_path, _, comparison = _stored(tmp_path, labelled=24)
    site = tmp_path / "site"
    assert main(["publish", comparison, "--store", str(store_path), "--out", str(site)]) == 0
    page = (site / "index.html").read_text(encoding="utf-8")
    assert "judge agrees with your labels: passes 18/26 right answers, fails 22/22 wrong ones" in page
    assert "judge pass rate (raw, 95% CI)" in page and "human-calibrated, 48 labels" in page
    report = json.loads((site / "report.json").read_text(encoding="utf-8"))
    assert report["grades"][0]["runs"][0]["judge_pass_rate"]["status"] == "human-calibrated"


def test_steps_decided_by_grades_carry_the_judges_calibration(tmp_path):
    from compare_tui.judge.grade.scale import load_scale_rubric
    from compare_tui.judge.grade.steps import load_step_grading
    from compare_tui.store import Store

    quality = load_scale_rubric("quality")
    for labelled, verified in ((24, True), (8, False)):
        store_path, runs, _ = _stored(tmp_path / str(labelled), labelled=labelled, rubric=quality.text)
        with Store.open(store_path) as s:
            grading = load_step_grading(s, [s.get_run_exact(r) for r in runs.values()], "judge", "quality", 4)
        assert grading.verified is verified and grading.calibration_labels == 2 * labelled
        text = grading.calibration
        if verified:
            assert "passes 18/26 right answers, fails 22/22 wrong ones" in text
            assert text.endswith("; verified on 48 labels")
        else:
            assert "not enough labels to verify the judge: the steps it decided are not verified" in text
            assert "(16 right and 0 wrong answers labelled; 10 of each needed)" in text

"""Calibration of a 1–5 grader with `compare-tui evaluator-compare --grader`: grades read as
pass from `--pass-at` up, checked against the executable scorer and people's labels; a grader
that always answers 5 is flagged; a stored grader can be the current evaluator."""

from __future__ import annotations

import json

import pytest

from compare_tui.cli import main
from compare_tui.judge import LOOKS_SAFE
from compare_tui.judge.evaluator.compare import REVIEW_FIRST, Decision, EvaluatorRow, compare_evaluators
from compare_tui.judge.evaluator.load import grade_level
from compare_tui.store import ReviewRecord, Store
from tests.core.judge.test_judge_support import TASKS, add_run, entry, fenced, golden, scored, write_models
from tests.support.fake_openai import FakeServer, text

TRUTH = {t: "fail" if t in ("t1", "t2") else "pass" for t in TASKS}


def rule_grader(body, count):
    return text("GRADE: 5\nREASON: right label." if "billing" in fenced(body)["ANSWER"] else "GRADE: 2\nREASON: wrong.")


def always_five(body, count):
    return text("GRADE: 5\nREASON: looks great.")


def four_for_right(body, count):
    return text("GRADE: 4\nREASON: fine." if "billing" in fenced(body)["ANSWER"] else "GRADE: 3\nREASON: meh.")


@pytest.fixture
def setup(tmp_path):
    goldset = golden(tmp_path)
    store = tmp_path / "runs.sqlite"
    with Store.open(store) as s:
        run = add_run(s, goldset, "cand-model", {t: scored("bug" if TRUTH[t] == "fail" else "billing") for t in TASKS})
        for task, verdict in TRUTH.items():
            s.add_review(ReviewRecord(run_id=run, task_id=task, verdict=verdict, reviewer="ann"))
    return tmp_path, store, run


def _cli(tmp_path, store, run, current, candidate, *extra, servers):
    models = write_models(tmp_path / "models.toml", *(entry(name, url) for name, url in servers.items()))
    return main(
        [
            "evaluator-compare",
            "--run",
            run,
            "--current",
            current,
            "--candidate",
            candidate,
            "--min-labelled",
            "6",
            "--models",
            str(models),
            "--store",
            str(store),
            "--json",
            *extra,
        ]
    )


def test_a_grader_that_follows_the_labels_looks_safe(setup, capsys):
    tmp_path, store, run = setup
    with FakeServer(rule_grader) as judge:
        code = _cli(tmp_path, store, run, "scorer", "grader", "--grader", "quality", servers={"grader": judge.url})
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and out["badge"]["name"] == LOOKS_SAFE and out["constant_candidate"] is None
    assert out["candidate"].startswith("grader grader (1–5, rubric quality") and "pass at ≥ 4" in out["candidate"]
    assert out["rows"][0]["candidate_rationale"] == "grade 2: wrong."


def test_a_grader_that_always_answers_5_is_flagged(setup, capsys):
    tmp_path, store, run = setup
    with FakeServer(always_five) as judge:
        code = _cli(tmp_path, store, run, "scorer", "five", "--grader", "quality", servers={"five": judge.url})
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and out["badge"]["name"] == REVIEW_FIRST and out["constant_candidate"] == "pass"
    assert any("discriminates nothing" in r for r in out["badge"]["reasons"])


def test_pass_at_sets_where_a_grade_passes(setup, capsys):
    tmp_path, store, run = setup
    with FakeServer(four_for_right) as judge:
        servers = {"grader": judge.url}
        assert _cli(tmp_path, store, run, "scorer", "grader", "--grader", "quality", servers=servers) == 0
        assert json.loads(capsys.readouterr().out)["correct"]["candidate"] == 6
        assert (
            _cli(tmp_path, store, run, "scorer", "grader", "--grader", "quality", "--pass-at", "5", servers=servers)
            == 0
        )
    out = json.loads(capsys.readouterr().out)
    assert out["constant_candidate"] == "fail" and out["correct"]["candidate"] == 2
    assert len(judge.requests) == 6  # the second comparison re-read the stored grades


def test_a_stored_grader_can_be_the_current_evaluator(setup, capsys):
    tmp_path, store, run = setup
    with FakeServer(always_five) as five, FakeServer(rule_grader) as rule:
        servers = {"five": five.url, "rule": rule.url}
        _cli(tmp_path, store, run, "scorer", "five", "--grader", "quality", servers=servers)
        capsys.readouterr()
        code = _cli(tmp_path, store, run, "five", "rule", "--grader", "quality", servers=servers)
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and out["current"].startswith("grader five") and len(five.requests) == 6
    assert out["correct"] == {"current": 4, "candidate": 6} and out["badge"]["name"] == LOOKS_SAFE


def test_grade_level_and_the_constant_rule():
    assert [grade_level(g) for g in (1, 3, 4, 5)] == ["fail", "fail", "pass", "pass"]
    assert grade_level(4, pass_at=5) == "fail"
    rows = [EvaluatorRow(f"t{i}", Decision("pass" if i else "fail"), Decision("pass")) for i in range(3)]
    assert compare_evaluators(rows, current_name="a", candidate_name="b").constant == "pass"
    same = [EvaluatorRow(f"t{i}", Decision("pass"), Decision("pass")) for i in range(3)]
    assert compare_evaluators(same, current_name="a", candidate_name="b").constant is None

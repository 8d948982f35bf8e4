"""Evaluator comparison: the badge rule (pure), and `compare-tui evaluator-compare` against
scripted candidate judges — failed calls stay in the table and rule out Looks safe, only the
candidate is called, and agreement alone never makes a candidate look safe."""

from __future__ import annotations

import json

import pytest

from compare_tui.cli import main
from compare_tui.judge import LOOKS_SAFE
from compare_tui.judge.calibration.figures import NOT_ENOUGH
from compare_tui.judge.evaluator.compare import (
    FAILED_CALL,
    NOT_ENOUGH_DATA,
    REVIEW_FIRST,
    Decision,
    EvaluatorRow,
    compare_evaluators,
)
from compare_tui.store import ReviewRecord, Store
from tests.core.judge.test_judge_support import (
    TASKS,
    add_run,
    consistent_judge,
    entry,
    fenced,
    golden,
    scored,
    write_models,
)
from tests.support.fake_openai import FakeServer, http_error, text


def _rows(n, *, labelled=0, changed=(), failed=(), wrong_candidate=()):
    rows = []
    for i in range(n):
        current = Decision("pass")
        candidate = (
            Decision(None, FAILED_CALL, "HTTP 500")
            if i in failed
            else Decision("fail")
            if i in changed or i in wrong_candidate
            else Decision("pass")
        )
        rows.append(EvaluatorRow(f"t{i:02d}", current, candidate, "pass" if i < labelled else None))
    return rows


def _compare(rows, min_labelled=20):
    return compare_evaluators(rows, current_name="scorer", candidate_name="judge", min_labelled=min_labelled)


def test_agreement_alone_never_yields_looks_safe():
    c = _compare(_rows(40))
    assert c.agreement == 1.0 and c.labelled == 0
    assert c.badge.name == NOT_ENOUGH_DATA and "0 labelled row(s); 20 needed" in c.badge.reasons[0]
    assert "Agreement alone never counts" in c.badge.thresholds and "at least 20" in c.badge.thresholds


def test_looks_safe_needs_enough_labels_as_correct_no_failures_and_no_unread_changes():
    assert _compare(_rows(30, labelled=20)).badge.name == LOOKS_SAFE
    assert _compare(_rows(30, labelled=19)).badge.name == NOT_ENOUGH_DATA
    failed = _compare(_rows(30, labelled=20, failed=(25,)))
    assert failed.badge.name == REVIEW_FIRST and "1 candidate call(s) failed" in failed.badge.reasons[0]
    assert failed.failed_calls == 1 and failed.rows[25].candidate.status == FAILED_CALL  # still in the table
    worse = _compare(_rows(30, labelled=20, wrong_candidate=(3,)))
    assert worse.badge.name == REVIEW_FIRST and any("less correct" in r for r in worse.badge.reasons)
    assert (worse.current_correct, worse.candidate_correct) == (20, 19)
    unread = _compare(_rows(30, labelled=20, changed=(27,)))
    assert unread.badge.name == REVIEW_FIRST and unread.unlabelled_changes == 1
    not_enough_but_failing = _compare(_rows(30, failed=(1,)))
    assert not_enough_but_failing.badge.name == NOT_ENOUGH_DATA
    assert any("failed" in r for r in not_enough_but_failing.badge.reasons)


def test_moves_and_the_agreement_map():
    rows = _rows(6, changed=(1, 2), failed=(4,)) + [EvaluatorRow("t9", Decision("fail"), Decision("pass"))]
    c = _compare(rows)
    assert c.moves == (("pass", "fail", 2), ("fail", "pass", 1), ("pass", FAILED_CALL, 1))
    assert c.agreement_map() == "=≠≠=!=≠"
    assert (c.agreed, c.comparable) == (3, 6)
    no_answer = _compare([EvaluatorRow("t", Decision("error"), Decision(None, "not judged"))])
    assert no_answer.agreement_map() == "·" and no_answer.comparable == 0


@pytest.fixture
def setup(tmp_path):
    goldset = golden(tmp_path)
    with Store.open(tmp_path / "runs.sqlite") as store:
        run = add_run(
            store, goldset, "cand-model", {t: scored("bug" if t in ("t1", "t2") else "billing") for t in TASKS}
        )
    return tmp_path, tmp_path / "runs.sqlite", run


def _label_all(store_path, run, truth):
    with Store.open(store_path) as store:
        for task, verdict in truth.items():
            store.add_review(ReviewRecord(run_id=run, task_id=task, verdict=verdict, reviewer="ann"))


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
            "--mode",
            "reference",
            "--models",
            str(models),
            "--store",
            str(store),
            *extra,
        ]
    )


def test_a_candidate_that_agrees_but_has_no_labels_is_not_enough_data(setup, capsys):
    tmp_path, store, run = setup
    with FakeServer(consistent_judge) as judge:
        code = _cli(tmp_path, store, run, "scorer", "judge-a", servers={"judge-a": judge.url})
        assert len(judge.requests) == 6
    out = capsys.readouterr().out
    assert code == 0 and "Agreement with the current evaluator: 6 of 6 (100.0%)" in out
    assert "Badge: Not enough data" in out and "thresholds: Looks safe needs at least 20" in out


def test_with_enough_labels_an_equally_correct_candidate_looks_safe(setup, capsys):
    tmp_path, store, run = setup
    _label_all(store, run, {t: "fail" if t in ("t1", "t2") else "pass" for t in TASKS})
    with FakeServer(consistent_judge) as judge:
        code = _cli(
            tmp_path,
            store,
            run,
            "scorer",
            "judge-a",
            "--min-labelled",
            "6",
            "--json",
            "--require-safe",
            servers={"judge-a": judge.url},
        )
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and out["badge"]["name"] == LOOKS_SAFE and out["correct"] == {"current": 6, "candidate": 6}


def test_failed_candidate_calls_stay_in_the_table_and_rule_out_looks_safe(setup, capsys):
    tmp_path, store, run = setup
    _label_all(store, run, {t: "fail" if t in ("t1", "t2") else "pass" for t in TASKS})

    def flaky(body, count):
        request = fenced(body)["REQUEST"]
        if "t4" in request:
            return http_error(400, "bad request")
        if "t5" in request:
            return text("It looks fine to me.")  # no verdict line
        return consistent_judge(body, count)

    with FakeServer(flaky) as judge:
        code = _cli(tmp_path, store, run, "scorer", "judge-a", "--min-labelled", "6", servers={"judge-a": judge.url})
    out = capsys.readouterr().out
    assert code == 1
    assert "t4" in out and "t5" in out and out.count("FAILED CALL") >= 2
    assert "Badge: Review first" in out and "2 candidate call(s) failed" in out
    with FakeServer(flaky) as judge:
        code = _cli(
            tmp_path,
            store,
            run,
            "scorer",
            "judge-a",
            "--min-labelled",
            "6",
            "--require-safe",
            servers={"judge-a": judge.url},
        )
    assert code == 3 and "gate failed: the badge is Review first" in capsys.readouterr().err


def test_the_current_may_be_a_stored_judge_and_only_the_candidate_is_called(setup, capsys):
    tmp_path, store, run = setup

    def always_pass(body, count):
        return text("Fine.\nVERDICT: PASS")

    with FakeServer(always_pass) as lenient, FakeServer(consistent_judge) as strict:
        servers = {"lenient": lenient.url, "strict": strict.url}
        assert _cli(tmp_path, store, run, "scorer", "lenient", servers=servers) == 0
        capsys.readouterr()
        asked_before = len(lenient.requests)
        code = _cli(tmp_path, store, run, "lenient", "strict", "--json", servers=servers)
        assert len(lenient.requests) == asked_before and len(strict.requests) == 6
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and out["current"].startswith("judge lenient")
    assert out["moves"] == [{"from": "pass", "to": "fail", "rows": 2}]
    assert [r["task"] for r in out["rows"] if r["changed"]] == ["t1", "t2"]
    assert out["unlabelled_changes"] == 2 and out["badge"]["name"] == NOT_ENOUGH_DATA


def test_an_unknown_current_judge_is_refused(setup, capsys):
    tmp_path, store, run = setup
    with FakeServer(consistent_judge) as judge:
        assert _cli(tmp_path, store, run, "nobody", "judge-a", servers={"judge-a": judge.url}) == 2
        assert judge.requests == []
    assert "no stored judge 'nobody'" in capsys.readouterr().err


def test_the_move_matrix_counts_agreements_and_changes():
    from compare_tui.judge.evaluator.render import move_matrix

    c = _compare(_rows(6, changed=(1, 2), failed=(4,)) + [EvaluatorRow("t9", Decision("fail"), Decision("pass"))])
    assert c.matrix == {("pass", "pass"): 3, ("pass", "fail"): 2, ("pass", FAILED_CALL): 1, ("fail", "pass"): 1}
    lines = move_matrix(c)
    assert lines[0] == "Moves (rows: current, columns: candidate):"
    assert lines[1].split() == ["pass", "fail", "failed", "call"]
    assert lines[2].split() == ["pass", "3", "2", "1"] and lines[3].split() == ["fail", "1", "0", "0"]


def test_without_enough_labels_the_candidates_rate_is_raw_and_not_verified(setup, capsys):
    tmp_path, store, run = setup
    _label_all(store, run, {t: "fail" if t in ("t1", "t2") else "pass" for t in TASKS})
    with FakeServer(consistent_judge) as judge:
        assert _cli(tmp_path, store, run, "scorer", "judge-a", servers={"judge-a": judge.url}) == 0
        out = " ".join(capsys.readouterr().out.split())
        assert "judge agrees with your labels: passes 4/4 right answers, fails 2/2 wrong ones (sensitivity" in out
        assert "cand-model: judge pass rate 67% (" in out and NOT_ENOUGH in out
        assert "(4 right and 2 wrong answers labelled; 10 of each needed)" in out and "human-calibrated" not in out
        assert _cli(tmp_path, store, run, "scorer", "judge-a", "--json", servers={"judge-a": judge.url}) == 0
    calibration = json.loads(capsys.readouterr().out)["calibration"]
    assert (calibration["right"], calibration["wrong"], calibration["labels"]) == (4, 2, 6)
    rate = calibration["judge_pass_rate"]
    assert rate["raw"] == 4 / 6 and rate["status"] == "not enough labels" and rate["corrected"] is None


def test_with_enough_labels_the_candidates_pass_rate_is_corrected(tmp_path, capsys):
    # 24 answers: 14 right (four written `Billing`, which the judge fails) and 10 wrong; all labelled.
    tasks = {f"t{i:02d}": "billing" for i in range(24)}
    answers = {t: scored("Billing" if i < 4 else "billing" if i < 14 else "bug") for i, t in enumerate(tasks)}
    with Store.open(tmp_path / "runs.sqlite") as store:
        run = add_run(store, golden(tmp_path, tasks), "cand-model", answers)
    _label_all(tmp_path / "runs.sqlite", run, {t: "pass" if i < 14 else "fail" for i, t in enumerate(tasks)})
    with FakeServer(consistent_judge) as judge:
        servers = {"judge-a": judge.url}
        assert _cli(tmp_path, tmp_path / "runs.sqlite", run, "scorer", "judge-a", servers=servers) in (0, 3)
        out = " ".join(capsys.readouterr().out.split())
        assert "passes 10/14 right answers, fails 10/10 wrong ones" in out
        assert "cand-model: judge pass rate 42% (" in out and "raw · 58% (" in out
        assert "human-calibrated, 24 labels" in out and "Method: Rogan–Gladen correction" in out
        _cli(tmp_path, tmp_path / "runs.sqlite", run, "scorer", "judge-a", "--json", servers=servers)
    rate = json.loads(capsys.readouterr().out)["calibration"]["judge_pass_rate"]
    assert rate["status"] == "human-calibrated" and rate["raw"] == 10 / 24 and rate["labels"] == 24
    assert abs(rate["corrected"] - 14 / 24) < 1e-9
    assert rate["corrected_ci95"][0] <= rate["corrected"] <= rate["corrected_ci95"][1]

"""`compare-tui grade` against scripted loopback judges: a rule-following grader (figures,
Δ vs the baseline, what the judge is shown), one that fails calls (counted, excluded, only
they asked again), unparseable grades, resuming without asking again, the structured form,
the family caveat, the audit ledger, 80 columns, and the store migration (v9)."""

from __future__ import annotations

import json
import re
import sqlite3

import pytest

from compare_tui.cli import main
from compare_tui.store import AttemptRecord, ComparisonRecord, Store
from compare_tui.store.schema import CURRENT_VERSION, MIGRATIONS
from tests.core.judge.test_judge_support import TASKS, add_run, entry, fenced, golden, scored, write_models
from tests.support.fake_openai import FakeServer, http_error, text

BAD = ("t1", "t2", "t3")
_REFERENCE = re.compile(r"<<<REFERENCE ANSWER\n(.*?)\nREFERENCE ANSWER>>>", re.DOTALL)


def reference_shown(body: dict) -> str | None:
    user = next(m["content"] for m in body["messages"] if m["role"] == "user")
    found = _REFERENCE.search(user)
    return found.group(1) if found else None


def rule_grader(body: dict, count: int):
    """5 for an answer that says `billing`, 2 otherwise (a judge that follows a rule)."""
    answer = fenced(body)["ANSWER"]
    return text("GRADE: 5\nREASON: the right label." if "billing" in answer else "GRADE: 2\nREASON: wrong label.")


@pytest.fixture
def runs(tmp_path):
    goldset = golden(tmp_path)
    with Store.open(tmp_path / "runs.sqlite") as store:
        base = add_run(store, goldset, "base-model", {t: scored("bug" if t in BAD else "billing") for t in TASKS})
        cand = add_run(store, goldset, "cand-model", {t: scored("billing") for t in TASKS})
    return tmp_path / "runs.sqlite", base, cand


def _grade(tmp_path, url, store, *args, judge="judge-model"):
    models = write_models(tmp_path / "models.toml", entry(judge, url))
    return main(["grade", *args, "--judge", judge, "--models", str(models), "--store", str(store)])


def _json(capsys):
    return json.loads(capsys.readouterr().out)


def test_grade_reports_mean_distribution_and_delta_vs_the_baseline(tmp_path, runs, capsys):
    store, base, cand = runs
    with FakeServer(rule_grader) as judge:
        code = _grade(tmp_path, judge.url, store, cand[:6], "--reference", base[:6], "--format", "json")
    out = _json(capsys)
    assert code == 0 and len(judge.requests) == 12  # the baseline is graded too, for Δ
    by_model = {r["model"]: r for r in out["runs"]}
    b, c = by_model["base-model"]["figures"], by_model["cand-model"]["figures"]
    assert b["distribution"] == {"1": 0, "2": 3, "3": 0, "4": 0, "5": 3} and b["mean"] == pytest.approx(3.5)
    assert c["distribution"]["5"] == 6 and c["mean"] == 5.0
    # Six 5s: never a zero-width "5.0–5.0"; the bounded-mean interval reaches down to what a 1 unseen could hide.
    assert c["mean_ci95"][1] == 5.0 and 3.0 < c["mean_ci95"][0] < 4.5
    low, high = b["mean_ci95"]
    assert 1.0 <= low < 3.5 < high <= 5.0
    delta = by_model["cand-model"]["delta_vs_baseline"]
    assert (delta["tasks"], delta["better"], delta["same"]) == (6, 3, 3) and delta["delta"] == pytest.approx(1.5)
    # Three tasks better, none worse: the sign test's p = 0.25, so within noise, and the net
    # share's interval (3/6 = +0.5) reaches zero, agreeing with it.
    assert delta["p_value"] == pytest.approx(0.25) and delta["conclusion"] == "within noise"
    assert delta["net_better_ci95"][0] <= 0 < 0.5 < delta["net_better_ci95"][1]
    assert by_model["base-model"]["delta_vs_baseline"] is None
    assert out["judge"]["model"] == "judge-model" and out["rubric"]["mode"] == "quality"
    assert out["judge_usage"]["calls"] == 12 and out["judge_usage"]["cost"] > 0
    row = by_model["cand-model"]["rows"][0]
    assert row["grade"] == 5 and row["rationale"] == "the right label." and row["attempt"] == 1


def test_the_comparisons_baseline_is_the_default_reference_and_graded_too(tmp_path, runs, capsys):
    store, base, cand = runs
    with Store.open(store) as s:
        comparison = s.create_comparison(ComparisonRecord(name="c", baseline="base-model"))
        s.set_comparison_runs(comparison.id, [base, cand])
    conn = sqlite3.connect(store)
    with conn:
        conn.execute("UPDATE runs SET comparison_id = ?", [comparison.id])
    with FakeServer(rule_grader) as judge:
        assert _grade(tmp_path, judge.url, store, cand, "--format", "json") == 0
    out = _json(capsys)
    assert out["baseline"] == {"run": base, "model": "base-model"} and len(judge.requests) == 12
    assert next(r for r in out["runs"] if r["run"] == cand)["delta_vs_baseline"]["delta"] == pytest.approx(1.5)


def test_report_summarises_stored_grades_and_asks_nothing(tmp_path, runs, capsys):
    store, base, cand = runs
    with Store.open(store) as s:
        comparison = s.create_comparison(ComparisonRecord(name="c", baseline="base-model"))
        s.set_comparison_runs(comparison.id, [base, cand])
    assert main(["report", comparison.id, "--store", str(store)]) in (0, 1)
    assert "Rubric grades" not in capsys.readouterr().out
    with FakeServer(rule_grader) as judge:
        _grade(tmp_path, judge.url, store, base, cand)
        capsys.readouterr()
        assert main(["report", comparison.id, "--store", str(store)]) in (0, 1)
        assert len(judge.requests) == 12
    out = capsys.readouterr().out
    summary = out[out.index("Rubric grades") :]
    assert "by judge judge-model" in summary and "baseline: base-model" in summary
    assert "+1.50" in summary and "not graded" not in summary and "Judge cost and latency" in summary


def test_report_json_and_markdown_carry_the_stored_grades(tmp_path, runs, capsys):
    store, base, cand = runs
    with Store.open(store) as s:
        comparison = s.create_comparison(ComparisonRecord(name="c", baseline="base-model"))
        s.set_comparison_runs(comparison.id, [base, cand])
    assert main(["report", comparison.id, "--store", str(store), "--format", "json"]) in (0, 1)
    assert "grades" not in json.loads(capsys.readouterr().out)  # as a published bundle's report.json
    assert main(["report", comparison.id, "--store", str(store), "--format", "md"]) in (0, 1)
    assert "Rubric grades" not in capsys.readouterr().out

    def failing_once(body, count):
        return http_error(400, "context too long") if "t2" in fenced(body)["REQUEST"] else rule_grader(body, count)

    with FakeServer(failing_once) as judge:
        _grade(tmp_path, judge.url, store, base, cand)
        capsys.readouterr()
        assert main(["report", comparison.id, "--store", str(store), "--format", "json"]) in (0, 1)
        doc = json.loads(capsys.readouterr().out)
        assert main(["report", comparison.id, "--store", str(store), "--format", "md"]) in (0, 1)
        md = capsys.readouterr().out
        assert len(judge.requests) == 12  # the report asked nothing
    (grades,) = doc["grades"]
    assert grades["judge"]["model"] == "judge-model" and grades["rubric"]["mode"] == "quality"
    assert grades["baseline"]["model"] == "base-model" and grades["judge_usage"]["calls"] == 12
    by_model = {r["model"]: r for r in grades["runs"]}
    cand_figs = by_model["cand-model"]["figures"]
    assert (cand_figs["graded"], cand_figs["failed"], cand_figs["mean"]) == (5, 1, 5.0) and "rows" not in by_model[
        "cand-model"
    ]
    assert by_model["base-model"]["figures"]["distribution"] == {"1": 0, "2": 2, "3": 0, "4": 0, "5": 3}
    delta = by_model["cand-model"]["delta_vs_baseline"]
    assert delta["tasks"] == 5 and delta["delta"] == pytest.approx(1.2) and delta["conclusion"] == "within noise"
    assert delta["net_better_ci95"][0] <= 0 <= delta["net_better"] <= delta["net_better_ci95"][1]
    assert any("left out of the mean" in c for c in grades["caveats"])
    assert "## Rubric grades by judge-model" in md and "| cand-model | 5 | 1 | 5.00 |" in md
    assert "| 0 | 2 | 0 | 0 | 3 | – |" in md and "Δ mean +1.20 over 5 tasks" in md and "Judge cost and latency" in md


def test_the_judge_sees_one_answer_alone_without_traces_and_tool_calls_canonical(tmp_path, capsys):
    goldset = golden(tmp_path, {"t1": "billing"})
    with Store.open(tmp_path / "runs.sqlite") as store:
        run = add_run(
            store,
            goldset,
            "cand-model",
            {
                "t1": AttemptRecord(
                    run_id="x",
                    task_id="t1",
                    attempt=1,
                    outcome="fail",
                    answer_text="<think>maybe bug</think>billing",
                    tool_calls=[{"id": "c1", "name": "lookup", "arguments": '{"id": 7}'}],
                )
            },
        )
    with FakeServer(rule_grader) as judge:
        assert _grade(tmp_path, judge.url, tmp_path / "runs.sqlite", run) == 0
    parts = fenced(judge.requests[0].body)
    assert set(parts) == {"REQUEST", "ANSWER"} and reference_shown(judge.requests[0].body) is None
    assert parts["ANSWER"] == 'billing\n[tool call] lookup({"id":7})'
    assert "1 to 5" in judge.requests[0].body["messages"][0]["content"]


def test_failed_and_unparseable_calls_are_counted_excluded_and_only_they_asked_again(tmp_path, runs, capsys):
    store, base, cand = runs

    def failing(body, count):
        request = fenced(body)["REQUEST"]
        if "t2" in request:
            return http_error(400, "context too long")  # not retryable: a failed call at once
        if "t3" in request:
            return text("I think it is quite good.")  # no grade line
        return rule_grader(body, count)

    with FakeServer(failing) as judge:
        code = _grade(tmp_path, judge.url, store, cand, "--format", "json")
    out = _json(capsys)
    figures = out["runs"][0]["figures"]
    assert code == 1 and (figures["graded"], figures["failed"]) == (4, 2) and figures["mean"] == 5.0
    rows = {r["task"]: r for r in out["runs"][0]["rows"]}
    assert rows["t2"]["grade"] is None and "HTTP 400" in rows["t2"]["reason"]
    assert rows["t3"]["error_class"] == "unparseable" and "no grade line" in rows["t3"]["reason"]
    assert any("left out of the mean" in c for c in out["caveats"])
    with FakeServer(rule_grader) as judge:
        code = _grade(tmp_path, judge.url, store, cand, "--format", "json")
    assert code == 0 and len(judge.requests) == 2  # only t2 and t3
    assert _json(capsys)["runs"][0]["figures"]["graded"] == 6


def test_grading_again_asks_nothing(tmp_path, runs, capsys):
    store, base, cand = runs
    with FakeServer(rule_grader) as judge:
        _grade(tmp_path, judge.url, store, base, cand)
        first = len(judge.requests)
        _grade(tmp_path, judge.url, store, base, cand)
    assert first == len(judge.requests) == 12
    ids = sqlite3.connect(store).execute("SELECT id FROM judgements ORDER BY id").fetchall()
    assert len(ids) == 12 and all(i[0].endswith(":single:a1") for i in ids)


def test_similarity_grades_against_the_reference_run_and_skips_it(tmp_path, runs, capsys):
    store, base, cand = runs
    with FakeServer(rule_grader) as judge:
        assert (
            _grade(
                tmp_path,
                judge.url,
                store,
                base,
                cand,
                "--rubric",
                "similarity",
                "--reference",
                base,
                "--format",
                "json",
            )
            == 0
        )
    out = _json(capsys)
    assert len(judge.requests) == 6 and [r["model"] for r in out["runs"]] == ["cand-model"]
    assert sorted(reference_shown(r.body) for r in judge.requests) == ["billing"] * 3 + ["bug"] * 3
    assert out["reference"]["run"] == base and any("closeness to run" in c for c in out["caveats"])


def test_similarity_without_a_reference_run_grades_against_the_expected_outcome(tmp_path, runs, capsys):
    store, base, cand = runs
    with FakeServer(rule_grader) as judge:
        assert _grade(tmp_path, judge.url, store, cand, "--rubric", "similarity") == 0
    assert {reference_shown(r.body) for r in judge.requests} == {"billing"}
    assert "reference: expected outcome" in capsys.readouterr().out


def test_a_rubric_file_is_sent_as_written_and_starts_its_own_grading(tmp_path, runs, capsys):
    store, base, cand = runs
    rubric = tmp_path / "rubric.txt"
    rubric.write_text("Grade 5 only when the label is one word in lower case.\n", encoding="utf-8")
    with FakeServer(rule_grader) as judge:
        assert _grade(tmp_path, judge.url, store, cand, "--format", "json") == 0
        first = _json(capsys)
        assert _grade(tmp_path, judge.url, store, cand, "--rubric", str(rubric), "--format", "json") == 0
    out = _json(capsys)
    user = next(m["content"] for m in judge.requests[-1].body["messages"] if m["role"] == "user")
    assert "Grade 5 only when the label is one word in lower case." in user and len(judge.requests) == 12
    assert out["rubric"]["mode"] == "quality" and out["rubric"]["digest"] != first["rubric"]["digest"]


def test_structured_grades_ask_for_a_json_schema_and_are_read(tmp_path, runs, capsys):
    store, base, cand = runs
    with FakeServer(lambda body, count: text('{"grade": 4, "reason": "close"}')) as judge:
        assert _grade(tmp_path, judge.url, store, cand, "--structured", "--format", "json") == 0
    schema = judge.requests[0].body["response_format"]["json_schema"]["schema"]
    assert schema["properties"]["grade"]["enum"] == [1, 2, 3, 4, 5]
    out = _json(capsys)
    assert out["runs"][0]["figures"]["distribution"]["4"] == 6 and out["rubric"]["reply_form"] == "structured"


def test_text_names_the_judge_flags_its_family_and_fits_80_columns(tmp_path, runs, capsys):
    store, base, cand = runs
    with FakeServer(rule_grader) as judge:
        assert _grade(tmp_path, judge.url, store, cand, "--reference", base, "--rationales", judge="cand-judge") == 0
    out = capsys.readouterr().out
    words = " ".join(out.split())
    assert "by judge cand-judge" in words and "same model family as the graded run (cand-model" in words
    assert "+1.50" in out and "Rationales:" in out
    assert [line for line in out.splitlines() if len(line) > 80] == []


def test_a_judge_that_gives_every_answer_the_same_grade_gets_a_caveat(tmp_path, runs, capsys):
    store, base, cand = runs
    with FakeServer(lambda body, count: text("5")) as judge:  # a bare grade, as small judges answer
        assert _grade(tmp_path, judge.url, store, base, cand, "--format", "json") == 0
    out = _json(capsys)
    assert [r["figures"]["distribution"]["5"] for r in out["runs"]] == [6, 6]
    assert any("same grade (5): it tells nothing apart" in c for c in out["caveats"])
    with FakeServer(rule_grader) as judge:
        _grade(tmp_path, judge.url, tmp_path / "other.sqlite", "x")  # an unknown run: refused, nothing sent
    assert judge.requests == []


def test_every_judge_request_is_an_audit_row_of_no_run(tmp_path, runs, capsys):
    store, base, cand = runs
    with FakeServer(rule_grader) as judge:
        _grade(tmp_path, judge.url, store, cand)
    conn = sqlite3.connect(store)
    assert conn.execute("SELECT COUNT(*) FROM audit WHERE run_id IS NULL").fetchone()[0] == 6
    assert conn.execute("SELECT COUNT(*) FROM audit WHERE run_id IS NOT NULL").fetchone()[0] == 0


def test_bad_input_exits_2_and_sends_nothing(tmp_path, runs, capsys):
    store, base, cand = runs
    with FakeServer(rule_grader) as judge:
        assert _grade(tmp_path, judge.url, store, cand, "--rubric", "no-such-file.txt") == 2
        assert _grade(tmp_path, judge.url, store, base, "--rubric", "similarity", "--reference", base) == 2
        assert (
            main(
                ["grade", cand, "--judge", "missing", "--models", str(tmp_path / "models.toml"), "--store", str(store)]
            )
            == 2
        )
    assert judge.requests == []
    err = capsys.readouterr().err
    assert "neither `quality`, `similarity` nor an existing rubric file" in err and "is the reference itself" in err


def test_a_v8_store_with_judgements_gains_grades(tmp_path):
    path = tmp_path / "old.sqlite"
    conn = sqlite3.connect(path, isolation_level=None)
    for migration in MIGRATIONS[:8]:
        migration(conn)
    conn.execute("INSERT INTO meta VALUES ('app', 'compare-tui'), ('schema_version', '8')")
    conn.execute(
        "INSERT INTO runs (id, status, created_at, goldset_id, model_name) VALUES "
        "('r1', 'completed', '2026-12-01T00:00:00+00:00', 'w', 'm')"
    )
    conn.execute(
        "INSERT INTO judgings (id, kind, run_id, judge_model, rubric_digest, mode, created_at) VALUES "
        "('j1', 'grade', 'r1', 'judge', 'sha256:x', 'reference', '2026-12-01T00:00:00+00:00')"
    )
    conn.execute(
        "INSERT INTO judgements (id, judging_id, task_id, ordering, verdict, preferred, judged_at) VALUES "
        "('j1:t1:single', 'j1', 't1', 'single', 'pass', 'pass', '2026-12-01T00:00:00+00:00')"
    )
    conn.close()
    with Store.open(path) as store:
        assert store.schema_version == CURRENT_VERSION >= 9
        (old,) = store.judgements_for("j1")
        assert (old.id, old.verdict, old.grade, old.attempt) == ("j1:t1:single", "pass", None, None)

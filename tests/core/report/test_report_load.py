"""Loading a report from the run store, the `compare-tui report` command, and import hygiene."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from compare_tui.cli import main
from compare_tui.goldset import load_golden_set
from compare_tui.report import AttemptFacts, ReportNotFoundError, build_report, load_report_inputs
from compare_tui.report.load import attempt_facts
from compare_tui.store import AttemptRecord, ComparisonRecord, ReviewRecord, Store
from tests.core.report.test_report import make_run

REPO = Path(__file__).resolve().parents[3]
SAMPLE = REPO / "sample_sets" / "support-triage"


@pytest.fixture
def store(tmp_path: Path):
    with Store.open(tmp_path / "runs.sqlite") as opened:
        yield opened


def record(store: Store, run_id: str, model: str, outcomes: str, **run_fields) -> None:
    store.create_run(make_run(run_id, model, **run_fields))
    names = {"p": "pass", "f": "fail", "r": "review", "e": "error"}
    store.record_attempts(
        AttemptRecord(
            run_id=run_id,
            task_id=f"t{i:02d}",
            attempt=1,
            outcome=names[c],
            ttft_ms=10.0 + i,
            e2e_ms=50.0 + i,
            prompt_tokens=None if c == "e" else 20,
            completion_tokens=None if c == "e" else 4,
            usage_missing=c == "e",
            error_class="stream_error" if c == "e" else None,
            score_detail={"f": "expected 'billing', got 'bug'", "p": "exact match"}.get(c, ""),
            error="the server reported an error inside the stream" if c == "e" else None,
            isolation={"network_namespace": False, "network_namespace_note": "no userns"} if i == 0 else None,
        )
        for i, c in enumerate(outcomes)
    )


def compare(store: Store, comparison_id: str, *run_ids: str) -> None:
    store.create_comparison(ComparisonRecord(id=comparison_id, name="triage bake-off", run_ids=list(run_ids)))


# ------------------------------------------------------------------ loading


def test_the_narrow_attempt_read_agrees_with_the_stores_records(store):
    record(store, "run-a", "model-a", "pfre")
    expected = tuple(AttemptFacts.from_record(a) for a in store.attempts_for_run("run-a"))
    assert attempt_facts(store, "run-a") == expected
    assert expected[0].isolation == {"network_namespace": False, "network_namespace_note": "no userns"}
    assert expected[3].usage_missing is True
    assert (expected[1].detail, expected[3].detail) == (
        "expected 'billing', got 'bug'",
        "the server reported an error inside the stream",
    )


def test_load_a_comparison_by_id_and_by_prefix(store):
    record(store, "run-a", "model-a", "ppppp")
    record(store, "run-b", "model-b", "ppfff")
    compare(store, "cmp-12345", "run-b", "run-a")
    for ref in ("cmp-12345", "cmp-1", " cmp-12345 "):
        loaded = load_report_inputs(store, ref)
        assert loaded.comparison_id == "cmp-12345" and loaded.comparison_name == "triage bake-off"
        assert [r.run.id for r in loaded.runs] == ["run-b", "run-a"]  # the comparison's order


def test_load_a_single_run_by_prefix(store):
    record(store, "run-abcdef", "model-a", "pp")
    loaded = load_report_inputs(store, "run-abc")
    assert loaded.comparison_id is None and [r.run.id for r in loaded.runs] == ["run-abcdef"]
    assert len(loaded.runs[0].attempts) == 2


def test_latest_is_the_newest_comparison_else_the_newest_run(store):
    with pytest.raises(ReportNotFoundError, match="no runs yet"):
        load_report_inputs(store, "latest")
    record(store, "run-a", "model-a", "p", created_at="2026-01-01T00:00:00Z")
    record(store, "run-b", "model-b", "p", created_at="2026-01-02T00:00:00Z")
    assert [r.run.id for r in load_report_inputs(store, "latest").runs] == ["run-b"]
    store.create_comparison(ComparisonRecord(id="old", created_at="2026-01-01T00:00:00Z", run_ids=["run-a"]))
    store.create_comparison(ComparisonRecord(id="new", created_at="2026-01-03T00:00:00Z", run_ids=["run-a", "run-b"]))
    assert load_report_inputs(store, "latest").comparison_id == "new"


def test_unknown_and_ambiguous_references_say_what_to_do(store):
    record(store, "abc1", "model-a", "p")
    record(store, "abc2", "model-b", "p")
    with pytest.raises(ReportNotFoundError, match="runs list"):
        load_report_inputs(store, "zzz")
    with pytest.raises(ReportNotFoundError, match="more than one"):
        load_report_inputs(store, "abc")
    compare(store, "abc1-cmp", "abc1")
    # An exact run id wins over a comparison whose id merely starts with it.
    assert [r.run.id for r in load_report_inputs(store, "abc1").runs] == ["abc1"]


def test_latest_says_a_comparison_just_started_is_starting(store):
    """`report latest` right after a run starts: the comparison is recorded, its runs not yet."""
    record(store, "run-a", "model-a", "p", created_at="2026-01-01T00:00:00Z")
    store.create_comparison(ComparisonRecord(id="done-1", created_at="2026-01-01T00:00:00Z", run_ids=["run-a"]))
    store.create_comparison(ComparisonRecord(id="b91ee990248011d1", name="tickets", created_at="2026-01-03T10:20:30Z"))
    with pytest.raises(ReportNotFoundError) as refused:
        load_report_inputs(store, "latest")
    message = str(refused.value)
    assert message.startswith("the latest comparison, b91ee990248011d1 (tickets), is starting")
    assert "2026-01-03 10:20:30 UTC" in message and "report again in a moment" in message


def test_a_comparison_without_runs_is_refused(store):
    store.create_comparison(ComparisonRecord(id="empty"))
    with pytest.raises(ReportNotFoundError, match="has no runs"):
        load_report_inputs(store, "empty")


def test_the_latest_review_per_task_becomes_the_verdict(store):
    record(store, "run-a", "model-a", "pr")
    store.add_review(ReviewRecord(run_id="run-a", task_id="t01", verdict="fail", at="2026-01-01T00:00:00Z"))
    store.add_review(ReviewRecord(run_id="run-a", task_id="t01", verdict="pass", at="2026-01-02T00:00:00Z"))
    assert load_report_inputs(store, "run-a").runs[0].verdicts == {"t01": "pass"}


def test_the_golden_set_gives_scorer_kinds_task_order_and_caveats(store):
    goldset = load_golden_set(SAMPLE)
    record(store, "run-a", "model-a", "pp", goldset_path=str(SAMPLE), goldset_digest=goldset.digest)
    loaded = load_report_inputs(store, "run-a")
    assert loaded.task_kinds["reply-01"] == "human" and loaded.task_kinds["refund-01"] == "exact"
    assert loaded.task_ids == tuple(t.id for t in goldset.tasks)
    assert loaded.manifest_caveats == tuple(goldset.manifest.caveats)
    assert loaded.notes == ()
    report = build_report(loaded)
    assert report.task_ids[: len(goldset.tasks)] == loaded.task_ids
    assert report.models[0].counts.missing == len(goldset.tasks)  # recorded t00/t01 are not in the set


def test_a_changed_or_unreadable_set_is_a_note_not_a_failure(store, tmp_path):
    record(store, "run-a", "model-a", "p", goldset_path=str(SAMPLE), goldset_digest="sha256:old")
    record(store, "run-b", "model-b", "p", goldset_path=str(tmp_path / "gone"))
    record(store, "run-c", "model-c", "p", goldset_path="")
    compare(store, "cmp", "run-a", "run-b")
    notes = load_report_inputs(store, "cmp").notes
    assert any("has changed since run run-a" in n for n in notes)
    assert any("could not be read" in n and "gone" in n for n in notes)
    assert "did not record where their golden set is" in load_report_inputs(store, "run-c").notes[0]


# ------------------------------------------------------------------ the command


def run_cli(store: Store, *args: str) -> int:
    return main(["report", *args, "--store", str(store.path)])


@pytest.fixture
def filled(store):
    record(store, "run-a", "model-a", "pppppppppp")
    record(store, "run-b", "model-b", "ppfffffffe")
    compare(store, "cmp-1", "run-a", "run-b")
    return store


def test_command_prints_json_that_matches_the_report(filled, capsys):
    assert run_cli(filled, "cmp-1", "--format", "json") == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["schema"] == "compare-tui/report" and doc["schema_version"] == 3
    assert doc["recommendation"]["winner"] == "model-a" and doc["recommendation"]["confidence"] == "high"
    assert [m["pass_rate"]["passed"] for m in doc["models"]] == [10, 2]


def test_command_writes_each_format_to_a_file(filled, tmp_path, capsys):
    for fmt, name in (("md", "r.md"), ("junit", "r.xml"), ("text", "r.txt"), ("json", "r.json")):
        out = tmp_path / name
        assert run_cli(filled, "latest", "--format", fmt, "--out", str(out)) == 0
        assert out.read_text(encoding="utf-8")
    assert capsys.readouterr().out == ""
    junit = ET.parse(tmp_path / "r.xml").getroot()
    assert junit.get("failures") == "7"
    failure = junit.find("testsuite[@name='model-b']/testcase[@name='t02']/failure")
    assert failure.get("message") == "expected 'billing', got 'bug'"
    error = junit.find("testsuite[@name='model-b']/testcase[@name='t09']/error")
    assert error.get("message") == "the server reported an error inside the stream"
    text = (tmp_path / "r.txt").read_text(encoding="utf-8")
    escapes = [text[max(0, i - 40) : i + 10] for i in range(len(text)) if text.startswith("\x1b[", i)]
    assert not escapes
    assert "✓" in text and "100.0% (10/10)" in text


def test_command_gate_failure_exits_3_with_reasons_and_still_prints(filled, capsys):
    code = run_cli(filled, "cmp-1", "--format", "md", "--fail-under", "100%", "--require-winner", "model-b")
    captured = capsys.readouterr()
    assert code == 3
    assert "# triage bake-off" in captured.out
    assert "gate failed: the recommended model is model-a, not model-b" in captured.err
    assert run_cli(filled, "cmp-1", "--format", "json", "--fail-under", "1", "--require-confidence", "high") == 0


@pytest.mark.parametrize(
    "args", [("nope",), ("cmp-1", "--fail-under", "lots"), ("cmp-1", "--out", "/no/such/dir/r.md")]
)
def test_command_bad_input_exits_2_with_one_line(filled, capsys, args):
    assert run_cli(filled, *args) == 2
    err = capsys.readouterr().err
    assert err.startswith("compare-tui: ") and "Traceback" not in err


def test_command_help_documents_the_exit_codes(capsys):
    with pytest.raises(SystemExit):
        main(["report", "--help"])
    out = capsys.readouterr().out
    assert "exit codes:" in out and "3  a gate failed" in out and "2  bad input" in out

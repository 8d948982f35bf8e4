"""What a new user hit on the command line (issue 38): messages that pointed the wrong way or
said a thing twice. Each test reproduces the situation of the report first."""

from __future__ import annotations

from pathlib import Path

import pytest

from compare_tui.cli import main
from compare_tui.engine.prepare import RunRefusedError, checked_model
from compare_tui.engine.reachability import refuse_unreachable
from compare_tui.judge.call import JudgeReply
from compare_tui.judge.runner import JudgeJob, to_judgement
from compare_tui.store import Store
from compare_tui.store.judgements import JudgingRecord
from tests.support.builders import hosted_entry
from tests.test_report_load import compare, record

DEAD = "http://127.0.0.1:9/v1"


def test_a_users_own_local_server_that_is_down_is_not_sent_to_the_bundled_servers():
    own = hosted_entry(DEAD, name="my-llama").model_copy(update={"kind": "local"})
    with pytest.raises(RunRefusedError) as refused:
        refuse_unreachable([own], prober=lambda url: "unreachable: Connection refused")
    reason = refused.value.reason
    assert "start the model's server" in reason and "start the bundled servers" not in reason


def test_canary_on_a_workload_without_a_baseline_says_there_is_none(tmp_path: Path, capsys):
    with Store.open(tmp_path / "runs.sqlite") as store:
        record(store, "run-a", "model-a", "pppppppppp")
        record(store, "run-b", "model-b", "ppfffffffe")
        compare(store, "cmp-1", "run-a", "run-b")
    code = main(["promote", "cmp-1", "--model", "model-a", "--initial", "--canary", "10", "--store", str(store.path)])
    err = capsys.readouterr().err
    assert code != 0 and "has no baseline yet" in err and "must be one of this comparison's models" not in err


def _scale_judging(reply_form: str) -> JudgingRecord:
    return JudgingRecord(
        kind="scale",
        run_id="run-a",
        judge_model="judge",
        rubric_digest="sha256:" + "1" * 64,
        mode="quality",
        rubric="Grade it.",
        judge_entry={"name": "judge", "model": "judge"},
        reply_form=reply_form,
    )


def test_a_structured_grade_cut_at_max_tokens_says_so_not_no_grade_line():
    job = JudgeJob("t01", "single", [], attempt=1)
    cut = JudgeReply('{"reason": "The answer names the right label but', completion_tokens=96, finish_reason="length")
    problem = to_judgement(_scale_judging("structured"), job, cut).error
    assert problem is not None and "max_tokens" in problem and "--max-tokens" in problem
    assert "GRADE: 1-5" not in problem
    # Not cut, but not the JSON asked for: said in the structured form's terms.
    prose = JudgeReply("I would say it is fine.", completion_tokens=8, finish_reason="stop")
    problem = to_judgement(_scale_judging("structured"), job, prose).error
    assert problem is not None and "JSON object with a `grade`" in problem and "GRADE: 1-5" not in problem
    # The unstructured form keeps its own words.
    assert "GRADE: 1-5" in (to_judgement(_scale_judging("text"), job, prose).error or "")


def test_a_provider_key_refusal_names_the_model_once(monkeypatch):
    entry = hosted_entry(DEAD, name="gpt-x", key_env="MY_KEY")
    monkeypatch.setenv("MY_KEY", "sk-ant-api03-" + "a" * 40)
    with pytest.raises(RunRefusedError) as refused:
        checked_model(entry)
    assert str(refused.value).count("gpt-x") == 1


def test_promote_never_offers_the_workloads_baseline_to_replace_itself(tmp_path: Path, capsys):
    # The comparison judges against model-a, while the workload's baseline is already model-d.
    with Store.open(tmp_path / "runs.sqlite") as store:
        record(store, "run-a", "model-a", "p" * 100)
        record(store, "run-d", "model-d", "p" * 100)
        compare(store, "cmp-9", "run-a", "run-d")
    path = str(tmp_path / "runs.sqlite")
    assert main(["promote", "cmp-9", "--model", "model-a", "--initial", "--store", path]) == 0
    assert main(["promote", "cmp-9", "--model", "model-d", "--store", path]) == 0
    with Store.open(path) as store:
        store.set_comparison_baseline("cmp-9", "model-a")
    capsys.readouterr()
    assert main(["promote", "cmp-9", "--model", "model-d", "--store", path]) != 0
    captured = capsys.readouterr()
    assert "model-d replaces model-d" not in captured.out and "already the workload's baseline" in captured.err
    with Store.open(path) as store:
        assert len(store.baseline_history("support-triage")) == 2

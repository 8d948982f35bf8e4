"""What a new user hit on the command line (issue 38): messages that pointed the wrong way or
said a thing twice. Each test reproduces the situation of the report first."""

from __future__ import annotations

from pathlib import Path

import pytest

from compare_tui.cli import main
from compare_tui.engine.prepare import RunRefusedError, checked_model
from compare_tui.engine.reachability import Reachability, refuse_unreachable
from compare_tui.judge.run.call import JudgeReply
from compare_tui.judge.run.runner import JudgeJob, to_judgement
from compare_tui.store import Store
from compare_tui.store.judgements import JudgingRecord
from compare_tui.vocabulary import Reach
from tests.core.report.test_report_load import compare, record
from tests.support.builders import hosted_entry

DEAD = "http://127.0.0.1:9/v1"


def test_a_users_own_local_server_that_is_down_is_not_sent_to_the_bundled_servers():
    own = hosted_entry(DEAD, name="my-llama").model_copy(update={"kind": "local"})
    with pytest.raises(RunRefusedError) as refused:
        refuse_unreachable([own], prober=lambda url: Reachability(Reach.UNREACHABLE, reason="Connection refused"))
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


# ------------------------------------------------------------------ 80 columns: nothing cut where there is room

MODELS = "".join(
    f"""
[[model]]
name = "{name}"
kind = "hosted"
endpoint = "http://127.0.0.1:{port}/v1"
model = "{name}"
revision = "2026-12-01"
weights_digest = "sha256:{"0" * 64}"
[model.cost]
basis = "hardware"
usd_per_hour = 0.1
"""
    for name, port in (("smollm2-135m", 28181), ("gemma3-270m", 28182), ("qwen2.5-coder-0.5b", 28183))
)


def _at_80(monkeypatch) -> None:
    monkeypatch.setenv("COLUMNS", "80")


def test_models_list_shows_each_endpoint_whole_at_80_columns(tmp_path: Path, capsys, monkeypatch):
    # All three showed `http://127.0.0.1:2818…`: the port, all that differs, was cut.
    _at_80(monkeypatch)
    (tmp_path / "models.toml").write_text(MODELS)
    assert main(["models", "list", "--models", str(tmp_path / "models.toml")]) == 0
    out = capsys.readouterr().out
    for port in (28181, 28182, 28183):
        assert f"http://127.0.0.1:{port}/v1" in out
    assert all(len(line) <= 80 for line in out.splitlines())


def test_runs_list_keeps_the_date_and_the_tallies_whole_at_80_columns(tmp_path: Path, capsys, monkeypatch):
    _at_80(monkeypatch)
    with Store.open(tmp_path / "runs.sqlite") as store:
        record(store, "c4923fb2f4c1f990", "qwen2.5-coder-0.5b-instruct-with-a-long-name", "ppfpppfppe")
        created = store.get_run("c4923fb2f4c1f990").created_at[:16].replace("T", " ")
    assert main(["runs", "list", "--store", str(tmp_path / "runs.sqlite")]) == 0
    out = capsys.readouterr().out
    assert created in out and "c4923fb2f4c1f990" in out and "of 10" in out


def test_runs_list_of_a_set_without_runs_says_so_not_no_runs_yet(tmp_path: Path, capsys):
    store_path = str(tmp_path / "runs.sqlite")
    Store.open(tmp_path / "runs.sqlite").close()
    assert main(["runs", "list", "--store", store_path, "--set", "tickets"]) == 0
    assert capsys.readouterr().out.startswith("no runs yet")  # an empty store: no runs at all
    with Store.open(tmp_path / "runs.sqlite") as store:
        record(store, "c4923fb2f4c1f990", "smollm2-135m", "pp")
    assert main(["runs", "list", "--store", store_path, "--set", "tickets"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("no runs of set tickets in the store; it has other runs") and "no runs yet" not in out
    assert main(["runs", "list", "--store", store_path, "--model", "gemma", "--status", "completed"]) == 0
    assert capsys.readouterr().out.startswith("no runs of model gemma with status completed in the store")


def test_sets_show_cuts_expected_json_with_an_ellipsis_and_keeps_ids_whole(capsys, monkeypatch):
    _at_80(monkeypatch)
    assert main(["sets", "show", "sample_sets/order-extraction"]) == 0
    lines = capsys.readouterr().out.splitlines()
    row = next(line for line in lines if line.startswith("address-01 "))
    assert row.rstrip().endswith("…") and '"city": "Hamburg"' in row
    assert any(line.startswith("convert-km-mi-01 ") and " command " in line for line in lines)
    assert main(["sets", "show", "sample_sets/calendar-assistant"]) == 0
    assert "[tool call] " in capsys.readouterr().out  # not eaten as markup


def test_reproduce_fits_80_columns():
    from compare_tui.diff import render_text, reproduce_check
    from tests.core.diff.test_reproduce import DEFAULTS, SAME, inputs

    check = reproduce_check(inputs("a", SAME), inputs("b", {**SAME, "t2": "fail"}, e2e=180.0), DEFAULTS)
    lines = render_text(check).splitlines()
    assert all(len(line) <= 80 for line in lines[1:]), [line for line in lines if len(line) > 80]
    assert any(line.startswith("    tolerance |Δ| ≤") for line in lines)


def test_toolcall_show_fits_80_columns(tmp_path: Path, capsys):
    from compare_tui.toolcall.results.render import render_text
    from compare_tui.toolcall.results.storage import ToolcallStore
    from tests.core.toolcall.test_toolcall_cli import PARIS, toolcall
    from tests.support.fake_openai import FakeServer

    with FakeServer(default=PARIS) as good:
        toolcall(tmp_path, good.url, "--scenario", "S0[1-3]", capsys=capsys, name="alpha")
    with Store.open(tmp_path / "runs.sqlite") as store:
        runs = ToolcallStore(store).latest(1)
        shown = render_text(runs, width=80)
    grid_start = shown.splitlines().index("") + 1
    header = shown.splitlines()[:grid_start]
    assert all(len(line) <= 80 for line in header) and any("run " in line for line in header)


# ------------------------------------------------------------------ a resumed run says so


async def test_a_resumed_run_carries_a_caveat_that_it_was_interrupted_and_resumed(tmp_path: Path):
    from compare_tui.engine import RunOverrides, prepare_resume, prepare_run
    from compare_tui.report import build_report, load_report_inputs
    from tests.core.engine.test_not_done import _execute
    from tests.support.builders import load, write_set
    from tests.support.fake_openai import FakeServer, fail_then, http_error, text

    script = {"a": text("ok"), "flaky": fail_then(4, http_error(503), text("ok"))}
    goldset = load(write_set(tmp_path / "set", dict.fromkeys(script, "ok")))
    with Store.open(tmp_path / "runs.sqlite") as store, FakeServer(script) as server:
        entry = hosted_entry(server.url, cost={"basis": "hardware", "usd_per_hour": 1.0})
        prepared = prepare_run(store, goldset, entry, RunOverrides(concurrency=1), environ={})
        await _execute(store, prepared)
        codes = [c.code for c in build_report(load_report_inputs(store, prepared.run.id)).caveats]
        assert "resumed" not in codes  # one session so far
        await _execute(store, prepare_resume(store, prepared.run.id, goldset, entry, environ={}))
        [caveat] = [c for c in build_report(load_report_inputs(store, prepared.run.id)).caveats if c.code == "resumed"]
    assert "interrupted and resumed (1 time" in caveat.text and "the pauses included" in caveat.text


# ------------------------------------------------------------------ caveats said once for several models


def test_a_caveat_that_says_the_same_of_two_models_is_one_line_naming_both(tmp_path: Path):
    # The text report for two models ran ~130 lines, each such caveat once per model.
    from compare_tui.report import build_report, load_report_inputs

    with Store.open(tmp_path / "runs.sqlite") as store:
        record(store, "run-a", "smollm2-135m", "pppppppppp")
        record(store, "run-b", "gemma3-270m", "ppppppppfp")
        compare(store, "cmp-1", "run-a", "run-b")
        caveats = build_report(load_report_inputs(store, "cmp-1")).caveats
    hardware = [c.text for c in caveats if c.code == "hardware"]
    assert len(hardware) == 1 and "smollm2-135m and gemma3-270m were served on this machine" in hardware[0]
    gpu = [c.text for c in caveats if c.code == "gpu"]
    assert len(gpu) == 1 and "GPU memory of smollm2-135m and gemma3-270m was not measured" in gpu[0]


# ------------------------------------------------------------------ the published page reads as a page


def test_the_published_environment_shows_readable_values_not_serialisations():
    # Settings came as JSON with `\u226496` and `0.00040486111111111116`; `serving: extra` as a
    # Python dict repr; `quantisation None`; the whole /props JSON with the chat template escaped.
    from compare_tui.publish.comparison_page import readable

    settings = readable({"estimate": "≤96 tokens", "estimate_usd": 0.00040486111111111116, "attempts": 1})
    assert settings == "attempts = 1; estimate = ≤96 tokens; estimate_usd = 0.0004048611"
    assert readable({"server_ctx": "4096", "threads": "2"}) == "server_ctx = 4096; threads = 2"
    assert readable(None) == "not reported"
    template = "{% for message in messages %}" * 20
    shown = readable({"build_info": "b11434", "chat_template": template})
    assert shown.startswith("build_info = b11434; chat_template = sha256:") and "{%" not in shown

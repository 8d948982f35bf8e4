"""The prompt cache as a measured condition (issue 46, item 5): what each request carries per
stack, what each answer says it reused, the run's condition stored and read back, and the
report's caveat when compared runs ran under different ones."""

from __future__ import annotations

import json
import sqlite3

from compare_tui.endpoint.account import stack_of
from compare_tui.engine.request import chat_body, hold_prompt_cache
from compare_tui.engine.settings import RunOverrides, RunSettings, resolve_settings
from compare_tui.engine.stream import StreamAccumulator
from compare_tui.experiment.cells import normalised_settings
from compare_tui.experiment.config import ExperimentConfig, arm_label, parse_arm_spec
from compare_tui.goldset import load_golden_set
from compare_tui.report import build_report, load_report_inputs, render_json, render_md
from compare_tui.report.inputs import AttemptFacts
from compare_tui.report.prompt_cache import cache_caveats, cache_condition
from compare_tui.store import Store
from compare_tui.store.schema import CURRENT_VERSION, MIGRATIONS
from compare_tui.vocabulary import Outcome, PromptCache
from tests.support.stack_comparison import COMPARISON, RUNS, build_stack_store
from tests.tui.test_tui_data import SET_NAME, write_mini_set


def test_cold_is_cache_prompt_false_on_llama_cpp_a_fresh_salt_per_request_on_vllm_and_not_held_elsewhere(tmp_path):
    task = load_golden_set(write_mini_set(tmp_path / SET_NAME)).tasks[0]
    cold = RunSettings(prompt_cache=PromptCache.COLD)
    llama = hold_prompt_cache(PromptCache.COLD, "llama.cpp llama-server")
    assert chat_body(task, "m", cold, llama)["cache_prompt"] is False and llama.held
    vllm = hold_prompt_cache(PromptCache.COLD, "vLLM")
    salts = {chat_body(task, "m", cold, vllm)["cache_salt"] for _ in range(3)}
    assert len(salts) == 3 and all(len(s) == 32 for s in salts)  # no two requests share a prefix
    hosted = hold_prompt_cache(PromptCache.COLD, None)
    body = chat_body(task, "m", cold, hosted)
    assert "cache_prompt" not in body and "cache_salt" not in body and not hosted.held
    assert hosted.as_dict()["how"].startswith("not held: this server offers no per-request switch")
    server = hold_prompt_cache(PromptCache.SERVER, "vLLM")
    assert set(chat_body(task, "m", RunSettings(), server)) == set(chat_body(task, "m", RunSettings()))
    assert stack_of([{"fingerprint": {"stack": "vLLM"}}]) == "vLLM" and stack_of([]) is None


def test_an_answer_says_what_it_reused_in_either_stacks_words():
    llama = StreamAccumulator(sent_ns=0)
    llama.feed({"choices": [], "timings": {"cache_n": 92, "prompt_n": 1, "prompt_ms": 12.0}}, 1)
    assert llama.cached_tokens() == 92
    vllm = StreamAccumulator(sent_ns=0)
    vllm.feed({"choices": [], "usage": {"prompt_tokens": 90, "prompt_tokens_details": {"cached_tokens": 64}}}, 1)
    assert vllm.cached_tokens() == 64
    silent = StreamAccumulator(sent_ns=0)
    silent.feed({"choices": [], "usage": {"prompt_tokens": 90, "prompt_tokens_details": None}}, 1)
    assert silent.cached_tokens() is None


def test_the_setting_is_stored_and_runs_and_experiments_from_before_it_read_as_the_servers_own(tmp_path):
    goldset = load_golden_set(write_mini_set(tmp_path / SET_NAME))
    cold = resolve_settings(goldset, RunOverrides(prompt_cache=PromptCache.COLD))
    assert cold.as_dict()["prompt_cache"] == "cold" and RunSettings.from_dict(cold.as_dict()) == cold
    assert cold.overrides().prompt_cache is PromptCache.COLD
    old = {"attempts": 1, "temperature": 0.0, "max_tokens": 16, "concurrency": 4, "timeout_s": 120.0}
    assert RunSettings.from_dict(old).prompt_cache is PromptCache.SERVER
    assert normalised_settings(old)["prompt_cache"] == "server"  # no confound between old and new runs
    assert parse_arm_spec("qwen prompt_cache=cold") == ("qwen", {"prompt_cache": "cold"})
    assert (
        arm_label("qwen", {"prompt_cache": "cold", "temperature": 0.5}) == "qwen [prompt_cache=cold, temperature=0.5]"
    )
    arm = {"label": "a", "model": {"name": "a"}}
    config = ExperimentConfig.model_validate(
        {
            "goldset": {"workload_id": "w", "name": "n", "version": "1", "digest": "d", "path": "p"},
            "settings": old,
            "repeats": 1,
            "arms": [arm, {"label": "b", "model": {"name": "b"}}],
        }
    )
    assert config.settings["prompt_cache"] == "server"


def test_a_v13_store_gains_the_cached_tokens_column_and_attempts_keep_theirs(tmp_path):
    store, _ = build_stack_store(tmp_path)
    assert store.schema_version == CURRENT_VERSION >= 14
    store.close()
    path = tmp_path / "runs.sqlite"
    with sqlite3.connect(path) as conn:  # the attempts table back to v13 as it was: no column
        conn.execute("ALTER TABLE attempts DROP COLUMN cached_tokens")
        MIGRATIONS[13](conn)  # v13 -> v14 alone (the later ones ran already)
    conn.close()
    with Store.open(path) as again:
        assert again.schema_version == CURRENT_VERSION
        assert {a.cached_tokens for a in again.attempts_for_run(RUNS["qwen-vllm"])} == {None}


def _facts(cached, prompt=100, n=4):
    return [AttemptFacts(f"t{i}", 1, Outcome.PASS, prompt_tokens=prompt, cached_tokens=cached) for i in range(n)]


def test_different_conditions_or_cache_shares_are_a_caveat_and_alike_ones_are_not():
    warm = cache_condition("b", {}, {}, _facts(92))
    cold = cache_condition(
        "a",
        {"prompt_cache": "cold"},
        {
            "prompt_cache": {
                "asked": "cold",
                "held": True,
                "how": "cold: cache_prompt false on every request (llama.cpp)",
            }
        },
        _facts(0),
    )
    assert warm.share == 0.92 and cold.share == 0.0
    assert (
        cold.text()
        == "cold: cache_prompt false on every request (llama.cpp); 0% of 400 prompt tokens from the cache (4 answers)"
    )
    [caveat] = cache_caveats([cold, warm])
    assert caveat.code == "prompt_cache_differs" and "a: cold, 0% of prompt tokens" in caveat.text
    assert "b: server, 92% of prompt tokens from the cache" in caveat.text and "--prompt-cache cold" in caveat.text
    # The same server condition, one run 3 % from cache, the other 92 %: minutes apart, unfair.
    assert [c.code for c in cache_caveats([cache_condition("a", {}, {}, _facts(3)), warm])] == ["prompt_cache_differs"]
    both_cold = cache_condition("b", {"prompt_cache": "cold"}, {}, _facts(0))
    assert cache_caveats([cold, both_cold]) == []
    unknown = cache_condition("c", {}, {}, _facts(None))
    assert unknown.share is None
    assert unknown.text() == "the server's own; cache hits not recorded (the run predates compare-tui keeping them)"
    held = {"prompt_cache": {"asked": "server", "held": True, "how": "the server's own"}}
    told = cache_condition("d", {}, held, [], "vLLM")
    assert told.text().startswith("the server's own; cache hits not reported by the server (vLLM reports them")
    # Only a vLLM run is told vLLM's flag: a llama.cpp server has no such switch.
    llama = cache_condition("e", {}, held, [], "llama.cpp llama-server")
    assert llama.text() == "the server's own; cache hits not reported by the server"
    not_held = cache_condition(
        "h", {"prompt_cache": "cold"}, {"prompt_cache": {"asked": "cold", "held": False, "how": "not held: x"}}, []
    )
    assert [c.code for c in cache_caveats([not_held])] == ["prompt_cache_not_held"]


def test_the_report_shows_each_runs_condition_in_its_serving_block_and_json(tmp_path):
    store, _ = build_stack_store(tmp_path)
    conn = sqlite3.connect(tmp_path / "runs.sqlite")
    with conn:
        conn.execute(
            "UPDATE attempts SET cached_tokens = 56 WHERE run_id = ? AND prompt_tokens IS NOT NULL",
            (RUNS["qwen-vllm"],),
        )
        conn.execute(
            "UPDATE attempts SET cached_tokens = 0 WHERE run_id = ? AND prompt_tokens IS NOT NULL",
            (RUNS["qwen-llamacpp"],),
        )
    conn.close()
    report = build_report(load_report_inputs(store, COMPARISON))
    store.close()
    md = render_md(report)
    assert (
        "| prompt cache | the server's own; 0% of 660 prompt tokens from the cache (11 answers) | the server's own; 93% of 720 prompt tokens from the cache (12 answers) |"
        in md
    )
    assert "ran with different prompt-cache conditions" in md
    document = json.loads(render_json(report))
    assert document["models"][1]["prompt_cache"]["share"] == round(56 / 60, 6)
    assert "prompt_cache_differs" in {c["code"] for c in document["caveats"]}


def test_the_ab_diff_says_above_its_deltas_that_the_runs_met_a_different_cache(tmp_path):
    from compare_tui.diff import read_run_pair

    store, _ = build_stack_store(tmp_path)
    conn = sqlite3.connect(tmp_path / "runs.sqlite")
    with conn:
        conn.execute("UPDATE attempts SET cached_tokens = prompt_tokens - 1 WHERE run_id = ?", (RUNS["qwen-vllm"],))
        conn.execute("UPDATE attempts SET cached_tokens = 3 WHERE run_id = ?", (RUNS["qwen-llamacpp"],))
    conn.close()
    diff = read_run_pair(store, RUNS["qwen-llamacpp"], RUNS["qwen-vllm"])
    store.close()
    assert any("different prompt-cache conditions" in p for p in diff.problems)
    assert any(p.startswith("Δ latency and Δ cost mix the serving stack and the model") for p in diff.problems)


def test_an_experiments_runs_that_met_the_cache_differently_get_a_note():
    from dataclasses import replace

    from compare_tui.experiment import experiment_figures
    from tests.core.test_experiment import inputs_for

    per_run = [{"t1": "pass", "t2": "pass", "t3": "fail", "x": "pass", "h": "review"}] * 2
    inputs = inputs_for(per_run)
    assert not any("prompt-cache" in n for n in experiment_figures(inputs).notes)  # nothing said: no claim
    alpha = inputs.arms[0]
    warm = tuple(
        replace(r, attempts=tuple(replace(a, prompt_tokens=100, cached_tokens=90 if n else 0) for a in r.attempts))
        for n, r in enumerate(alpha.inputs)
    )
    figures = experiment_figures(replace(inputs, arms=(replace(alpha, inputs=warm), *inputs.arms[1:])))
    [note] = [n for n in figures.notes if "prompt-cache" in n]
    assert "run run0" in note and "0% of prompt tokens" in note and "90% of prompt tokens" in note

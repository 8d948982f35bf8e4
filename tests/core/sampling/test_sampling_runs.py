"""Whole-run sampling (`sample --whole-runs`): whole runs only, every step once, deterministic, scrubbed."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compare_tui.goldset import load_golden_set
from compare_tui.sampling import SampleOptions, SamplingError, check_run, sample_runs, write_sampled_set
from compare_tui.sampling.records import read_record
from tests.core.sampling.test_sampling_builders import (
    END,
    agent_run,
    broken_run,
    conversation,
    read_dir_bytes,
    write_jsonl,
)

BREAKS = ("incomplete", "interleaved", "missing_tool_result", "tool_id_mismatch")


def _sample(tmp: Path, records: list, runs: int, seed: str = "0", **options) -> tuple:
    log = write_jsonl(tmp / "agent.jsonl", records)
    sampled = sample_runs([log], SampleOptions(samples=runs, seed=seed, **options))
    return sampled, log


def _by_run(tasks: list[dict]) -> dict[str, list[dict]]:
    runs: dict[str, list[dict]] = {}
    for task in tasks:
        runs.setdefault(task["trace"]["run"], []).append(task)
    return runs


def test_every_step_becomes_a_task_with_the_history_the_agent_saw(tmp_path):
    records = agent_run("r1", 3, END)
    sampled, _ = _sample(tmp_path, records, 5)
    tasks = sorted(sampled.tasks, key=lambda t: t["trace"]["step"])
    assert [t["trace"]["step"] for t in tasks] == [1, 2, 3] and {t["trace"]["of"] for t in tasks} == {3}
    assert len({t["trace"]["run"] for t in tasks}) == 1
    for task, record in zip(tasks, records):
        turn = read_record(json.dumps(record).encode())
        assert len(task["input"]["messages"]) == len(turn.request.messages)
        assert [m["role"] for m in task["input"]["messages"]] == [m["role"] for m in turn.request.messages]
        assert task["input"]["tools"][0]["function"]["name"] == "find_order"
    assert tasks[0]["expected"] == {"tool_call": {"name": "find_order", "arguments": {"email": "[REDACTED:email]"}}}
    assert tasks[0]["scorer"] == {"kind": "tool_call", "match": "subset"}
    assert tasks[1]["expected"]["tool_call"] == {"name": "refund", "arguments": {"order": "r1-o1", "amount": 10}}
    assert tasks[2]["expected"] == {"text": "Done: r1 refunded."} and tasks[2]["scorer"]["kind"] == "human"
    assert sampled.info["counts"]["sampled_runs"] == 1 and sampled.info["unit"] == "run"


def test_arguments_match_and_text_scorer_are_configurable(tmp_path):
    sampled, _ = _sample(tmp_path, agent_run("r1", 2, END), 1, tool_match="exact", text_scorer="exact")
    kinds = {t["trace"]["step"]: t["scorer"] for t in sampled.tasks}
    assert kinds[1] == {"kind": "tool_call", "match": "exact"} and kinds[2]["kind"] == "exact"


@pytest.mark.parametrize("how", BREAKS)
def test_a_broken_run_is_skipped_whole_with_its_reason(tmp_path, how):
    records = agent_run("good", 3, END) + broken_run(agent_run("bad", 3, END - 100), how)
    sampled, _ = _sample(tmp_path, records, 5)
    assert set(_by_run(sampled.tasks)) == {sampled.tasks[0]["trace"]["run"]} and len(sampled.tasks) == 3
    assert all("good" in json.dumps(t["input"]) for t in sampled.tasks)
    assert sampled.info["skipped"][f"run_{how}"]["count"] == 1
    assert sampled.info["counts"]["skipped_runs"] == 1


def test_a_run_missing_a_middle_step_and_a_plain_chat_are_skipped(tmp_path):
    records = (
        agent_run("good", 3, END)
        + [r for i, r in enumerate(agent_run("gap", 4, END)) if i != 1]
        + conversation("chat", 2, END, tool_every=0)
    )
    sampled, _ = _sample(tmp_path, records, 5)
    assert len(sampled.tasks) == 3
    assert sampled.info["skipped"]["run_incomplete"]["count"] == 1
    assert sampled.info["skipped"]["run_without_tool_calls"]["count"] == 1


def test_a_run_partly_outside_the_window_is_skipped(tmp_path):
    records = agent_run("good", 2, END) + agent_run("old", 2, END - 86400 - 2, step_s=4)
    sampled, _ = _sample(tmp_path, records, 5, window="1d")
    assert len(sampled.tasks) == 2 and sampled.info["skipped"]["run_outside_window"]["count"] == 1


def test_no_complete_run_is_one_clear_error(tmp_path):
    with pytest.raises(SamplingError, match=r"no complete agent run .*1 × run_missing_tool_result"):
        _sample(tmp_path, broken_run(agent_run("bad", 3, END), "missing_tool_result"), 1)


def test_check_run_accepts_a_whole_run():
    turns = [read_record(json.dumps(r).encode()) for r in agent_run("r", 4, END)]
    assert check_run(turns) is None
    assert check_run(turns[:-1]) == "run_incomplete"


def test_the_sampled_set_loads_and_writes_byte_identically_twice(tmp_path):
    records = [r for i in range(6) for r in agent_run(f"r{i}", 2 + i % 3, END - i * 600)]
    first, _ = _sample(tmp_path, records, 4)
    second, _ = _sample(tmp_path, records, 4)
    write_sampled_set(first, tmp_path / "a")
    write_sampled_set(second, tmp_path / "b")
    assert read_dir_bytes(tmp_path / "a") == read_dir_bytes(tmp_path / "b")
    golden = load_golden_set(tmp_path / "a")
    assert len(golden.tasks) == len(first.tasks) and all(t.trace is not None for t in golden.tasks)
    assert any("its input is exactly the history and tools the agent saw" in c for c in golden.manifest.caveats)


# ---------------------------------------------------------------- properties

_run_specs = st.lists(
    st.tuples(
        st.integers(min_value=2, max_value=5),
        st.integers(min_value=0, max_value=20_000),
        st.sampled_from((None, *BREAKS)),
    ),
    min_size=1,
    max_size=8,
)


def _log(specs: list) -> list[dict]:
    records = []
    for index, (steps, age, how) in enumerate(specs):
        run = agent_run(f"run{index}", max(steps, 3) if how else steps, END - age, email=f"user{index}@example.com")
        records += broken_run(run, how) if how else run
    return records


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    specs=_run_specs,
    runs=st.integers(min_value=1, max_value=6),
    seed=st.sampled_from(("0", "7")),
    shuffle=st.randoms(use_true_random=False),
)
def test_whole_runs_only_every_step_once_deterministic_and_scrubbed(
    tmp_path, specs, runs, seed, shuffle: random.Random
):
    records = _log(specs)
    good = sum(1 for _, _, how in specs if how is None)
    if not good:
        with pytest.raises(SamplingError):
            _sample(tmp_path, records, runs, seed)
        return
    sampled, _ = _sample(tmp_path, records, runs, seed)
    shuffled = list(records)
    shuffle.shuffle(shuffled)
    again, _ = _sample(tmp_path, shuffled, runs, seed)
    assert again.tasks == sampled.tasks  # the order of lines does not matter
    by_run = _by_run(sampled.tasks)
    assert len(by_run) == min(runs, good)
    for steps in by_run.values():
        of = steps[0]["trace"]["of"]
        assert sorted(t["trace"]["step"] for t in steps) == list(range(1, of + 1))  # whole, each step once
        assert all(t["trace"]["of"] == of for t in steps)
    assert len({t["id"] for t in sampled.tasks}) == len(sampled.tasks)
    text = json.dumps(sampled.tasks)
    assert "@example.com" not in text  # scrubbed, in messages and in expected arguments
    assert sum(e["count"] for r, e in sampled.info["skipped"].items() if r.startswith("run_")) == len(specs) - good


# ---------------------------------------------------------------- the command


def _cli(capsys, *args: str) -> tuple[int, str, str]:
    from compare_tui.cli import main

    code = main(["sample", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_the_command_samples_whole_runs_and_says_what_it_skipped(tmp_path, capsys):
    records = [r for i in range(4) for r in agent_run(f"r{i}", 3, END - i * 60)] + broken_run(
        agent_run("bad", 3, END), "tool_id_mismatch"
    )
    log = write_jsonl(tmp_path / "agent.jsonl", records)
    code, out, err = _cli(capsys, str(log), "--whole-runs", "--runs", "2", "--out", str(tmp_path / "set"))
    assert code == 0, err
    assert "sampled 2 whole agent runs (6 steps, 4 tool calls, 2 final answers)" in out
    assert "runs: 5 found, 4 complete, 1 skipped" in out and "run_tool_id_mismatch" in out
    golden = load_golden_set(tmp_path / "set")
    assert sorted((t.trace.run, t.trace.step) for t in golden.tasks if t.trace) == sorted(
        (t.trace.run, s) for t in golden.tasks if t.trace and t.trace.step == 1 for s in (1, 2, 3)
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--whole-runs", "--samples", "3"], "with --whole-runs give --runs N"),
        (["--runs", "3"], "add --whole-runs"),
        ([], "give --samples N"),
        (["--whole-runs", "--runs", "0"], "--runs 0: give a number from 1"),
    ],
)
def test_mixed_up_counts_are_one_clear_line(tmp_path, capsys, args, message):
    log = write_jsonl(tmp_path / "agent.jsonl", agent_run("r", 2, END))
    code, _out, err = _cli(capsys, str(log), *args, "--out", str(tmp_path / "set"))
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1, err


def test_a_step_logged_twice_identically_counts_once(tmp_path):
    records = agent_run("r", 3, END)
    sampled, _ = _sample(tmp_path, [*records, records[1]], 2)
    assert sorted(t["trace"]["step"] for t in sampled.tasks) == [1, 2, 3] and not sampled.info["skipped"]

"""The golden-set `trace` field: a task may be one step of a recorded agent run."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest

from compare_tui.goldset import GoldenSetError, load_golden_set
from compare_tui.goldset.digest import canonical_json
from tests.goldset_factory import make_set, task_data


def _traced(root: Path, *traces: Any) -> Path:
    return make_set(root, tasks={f"t{i}.json": task_data(f"t{i}", trace=t) for i, t in enumerate(traces)})


def _problems(root: Path) -> list[str]:
    with pytest.raises(GoldenSetError) as caught:
        load_golden_set(root)
    return [str(p) for p in caught.value.problems]


def test_a_whole_run_loads_and_keeps_its_trace(tmp_path: Path) -> None:
    root = _traced(
        tmp_path,
        {"run": "r1", "step": 2, "of": 2},
        {"run": "r1", "step": 1, "of": 2},
        {"run": "r2", "step": 1, "of": 1},
    )
    golden = load_golden_set(root)
    traces = {t.id: (t.trace.run, t.trace.step, t.trace.of) for t in golden.tasks if t.trace}
    assert traces == {"t0": ("r1", 2, 2), "t1": ("r1", 1, 2), "t2": ("r2", 1, 1)}


def test_a_toml_task_may_carry_a_trace(tmp_path: Path) -> None:
    root = make_set(tmp_path, tasks={"a.toml": task_data("a", trace={"run": "r", "step": 1, "of": 1})})
    assert load_golden_set(root).tasks[0].trace is not None


def test_a_set_without_traces_keeps_the_digest_it_had_before_the_field(tmp_path: Path) -> None:
    golden = load_golden_set(make_set(tmp_path))
    # The digest as written before `trace` existed: tasks dumped without the key.
    tasks = [
        {k: v for k, v in t.model_dump(mode="json", by_alias=True).items() if k != "trace"}
        for t in sorted(golden.tasks, key=lambda t: t.id)
    ]
    payload = {"manifest": golden.manifest.model_dump(mode="json", by_alias=True), "tasks": tasks, "files": {}}
    payload["manifest"].pop("decision", None)
    payload["manifest"]["run"].pop("strict_serving")  # added later, and left out of the digest too
    old = "sha256:" + hashlib.sha256(canonical_json(payload).encode()).hexdigest()
    assert golden.digest == old


def test_the_trace_is_part_of_the_digest(tmp_path: Path) -> None:
    one = load_golden_set(_traced(tmp_path / "a", {"run": "r1", "step": 1, "of": 1}))
    two = load_golden_set(_traced(tmp_path / "b", {"run": "r2", "step": 1, "of": 1}))
    assert one.digest != two.digest


@pytest.mark.parametrize(
    ("trace", "field", "words"),
    [
        ({"run": "r", "step": "1", "of": 1}, "trace.step", "expected an integer"),
        ({"run": 7, "step": 1, "of": 1}, "trace.run", "expected a string"),
        ({"run": "r", "step": 0, "of": 1}, "trace.step", "greater than or equal to 1"),
        ({"run": "r", "step": 3, "of": 2}, "trace", "past the run's 2 steps"),
        ({"run": "", "step": 1, "of": 1}, "trace.run", ""),
        ({"run": "r", "step": 1}, "trace.of", ""),
        ({"run": "r", "step": 1, "of": 1, "extra": 1}, "trace.extra", ""),
    ],
)
def test_a_malformed_trace_names_file_and_field(tmp_path: Path, trace: Any, field: str, words: str) -> None:
    problems = _problems(_traced(tmp_path, trace))
    assert len(problems) == 1
    assert problems[0].startswith(f"{tmp_path / 'tasks' / 't0.json'}: {field}:")
    assert words in problems[0]


def test_a_step_given_twice_names_both_tasks(tmp_path: Path) -> None:
    problems = _problems(_traced(tmp_path, {"run": "r", "step": 1, "of": 2}, {"run": "r", "step": 1, "of": 2}))
    assert any("t1.json: trace.step: task `t1` is step 1 of run `r`, which task `t0` already is" in p for p in problems)


def test_a_missing_step_is_named(tmp_path: Path) -> None:
    problems = _problems(_traced(tmp_path, {"run": "r", "step": 1, "of": 3}, {"run": "r", "step": 3, "of": 3}))
    assert problems == [
        f"{tmp_path / 'tasks' / 't0.json'}: trace: run `r` has 3 steps (`of`), but no task is step 2. "
        "Add a task for every step of the run, or correct `of`; a run is replayed whole."
    ]


def test_an_inconsistent_of_names_both_tasks(tmp_path: Path) -> None:
    problems = _problems(_traced(tmp_path, {"run": "r", "step": 1, "of": 2}, {"run": "r", "step": 2, "of": 3}))
    assert any("t1.json: trace.of: task `t1` says run `r` has 3 steps, but task `t0`" in p for p in problems)


def test_run_context_lists_the_earlier_steps_with_their_results() -> None:
    from compare_tui.goldset import Task
    from compare_tui.goldset.text import run_context_text

    call = {"id": "c1", "type": "function", "function": {"name": "find", "arguments": '{"b": 2, "a": 1}'}}
    task = Task.model_validate(
        {
            "id": "s2",
            "trace": {"run": "r", "step": 2, "of": 3},
            "expected": {"text": "done"},
            "input": {
                "messages": [
                    {"role": "user", "content": "go"},
                    {"role": "assistant", "content": None, "tool_calls": [call]},
                    {"role": "tool", "tool_call_id": "c1", "content": "ok"},
                ]
            },
        }
    )
    assert run_context_text(task) == 'step 2 of 3 of run r\nstep 1: [tool call] find({"a":1,"b":2})\n  → ok'
    first = task.model_copy(
        update={
            "trace": task.trace.model_copy(update={"step": 1}),
            "input": task.input.model_copy(update={"messages": task.input.messages[:1]}),
        }
    )
    assert run_context_text(first) == "step 1 of 3 of run r\n(the first step: no earlier action)"
    assert run_context_text(task.model_copy(update={"trace": None})) is None

"""The sample golden sets load, cover every scorer kind, and agree with their own checks.

The sets under `sample_sets/` are what a new user runs first, so a broken one is a broken
first impression: every set must load through the real loader, the baseline (`expected`) must
pass its own scorer and a wrong answer must fail it, and the `command` checker must give
0 / 1 / 2 for a right answer, a wrong one, and malformed input.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from collections import Counter
from pathlib import Path

import jsonschema
import pytest

from compare_tui.goldset import SCORER_KINDS, GoldenSet, Manifest, Task, discover_golden_sets, load_golden_set
from compare_tui.scoring import Answer, Outcome, ToolCall, score

SAMPLE_SETS = Path(__file__).resolve().parents[3] / "sample_sets"
SET_NAMES = ("support-triage", "order-extraction", "calendar-assistant", "ticket-labels")
SET_DIRS = sorted(d for d in SAMPLE_SETS.iterdir() if (d / "golden.toml").is_file())
CHECKER = SAMPLE_SETS / "order-extraction" / "checks" / "convert.py"


@pytest.fixture(scope="module")
def golden_sets() -> dict[str, GoldenSet]:
    return {d.name: load_golden_set(d) for d in SET_DIRS}


def _raw_task_files(set_dir: Path) -> list[Path]:
    return sorted(p for p in (set_dir / "tasks").iterdir() if p.suffix in (".toml", ".json"))


# ------------------------------------------------------------------ loading


def test_the_documented_sets_are_present() -> None:
    assert {d.name for d in SET_DIRS} >= set(SET_NAMES)
    assert sorted(p.name for p in discover_golden_sets(SAMPLE_SETS)) == [d.name for d in SET_DIRS]


@pytest.mark.parametrize("set_dir", SET_DIRS, ids=lambda d: d.name)
def test_every_file_validates_against_the_models(set_dir: Path) -> None:
    # Independent of the loader: the raw files satisfy the pydantic models, and each file
    # is named after its task id.
    Manifest.model_validate(tomllib.loads((set_dir / "golden.toml").read_text(encoding="utf-8")))
    for path in _raw_task_files(set_dir):
        text = path.read_text(encoding="utf-8")
        data = tomllib.loads(text) if path.suffix == ".toml" else json.loads(text)
        assert Task.model_validate(data).id == path.stem, path


@pytest.mark.parametrize("set_dir", SET_DIRS, ids=lambda d: d.name)
def test_every_set_loads_with_a_stable_digest(set_dir: Path, golden_sets: dict[str, GoldenSet]) -> None:
    loaded = golden_sets[set_dir.name]
    assert loaded.manifest.workload_id == set_dir.name
    assert len(loaded.tasks) == len(_raw_task_files(set_dir))
    assert len({t.id for t in loaded.tasks}) == len(loaded.tasks)
    assert loaded.digest.startswith("sha256:")
    assert load_golden_set(set_dir).digest == loaded.digest
    assert loaded.manifest.run.attempts == 1 and loaded.manifest.run.temperature == 0.0
    assert loaded.manifest.caveats, "every sample set states its caveats"


def test_scorer_files_count_towards_the_digest(golden_sets: dict[str, GoldenSet]) -> None:
    files = golden_sets["order-extraction"].files
    assert {"checks/convert.py", "schemas/order.schema.json"} <= set(files)


def test_enough_tasks_and_every_scorer_kind(golden_sets: dict[str, GoldenSet]) -> None:
    kinds: Counter[str] = Counter()
    for loaded in golden_sets.values():
        kinds.update(loaded.scorer_for(task).kind for task in loaded.tasks)
    assert sum(kinds.values()) >= 25
    assert set(kinds) == set(SCORER_KINDS), kinds


def test_the_scorer_variants_are_all_exercised(golden_sets: dict[str, GoldenSet]) -> None:
    specs = [ls.scorer_for(t) for ls in golden_sets.values() for t in ls.tasks]
    assert any(s.kind == "exact" and set(s.normalize) == {"case", "whitespace", "punctuation"} for s in specs)
    assert {s.mode for s in specs if s.kind == "regex"} == {"search", "fullmatch"}
    assert any(s.kind == "tool_call" and s.match == "subset" for s in specs)
    assert any(s.kind == "tool_call" and s.no_tool_call for s in specs)
    assert any(s.kind == "json" and s.fields for s in specs)
    assert any(s.kind == "human" and s.instructions for s in specs)
    # One schema is written inline, another lives in a file; the raw manifest shows which.
    manifest = tomllib.loads((SAMPLE_SETS / "order-extraction" / "golden.toml").read_text(encoding="utf-8"))
    assert manifest["default_scorer"]["schema"] == "schemas/order.schema.json"
    raw_files = [p for d in SET_DIRS for p in _raw_task_files(d)]
    assert sum(p.suffix == ".json" for p in raw_files) >= 3


# ------------------------------------------------------------------ self-consistency


def _tool_parameters(task: Task, name: str) -> dict[str, object]:
    for tool in task.input.tools or []:
        if tool["function"]["name"] == name:
            return tool["function"]["parameters"]
    raise AssertionError(f"{task.id}: no tool named {name!r} in input.tools")


@pytest.mark.parametrize("set_dir", SET_DIRS, ids=lambda d: d.name)
def test_expected_answers_satisfy_their_own_checks(
    set_dir: Path, golden_sets: dict[str, GoldenSet], tmp_path: Path
) -> None:
    loaded = golden_sets[set_dir.name]
    for task in loaded.tasks:
        spec = loaded.scorer_for(task)
        expected = task.expected
        if spec.kind in ("exact", "regex", "human"):
            assert expected.text, task.id
        if spec.kind == "regex":
            assert getattr(spec.compiled(), spec.mode)(expected.text), task.id
        elif spec.kind == "json":
            schema = spec.schema_
            if isinstance(schema, str):  # the loader may or may not have resolved the path
                schema = json.loads((set_dir / schema).read_text(encoding="utf-8"))
            jsonschema.validate(expected.json_, schema)
            assert set(spec.fields) <= set(expected.json_), task.id
        elif spec.kind == "tool_call":
            assert task.input.tools, task.id
            if spec.no_tool_call:
                assert expected.tool_call is None, task.id
                continue
            call = expected.tool_call
            jsonschema.validate(call.arguments, _tool_parameters(task, call.name))
            if spec.arguments is not None:
                assert spec.arguments.items() <= call.arguments.items(), task.id
        elif spec.kind == "command":
            assert spec.run[1:] == ["checks/convert.py"], task.id
            value = expected.json_["value"]
            workdir = tmp_path / task.id
            workdir.mkdir()
            assert _run_checker(workdir, json.dumps(expected.json_), f"{value}\n") == 0, task.id


def _baseline_and_wrong_answers(task: Task, kind: str) -> tuple[Answer, Answer]:
    expected = task.expected
    if kind == "command":
        return Answer(text=f"{expected.json_['value']}"), Answer(text="999")
    if expected.tool_call is not None:
        call = ToolCall(expected.tool_call.name, json.dumps(expected.tool_call.arguments))
        return Answer(tool_calls=(call,)), Answer(text="Sorry, I can't help with that.")
    if expected.json_ is not None:
        return Answer(text=json.dumps(expected.json_)), Answer(text='{"answer": "unknown"}')
    if kind == "tool_call":  # no_tool_call: the baseline answered in words
        wrong = ToolCall(task.input.tools[0]["function"]["name"], "{}")
        return Answer(text=expected.text), Answer(tool_calls=(wrong,))
    return Answer(text=expected.text), Answer(text="I am not sure.")


@pytest.mark.parametrize("set_dir", SET_DIRS, ids=lambda d: d.name)
def test_the_real_scorers_pass_the_baseline_and_fail_a_wrong_answer(
    set_dir: Path, golden_sets: dict[str, GoldenSet]
) -> None:
    # End to end through `score()`, the command scorer's sandbox included: a model that
    # answers exactly like production passes every task, one that answers nonsense fails.
    loaded = golden_sets[set_dir.name]
    for task in loaded.tasks:
        spec = loaded.scorer_for(task)
        baseline, wrong = _baseline_and_wrong_answers(task, spec.kind)
        want_good, want_bad = (Outcome.REVIEW, Outcome.REVIEW) if spec.kind == "human" else (Outcome.PASS, Outcome.FAIL)
        good = score(task, spec, baseline, set_root=loaded.root)
        bad = score(task, spec, wrong, set_root=loaded.root)
        assert good.outcome == want_good, (task.id, good.detail)
        assert bad.outcome == want_bad, (task.id, bad.detail)


# ------------------------------------------------------------------ the command checker


def _run_checker(
    workdir: Path,
    expected: str | bytes,
    answer: str | bytes | None,
    *,
    stdin: str = "",
    env: dict[str, str] | None = None,
) -> int:
    """Run the checker as the command scorer would: cwd a fresh folder, a minimal environment."""
    (workdir / "expected.json").write_bytes(expected.encode() if isinstance(expected, str) else expected)
    if answer is not None:
        (workdir / "answer.txt").write_bytes(answer.encode() if isinstance(answer, str) else answer)
    proc = subprocess.run(
        [sys.executable, str(CHECKER)],
        cwd=workdir,
        input=stdin.encode(),
        env={"PATH": os.environ.get("PATH", ""), **(env or {})},
        capture_output=True,
        timeout=30,
    )
    return proc.returncode


KM_TO_MI = json.dumps({"value": 3.10686, "unit": "mi", "tolerance_pct": 1})


@pytest.mark.parametrize(
    ("answer", "code"),
    [
        ("3.11", 0),
        ("About 3.1 miles.", 0),
        ("**3.107**\n", 0),
        ("4.2", 1),  # wrong
        ("3.2", 1),  # 3% off, outside the 1% tolerance
        ("5 km is 3.11 miles", 1),  # the first number is the one compared
        ("I'm not sure.", 1),  # no number: the model failed, the checker did not
        ("", 1),
        (b"\xff\xfe garbage \x00", 2),  # not UTF-8: mangled input, nothing measured
    ],
)
def test_checker_exit_codes(tmp_path: Path, answer: str | bytes, code: int) -> None:
    assert _run_checker(tmp_path, KM_TO_MI, answer) == code


@pytest.mark.parametrize("expected", ["{not json", "", '{"unit": "mi"}', '{"value": true}', "NaN", '"no number"'])
def test_checker_errors_on_garbage_expected(tmp_path: Path, expected: str) -> None:
    assert _run_checker(tmp_path, expected, "3.11") == 2


def test_checker_errors_without_expected_file(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, str(CHECKER)], cwd=tmp_path, input=b"3.11", capture_output=True, timeout=30)
    assert proc.returncode == 2
    assert b"expected.json" in proc.stderr


def test_checker_reads_stdin_and_the_named_answer_file(tmp_path: Path) -> None:
    assert _run_checker(tmp_path, KM_TO_MI, None, stdin="3.1069") == 0
    (tmp_path / "model-answer").write_text("3.5")
    named = {"COMPARE_TUI_ANSWER_FILE": str(tmp_path / "model-answer")}
    assert _run_checker(tmp_path, KM_TO_MI, "3.11", env=named) == 1  # the named file wins
    # The command scorer's own variables (compare_tui/scoring/command.py) name both files.
    (tmp_path / "exp").write_text(json.dumps({"value": 3.5}))
    scorer_env = {"COMPARE_TUI_ANSWER": str(tmp_path / "model-answer"), "COMPARE_TUI_EXPECTED": str(tmp_path / "exp")}
    assert _run_checker(tmp_path, "{not json", "3.11", env=scorer_env) == 0


def test_checker_accepts_the_wrapped_expected_block(tmp_path: Path) -> None:
    wrapped = json.dumps({"text": None, "json": {"value": -40, "tolerance_abs": 0.5}, "tool_call": None})
    assert _run_checker(tmp_path, wrapped, "\u221240 \u00b0F") == 0
    assert _run_checker(tmp_path, json.dumps({"text": "30"}), "30") == 0
    assert _run_checker(tmp_path, json.dumps({"text": "30"}), "31") == 1


def test_checker_tolerance_is_relative_by_default(tmp_path: Path) -> None:
    value = 68.58
    expected = json.dumps({"value": value})
    assert _run_checker(tmp_path, expected, f"{value * 1.009}") == 0
    assert _run_checker(tmp_path, expected, f"{value * 1.011}") == 1

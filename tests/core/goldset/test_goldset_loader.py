"""The golden-set loader: valid sets load; every malformed input is a GoldenSetError that
names the file, the field and a fix, and one load reports every problem in every file."""

from __future__ import annotations

import os
import pickle
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from compare_tui.goldset import (
    SCORER_KINDS,
    GoldenSetError,
    JsonScorer,
    Problem,
    Task,
    discover_golden_sets,
    load_golden_set,
    validate_golden_set,
)
from tests.goldset_factory import make_set, manifest_data, task_data

CHECK_PY = "import sys\nsys.exit(0)\n"
SCHEMA = {"type": "object", "required": ["label"], "properties": {"label": {"type": "string"}}}


def _error(root: Path) -> GoldenSetError:
    with pytest.raises(GoldenSetError) as caught:
        load_golden_set(root)
    return caught.value


# ---------------------------------------------------------------- valid sets


def test_valid_set_loads_toml_and_json_tasks_in_file_name_order(tmp_path: Path) -> None:
    golden = load_golden_set(make_set(tmp_path / "set"))
    assert [t.id for t in golden.tasks] == ["login-02", "refund-01"]  # login-02.json < refund-01.toml
    assert golden.manifest.workload_id == "support-triage"
    assert golden.manifest.run.attempts == 2
    assert golden.scorer_for(golden.task("refund-01")).kind == "exact"
    assert golden.digest.startswith("sha256:") and len(golden.digest) == 7 + 64
    assert golden.root.is_absolute()
    assert validate_golden_set(tmp_path / "set") == []


def test_messages_form_and_tool_call_expected_load(tmp_path: Path) -> None:
    task = task_data(
        "weather-01",
        input={
            "messages": [{"role": "user", "content": "Weather in Oslo?"}],
            "tools": [{"type": "function", "function": {"name": "get_weather"}}],
        },
        expected={"tool_call": {"name": "get_weather", "arguments": {"city": "Oslo"}}},
        scorer={"kind": "tool_call", "match": "subset"},
    )
    golden = load_golden_set(make_set(tmp_path, tasks={"w.json": task}))
    assert golden.tasks[0].expected.tool_call.arguments == {"city": "Oslo"}


def test_schema_path_is_replaced_by_the_schema_and_referenced_files_are_hashed(tmp_path: Path) -> None:
    tasks = {
        "a.toml": task_data(
            "a",
            expected={"json": {"label": "billing"}},
            scorer={"kind": "json", "schema": "schemas/label.json", "fields": ["label"]},
        ),
        "b.toml": task_data("b", scorer={"kind": "command", "run": ["python3", "checks/check.py", "--strict"]}),
    }
    files = {"schemas/label.json": __import__("json").dumps(SCHEMA), "checks/check.py": CHECK_PY}
    golden = load_golden_set(make_set(tmp_path, tasks=tasks, files=files))
    scorer = golden.task("a").scorer
    assert isinstance(scorer, JsonScorer) and scorer.schema_ == SCHEMA
    assert sorted(golden.files) == ["checks/check.py", "schemas/label.json"]


def test_default_scorer_schema_path_is_resolved_too(tmp_path: Path) -> None:
    manifest = manifest_data(default_scorer={"kind": "json", "schema": "s.json"})
    tasks = {"a.toml": task_data("a", expected={"json": {"label": "x"}})}
    golden = load_golden_set(make_set(tmp_path, manifest=manifest, tasks=tasks, files={"s.json": '{"type": "object"}'}))
    assert golden.manifest.default_scorer.schema_ == {"type": "object"}
    assert "s.json" in golden.files


def test_no_tool_call_scorer_needs_no_expected_tool_call(tmp_path: Path) -> None:
    tasks = {"a.toml": task_data("a", scorer={"kind": "tool_call", "no_tool_call": True})}
    load_golden_set(make_set(tmp_path, tasks=tasks))


def test_hidden_and_other_files_in_tasks_are_ignored(tmp_path: Path) -> None:
    root = make_set(
        tmp_path, tasks={"a.toml": task_data("a"), ".a.toml.swp": b"\xff", "README.md": "notes", ".b.toml": "junk"}
    )
    assert [t.id for t in load_golden_set(root).tasks] == ["a"]


def test_a_dumped_task_validates_again() -> None:
    task = Task.model_validate(task_data())
    assert Task.model_validate(task.model_dump(mode="json", by_alias=True)) == task


def test_discover_lists_subfolders_with_a_manifest_sorted(tmp_path: Path) -> None:
    make_set(tmp_path / "b-set")
    make_set(tmp_path / "a-set")
    (tmp_path / "not-a-set").mkdir()
    (tmp_path / "file.txt").write_text("x")
    assert discover_golden_sets(tmp_path) == [tmp_path / "a-set", tmp_path / "b-set"]
    assert discover_golden_sets(tmp_path / "missing") == []


# ---------------------------------------------------------------- one malformed input each

Case = Callable[[Path], tuple[str, str | None, str]]
"""Breaks a valid set at `root`; returns (file the error must name, field or None, a word of the message)."""


def _task(**fields: Any) -> Callable[[Path], None]:
    return lambda root: make_set(root, tasks={"a.toml": task_data("a", **fields)})


def _case(build: Callable[[Path], Any], file: str, field: str | None, word: str) -> Case:
    def run(root: Path) -> tuple[str, str | None, str]:
        build(root)
        return file, field, word

    return run


def _drop(key: str) -> Callable[[Path], None]:
    def build(root: Path) -> None:
        data = task_data("a")
        del data[key]
        make_set(root, tasks={"a.toml": data})

    return build


CASES: dict[str, Case] = {
    "missing golden.toml": _case(
        lambda r: (make_set(r), (r / "golden.toml").unlink()), "golden.toml", None, "no golden.toml"
    ),
    "bad TOML syntax": _case(
        lambda r: make_set(r, tasks={"a.toml": 'id = "a"\n[input\nprompt = "x"\n'}), "a.toml", None, "line 2"
    ),
    "bad JSON syntax": _case(
        lambda r: make_set(r, tasks={"a.json": '{\n  "id": "a",\n  "input": {,}\n}'}), "a.json", None, "line 3"
    ),
    "bad manifest TOML": _case(
        lambda r: (make_set(r), (r / "golden.toml").write_text("name = \n")), "golden.toml", None, "invalid TOML"
    ),
    "non-UTF-8 bytes": _case(lambda r: make_set(r, tasks={"a.toml": b'id = "a"\n\xff\xfe'}), "a.toml", None, "UTF-8"),
    "missing field": _case(_drop("expected"), "a.toml", "expected", "missing"),
    "missing manifest field": _case(
        lambda r: make_set(r, manifest={k: v for k, v in manifest_data().items() if k != "default_scorer"}),
        "golden.toml",
        "default_scorer",
        "missing",
    ),
    "wrong type": _case(_task(input={"prompt": 3}), "a.toml", "input.prompt", "expected a string"),
    "wrong type in manifest": _case(
        lambda r: make_set(r, manifest=manifest_data(version=1.0)), "golden.toml", "version", "quotes"
    ),
    "unknown field": _case(
        _task(priority=1), "a.toml", "priority", "allowed fields are id, tags, input, expected, scorer"
    ),
    "unknown nested field": _case(
        _task(scorer={"kind": "regex", "pattern": "x", "flag": ["IGNORECASE"]}),
        "a.toml",
        "scorer.flag",
        "allowed fields are kind, pattern, mode, flags",
    ),
    "bad task id": _case(_task(id="has space"), "a.toml", "id", "not a valid id"),
    "bad literal": _case(
        _task(input={"messages": [{"role": "robot", "content": "x"}]}),
        "a.toml",
        "input.messages[0].role",
        "not allowed",
    ),
    "misspelt expected key": _case(
        _task(expected={"texts": "a"}), "a.toml", "expected", "unknown field `texts` (did you mean `text`?)"
    ),
    "two expected outcomes": _case(_task(expected={"text": "a", "json": {"a": 1}}), "a.toml", "expected", "both given"),
    "no prompt": _case(_task(input={"system": "s"}), "a.toml", "input", "neither"),
    "bad regex": _case(
        _task(scorer={"kind": "regex", "pattern": "(unclosed"}), "a.toml", "scorer.pattern", "regular expression"
    ),
    "huge regex repeat": _case(
        _task(scorer={"kind": "regex", "pattern": "a{4294967296}"}), "a.toml", "scorer.pattern", "regular expression"
    ),
    "invalid inline schema": _case(
        _task(expected={"json": {}}, scorer={"kind": "json", "schema": {"type": 5}}),
        "a.toml",
        "scorer.schema",
        "JSON Schema",
    ),
    "unknown $schema": _case(
        _task(expected={"json": {}}, scorer={"kind": "json", "schema": {"$schema": "urn:nope"}}),
        "a.toml",
        "scorer.schema",
        "$schema",
    ),
    "schema path missing": _case(
        _task(expected={"json": {}}, scorer={"kind": "json", "schema": "schemas/nope.json"}),
        "a.toml",
        "scorer.schema",
        "does not exist",
    ),
    "schema path escapes": _case(
        _task(expected={"json": {}}, scorer={"kind": "json", "schema": "../outside.json"}),
        "a.toml",
        "scorer.schema",
        "leaves the set folder",
    ),
    "schema file not JSON": _case(
        lambda r: make_set(
            r,
            tasks={"a.toml": task_data("a", expected={"json": {}}, scorer={"kind": "json", "schema": "s.json"})},
            files={"s.json": "{nope"},
        ),
        "s.json",
        None,
        "invalid JSON",
    ),
    "unknown scorer kind": _case(_task(scorer={"kind": "llm_judge"}), "a.toml", "scorer.kind", ", ".join(SCORER_KINDS)),
    "scorer without kind": _case(_task(scorer={"pattern": "x"}), "a.toml", "scorer.kind", "missing `kind`"),
    "default scorer kind": _case(
        lambda r: make_set(r, manifest=manifest_data(default_scorer={"kind": "nope"})),
        "golden.toml",
        "default_scorer.kind",
        "unknown scorer kind",
    ),
    "command script missing": _case(
        _task(scorer={"kind": "command", "run": ["python3", "checks/check.py"]}),
        "a.toml",
        "scorer.run[1]",
        "does not exist",
    ),
    "command script outside": _case(
        _task(scorer={"kind": "command", "run": ["bash", "../check.sh"]}),
        "a.toml",
        "scorer.run[1]",
        "outside the set folder",
    ),
    "json fields without object": _case(
        _task(scorer={"kind": "json", "fields": ["label"]}), "a.toml", "expected.json", "not given"
    ),
    "json fields missing a key": _case(
        _task(expected={"json": {"x": 1}}, scorer={"kind": "json", "fields": ["label"]}),
        "a.toml",
        "expected.json",
        "`label`",
    ),
    "default json fields": _case(
        lambda r: make_set(
            r,
            manifest=manifest_data(default_scorer={"kind": "json", "fields": ["label"]}),
            tasks={"a.toml": task_data("a", expected={"json": [1]})},
        ),
        "a.toml",
        "expected.json",
        "default scorer",
    ),
    "exact scorer with only expected.json": _case(
        _task(expected={"json": {"label": "invoice"}}), "a.toml", "expected.text", "exact scorer"
    ),
    "default exact scorer with only expected.tool_call": _case(
        _task(expected={"tool_call": {"name": "lookup"}}), "a.toml", "expected.text", "default scorer"
    ),
    "tool_call without expected": _case(
        _task(scorer={"kind": "tool_call"}), "a.toml", "expected.tool_call", "no `expected.tool_call`"
    ),
    "no tasks folder": _case(lambda r: (make_set(r, tasks={}), (r / "tasks").rmdir()), "tasks", None, "does not exist"),
    "empty tasks folder": _case(lambda r: make_set(r, tasks={}), "tasks", None, "empty"),
    "top level not an object": _case(
        lambda r: make_set(r, tasks={"a.json": '"just a string"'}), "a.json", None, "a string at the top level"
    ),
    "top-level array": _case(
        lambda r: make_set(r, tasks={"a.json": [task_data("a"), task_data("b")]}), "a.json", None, "top-level array"
    ),
    "duplicate JSON key": _case(
        lambda r: make_set(r, tasks={"a.json": '{"id": "a", "id": "b"}'}), "a.json", None, "appears twice"
    ),
    "TOML date": _case(
        lambda r: make_set(
            r, tasks={"a.toml": task_data("a", expected={"json": {"when": __import__("datetime").date(2025, 1, 2)}})}
        ),
        "a.toml",
        "expected.json.when",
        "date",
    ),
    "nested too deeply": _case(
        lambda r: make_set(r, tasks={"a.json": '{"expected": {"json": ' + "[" * 200 + "]" * 200 + "}}"}),
        "a.json",
        "expected.json[0]",
        "nested",
    ),
    "nested past the parser": _case(
        lambda r: make_set(r, tasks={"a.json": "[" * 100_000}), "a.json", None, "nested too deeply"
    ),
    "giant integer": _case(
        lambda r: make_set(r, tasks={"a.json": '{"id": ' + "9" * 5000 + "}"}), "a.json", None, "thousands of digits"
    ),
    "key with a line break": _case(
        lambda r: make_set(r, tasks={"a.json": {**task_data("a"), "\n": 1}}), "a.json", '"\\n"', "unknown field"
    ),
    "task file is a folder": _case(
        lambda r: (make_set(r, tasks={}), (r / "tasks" / "a.toml").mkdir()), "a.toml", None, "folder"
    ),
}


@pytest.mark.parametrize("name", list(CASES))
def test_malformed_input_names_file_field_and_fix(tmp_path: Path, name: str) -> None:
    file, field, word = CASES[name](tmp_path)
    err = _error(tmp_path)
    text = str(err)
    assert "\n" not in text and "Traceback" not in text
    matching = [p for p in err.problems if str(p.file).endswith(file) and p.field == field]
    assert matching, f"no problem for {file}:{field} in {[str(p) for p in err.problems]}"
    line = str(matching[0])
    assert word in line
    assert line.startswith(f"{matching[0].file}: {field}: " if field else f"{matching[0].file}: ")
    assert matching[0].fix, "every problem says what to do"


def test_duplicate_ids_name_both_files(tmp_path: Path) -> None:
    make_set(tmp_path, tasks={"a.toml": task_data("same"), "b.json": task_data("same")})
    err = _error(tmp_path)
    assert err.field == "id"
    assert "b.json" in str(err) and "a.toml" in str(err)


def test_syntax_errors_carry_the_line_number(tmp_path: Path) -> None:
    make_set(tmp_path, tasks={"a.json": '{\n  "id": "a",\n  "input": {,}\n}', "b.toml": 'id = "b"\n\n[input\n'})
    assert [p.line for p in _error(tmp_path).problems] == [3, 3]


def test_missing_folder_and_a_file_instead_of_a_folder(tmp_path: Path) -> None:
    assert "no such folder" in str(_error(tmp_path / "nope"))
    root = make_set(tmp_path / "set")
    err = _error(root / "golden.toml")
    assert "not a golden set folder" in str(err) and str(root) in err.fix


def test_unreadable_file_is_a_problem_not_a_traceback(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Tests may run as root, where chmod does not stop a read; refuse the read instead.
    root = make_set(tmp_path, tasks={"a.toml": task_data("a"), "b.toml": task_data("b")})
    real = Path.read_bytes

    def read_bytes(self: Path) -> bytes:
        if self.name == "b.toml":
            raise PermissionError(13, "Permission denied", str(self))
        return real(self)

    monkeypatch.setattr(Path, "read_bytes", read_bytes)
    err = _error(root)
    assert "b.toml: cannot be read: permission denied" in str(err) and "chmod" in str(err)


def test_every_problem_in_every_file_is_reported(tmp_path: Path) -> None:
    tasks = {
        "a.toml": task_data("a", input={"prompt": 3}, colour="red"),
        "b.json": "{broken",
        "c.toml": task_data("c", scorer={"kind": "nope"}),
        "d.toml": task_data("d"),
    }
    make_set(tmp_path, manifest=manifest_data(workload_id="bad id"), tasks=tasks)
    problems = validate_golden_set(tmp_path)
    where = [(p.file.name, p.field) for p in problems]
    assert where == [
        ("golden.toml", "workload_id"),
        ("a.toml", "input.prompt"),
        ("a.toml", "colour"),
        ("b.json", None),
        ("c.toml", "scorer.kind"),
    ]
    err = _error(tmp_path)
    assert err.problems == problems
    assert str(err).endswith("(and 4 more problems)")


def test_problem_and_error_format() -> None:
    problem = Problem(
        Path("set/tasks/a.toml"), "expected.tool_call.name", "expected a string, got 3.", "put the value in quotes"
    )
    assert (
        str(problem) == "set/tasks/a.toml: expected.tool_call.name: expected a string, got 3. Put the value in quotes."
    )
    whole = Problem(Path("set/golden.toml"), None, "invalid TOML:\n bad", "fix it.")
    assert str(whole) == "set/golden.toml: invalid TOML: bad. Fix it."
    err = GoldenSetError("x.toml", "id", "bad", "fix it")
    assert (err.file, err.field, err.message, err.fix) == (Path("x.toml"), "id", "bad", "fix it")
    assert err.problems == [Problem(Path("x.toml"), "id", "bad", "fix it")]
    again = pickle.loads(pickle.dumps(GoldenSetError.from_problems([problem, whole])))
    assert again.problems == [problem, whole] and str(again).endswith("(and 1 more problem)")


def test_folders_that_cannot_be_looked_at_are_problems(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    make_set(tmp_path / "sets" / "a")
    make_set(tmp_path / "sets" / "b")
    real = Path.is_dir

    def is_dir(self: Path) -> bool:
        if self.name in ("tasks", "b"):
            raise PermissionError(13, "Permission denied", str(self))
        return real(self)

    monkeypatch.setattr(Path, "is_dir", is_dir)
    assert discover_golden_sets(tmp_path / "sets") == [tmp_path / "sets" / "a"]
    err = _error(tmp_path / "sets" / "a")
    assert str(err).startswith(f"{tmp_path / 'sets' / 'a' / 'tasks'}: cannot be looked at")


def test_a_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    make_set(tmp_path, tasks={"a.toml": task_data("a")})
    os.mkfifo(tmp_path / "tasks" / "b.toml")
    assert "b.toml: is not a regular file" in str(_error(tmp_path))


def test_a_pathological_dotted_toml_key_is_refused_quickly(tmp_path):
    from compare_tui.goldset import GoldenSetError, load_golden_set
    from tests.goldset_factory import make_set

    root = make_set(tmp_path)
    (root / "tasks" / "evil.toml").write_text(".".join(["a"] * 100_000) + " = 1\n")
    with pytest.raises(GoldenSetError) as err:
        load_golden_set(root)
    assert "evil.toml" in str(err.value) and "dotted" in str(err.value)


@pytest.mark.parametrize(
    ("schema", "problem"),
    [
        ({"type": "object"}, None),  # no `$schema`: the latest draft
        ({"$schema": "http://json-schema.org/draft-07/schema#", "type": "object"}, None),
        ({"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "nonsense"}, "'nonsense' is not valid"),
        ({"$schema": "https://example.com/my-dialect", "type": "object"}, "is not a JSON Schema version"),
        ({"$schema": 5}, "its `$schema` ('5') is not a JSON Schema version"),
    ],
)
def test_a_json_scorer_schema_is_checked_under_the_dialect_it_names(schema, problem):
    from compare_tui.goldset.references import schema_problem

    found = schema_problem(schema)
    assert found is None if problem is None else (found is not None and problem in found), found

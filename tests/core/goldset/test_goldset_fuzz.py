"""Fuzzing the golden-set loader: whatever the files hold, it loads or raises GoldenSetError.

Examples per test default to 200 (seconds); set COMPARE_TUI_FUZZ_EXAMPLES for a soak run,
e.g. `COMPARE_TUI_FUZZ_EXAMPLES=20000 pytest tests/core/goldset/test_goldset_fuzz.py`.
"""

from __future__ import annotations

import copy
import json
import os
import tempfile
from pathlib import Path
from typing import Any

import tomli_w
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compare_tui.goldset import GoldenSetError, Task, load_golden_set, validate_golden_set
from compare_tui.goldset.digest import canonical_json
from tests.goldset_factory import make_set, manifest_data, task_data

FUZZ = settings(
    max_examples=int(os.environ.get("COMPARE_TUI_FUZZ_EXAMPLES", "200")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)

FIELD_NAMES = (
    "id tags input system prompt messages role content tools tool_choice response_format expected text json "
    "tool_call name arguments scorer kind normalize pattern mode flags schema fields match no_tool_call run "
    "timeout_s instructions workload_id version default_scorer attempts temperature max_tokens caveats "
    "tolerances type properties required $schema"
).split()
WORDS = (
    "exact",
    "regex",
    "json",
    "tool_call",
    "command",
    "human",
    "user",
    "search",
    "fullmatch",
    "case",
    "IGNORECASE",
    "check.py",
    "../check.py",
    "missing.sh",
    "schemas/s.json",
    "../s.json",
    "(",
    "a{99999999999}",
    "python3",
    "-c",
    "object",
    "string",
    "",
)
SCRIPT = "import sys\nsys.exit(0)\n"

keys = st.sampled_from(FIELD_NAMES) | st.text(max_size=6)
leaves = st.sampled_from(WORDS) | st.text(max_size=12) | st.integers() | st.floats() | st.booleans() | st.none()
values = st.recursive(
    leaves, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(keys, inner, max_size=5), max_leaves=15
)


def _containers(data: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [path] if isinstance(data, (dict, list)) else []
    children = data.items() if isinstance(data, dict) else enumerate(data) if isinstance(data, list) else ()
    for key, child in children:
        found += _containers(child, (*path, key))
    return found


@st.composite
def mutated(draw: st.DrawFn, base: dict[str, Any]) -> Any:
    """`base` after a few random edits: set a field (known or random name), delete one, append."""
    data: Any = copy.deepcopy(base)
    for _ in range(draw(st.integers(0, 4))):
        path = draw(st.sampled_from(_containers(data)))
        if not path and draw(st.integers(0, 20)) == 0:
            return draw(values)  # now and then a top level that is not a table at all
        node = data
        for key in path:
            node = node[key]
        if isinstance(node, list):
            node.append(draw(values))
        elif node and draw(st.booleans()):
            del node[draw(st.sampled_from(sorted(node, key=str)))]
        else:
            node[draw(keys)] = draw(values)
    return data


def _encode(data: Any, syntax: str) -> bytes:
    if syntax == "toml" and isinstance(data, dict):
        try:
            return tomli_w.dumps(data).encode()
        except (TypeError, ValueError):  # None has no TOML form; such data goes out as JSON
            pass
    return json.dumps(data, allow_nan=True).encode("utf-8", "surrogatepass")


def _check(root: Path) -> None:
    """The one property: a GoldenSet, or a GoldenSetError whose problems are all readable."""
    try:
        golden = load_golden_set(root)
    except GoldenSetError as err:
        assert err.problems
        for problem in err.problems:
            line = str(problem)
            assert line.startswith(f"{problem.file}: ") and "\n" not in line
        assert validate_golden_set(root) == err.problems
        return
    assert validate_golden_set(root) == []
    assert load_golden_set(root).digest == golden.digest
    for task in golden.tasks:  # what the store writes must read back as the same task
        dumped = task.model_dump(mode="json", by_alias=True)
        again = Task.model_validate(dumped).model_dump(mode="json", by_alias=True)
        assert canonical_json(again) == canonical_json(dumped)


def _with_set(build: Any) -> None:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder) / "set"
        build(root)
        _check(root)


@FUZZ
@given(
    raw=st.binary(max_size=300),
    suffix=st.sampled_from([".toml", ".json"]),
    where=st.sampled_from(["task", "manifest", "schema"]),
)
def test_random_bytes_load_or_raise_golden_set_error(raw: bytes, suffix: str, where: str) -> None:
    def build(root: Path) -> None:
        if where == "task":
            make_set(root, tasks={"a.toml": task_data("a"), "b" + suffix: raw})
        elif where == "manifest":
            make_set(root)
            (root / "golden.toml").write_bytes(raw)
        else:
            task = task_data("a", expected={"json": {}}, scorer={"kind": "json", "schema": "s.json"})
            make_set(root, tasks={"a.toml": task}, files={"s.json": raw})

    _with_set(build)


TOML_BITS = st.sampled_from(
    [
        'id = "a"',
        "[input]",
        'prompt = "p"',
        "[expected]",
        'text = "x"',
        "[scorer]",
        'kind = "regex"',
        'pattern = "("',
        "json = {a = 1}",
        "[[input.messages]]",
        'role = "user"',
        "x = [1, 2",
        '"""',
        "'",
        "=",
        "[",
        "]",
        "{",
        "}",
        ".",
        ",",
        "1979-05-27",
        "nan",
        "inf",
        "0x1F",
        "\\u0000",
        "#",
        " ",
        "\t",
    ]
)
toml_ish = st.lists(TOML_BITS | keys | st.text(max_size=4), max_size=30).map(
    lambda parts: "".join(p + ("\n" if i % 3 == 2 else " ") for i, p in enumerate(parts))
)


@FUZZ
@given(text=toml_ish, as_manifest=st.booleans())
def test_toml_ish_text_loads_or_raises_golden_set_error(text: str, as_manifest: bool) -> None:
    def build(root: Path) -> None:
        if as_manifest:
            make_set(root)
            (root / "golden.toml").write_text(text, encoding="utf-8", errors="surrogatepass")
        else:
            make_set(root, tasks={"a.toml": text.encode("utf-8", "surrogatepass")})

    _with_set(build)


TASK_BASES = [
    task_data("a"),
    task_data(
        "a", expected={"json": {"label": "x"}}, scorer={"kind": "json", "schema": "schemas/s.json", "fields": ["label"]}
    ),
    task_data("a", scorer={"kind": "command", "run": ["python3", "check.py"], "timeout_s": 5}),
    task_data(
        "a",
        input={"messages": [{"role": "user", "content": "hi"}]},
        expected={"tool_call": {"name": "f", "arguments": {"x": 1}}},
        scorer={"kind": "tool_call"},
    ),
    task_data("a", scorer={"kind": "regex", "pattern": "^b", "flags": ["IGNORECASE"]}),
]


@FUZZ
@given(task=st.sampled_from(TASK_BASES).flatmap(mutated), syntax=st.sampled_from(["toml", "json"]), twin=st.booleans())
def test_mutated_tasks_load_or_raise_golden_set_error(task: Any, syntax: str, twin: bool) -> None:
    def build(root: Path) -> None:
        tasks: dict[str, Any] = {f"a.{syntax}": _encode(task, syntax)}
        if twin:  # a second file with the same data: duplicate ids, when it has one
            tasks[f"b.{syntax}"] = _encode(task, syntax)
        files = {"check.py": SCRIPT, "schemas/s.json": '{"type": "object"}'}
        make_set(root, tasks=tasks, files=files)

    _with_set(build)


@FUZZ
@given(manifest=mutated(manifest_data(default_scorer={"kind": "json", "schema": "schemas/s.json"})))
def test_mutated_manifests_load_or_raise_golden_set_error(manifest: Any) -> None:
    def build(root: Path) -> None:
        task = task_data("a", expected={"json": {"label": "x"}})
        make_set(root, tasks={"a.json": task}, files={"schemas/s.json": '{"type": "object"}'})
        (root / "golden.toml").write_bytes(_encode(manifest, "toml"))

    _with_set(build)

"""The golden-set digest depends on what a set means, never on how it is written."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import tomli_w

from compare_tui.goldset import Manifest, Task, digest_golden_set, load_golden_set
from tests.goldset_factory import make_set, manifest_data, task_data

SCRIPTED = task_data("check-01", scorer={"kind": "command", "run": ["python3", "checks/check.py"]})
SCHEMA_TASK = task_data(
    "schema-01", expected={"json": {"label": "x"}}, scorer={"kind": "json", "schema": "schemas/s.json"}
)
FILES = {"checks/check.py": "import sys\nsys.exit(0)\n", "schemas/s.json": '{"type": "object"}'}


def _digest(root: Path) -> str:
    return load_golden_set(root).digest


def _base(root: Path, **changes: object) -> Path:
    tasks = {"a.toml": task_data("a"), "b.json": task_data("b"), "c.toml": SCRIPTED, "d.json": SCHEMA_TASK}
    args = {"tasks": tasks, "files": dict(FILES), **changes}
    return make_set(root, **args)  # type: ignore[arg-type]


def test_digest_is_sha256_of_the_canonical_form(tmp_path: Path) -> None:
    golden = load_golden_set(_base(tmp_path / "s"))
    assert golden.digest.startswith("sha256:") and len(golden.digest) == 71
    assert golden.digest == digest_golden_set(golden.manifest, golden.tasks, golden.files)


def test_toml_and_json_syntax_of_the_same_task_give_the_same_digest(tmp_path: Path) -> None:
    as_toml = _base(tmp_path / "t", tasks={"a.toml": task_data("a"), "c.toml": SCRIPTED, "d.toml": SCHEMA_TASK})
    as_json = _base(tmp_path / "j", tasks={"a.json": task_data("a"), "c.json": SCRIPTED, "d.json": SCHEMA_TASK})
    assert _digest(as_toml) == _digest(as_json)


def test_renaming_and_reordering_task_files_keeps_the_digest(tmp_path: Path) -> None:
    one = _base(tmp_path / "1")
    renamed = _base(
        tmp_path / "2",
        tasks={"zz.toml": task_data("a"), "00.json": task_data("b"), "m.toml": SCRIPTED, "k.json": SCHEMA_TASK},
    )
    assert _digest(one) == _digest(renamed)
    # The file order changes the order of `tasks`, but not the digest.
    assert [t.id for t in load_golden_set(renamed).tasks] != [t.id for t in load_golden_set(one).tasks]


def test_whitespace_comments_and_unrelated_files_keep_the_digest(tmp_path: Path) -> None:
    root = _base(tmp_path / "s")
    before = _digest(root)
    task = root / "tasks" / "a.toml"
    task.write_text("# a comment\n\n" + task.read_text().replace(" = ", "   =   ") + "\n\n")
    (root / "tasks" / "b.json").write_text(json.dumps(task_data("b")))  # no indentation now
    (root / "README.md").write_text("notes")
    (root / "golden.toml").write_text("# manifest\n" + tomli_w.dumps(manifest_data()))
    assert _digest(root) == before


def test_changing_a_prompt_the_manifest_or_a_referenced_file_changes_the_digest(tmp_path: Path) -> None:
    base = _digest(_base(tmp_path / "base"))
    prompt = _base(
        tmp_path / "prompt",
        tasks={
            "a.toml": task_data("a", input={"prompt": "other"}),
            "b.json": task_data("b"),
            "c.toml": SCRIPTED,
            "d.json": SCHEMA_TASK,
        },
    )
    caveat = _base(tmp_path / "caveat", manifest=manifest_data(caveats=["another"]))
    script = _base(tmp_path / "script", files={**FILES, "checks/check.py": "import sys\nsys.exit(1)\n"})
    schema = _base(tmp_path / "schema", files={**FILES, "schemas/s.json": '{"type": "object", "required": ["label"]}'})
    digests = [base, _digest(prompt), _digest(caveat), _digest(script), _digest(schema)]
    assert len(set(digests)) == len(digests)


def test_schema_whitespace_changes_the_file_hash(tmp_path: Path) -> None:
    # Referenced files are hashed byte for byte: the digest proves the exact file ran.
    a = _base(tmp_path / "a")
    b = _base(tmp_path / "b", files={**FILES, "schemas/s.json": '{ "type": "object" }'})
    assert _digest(a) != _digest(b)


def test_digest_is_independent_of_task_order() -> None:
    manifest = Manifest.model_validate(manifest_data())
    tasks = [Task.model_validate(task_data(f"t-{i}")) for i in range(4)]
    files = {"b.py": "1" * 64, "a.py": "2" * 64}
    digests = {digest_golden_set(manifest, order, files) for order in itertools.permutations(tasks)}
    digests.add(digest_golden_set(manifest, tasks, dict(reversed(list(files.items())))))
    assert len(digests) == 1


def test_lone_surrogates_hash_instead_of_crashing(tmp_path: Path) -> None:
    root = make_set(
        tmp_path, tasks={"a.json": '{"id": "a", "input": {"prompt": "\\ud800"}, "expected": {"text": "x"}}'}
    )
    assert load_golden_set(root).digest.startswith("sha256:")

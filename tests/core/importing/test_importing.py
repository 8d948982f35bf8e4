"""`sets import`: every format read from real files written here, round-tripped through the
golden-set loader; bad rows, id collisions, determinism, --limit/--seed, --scrub; Hypothesis on
CSV and JSONL quoting and Unicode."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compare_tui.cli import main
from compare_tui.goldset import load_golden_set, validate_golden_set
from compare_tui.importing import ImportingError, ImportOptions, import_set, write_imported_set

ROWS = [
    {"uid": "t-1", "question": "I was charged twice, help", "label": "billing", "meta": {"lang": "en"}},
    {"uid": "t-2", "question": 'App crashes on "save"\nwhen offline', "label": "bug", "meta": {"lang": "en"}},
    {"uid": "t-3", "question": "Réinitialiser mon mot de passe ✓", "label": "account", "meta": {"lang": "fr"}},
]


def _imported(source: Path, out: Path, **options) -> list:
    imported = import_set(source, ImportOptions(**options))
    write_imported_set(imported, out)
    assert validate_golden_set(out) == []
    return list(load_golden_set(out).tasks)


def _write_csv(path: Path, rows: list[dict], bom: bool = True) -> None:
    with path.open("w", encoding="utf-8-sig" if bom else "utf-8", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=["uid", "question", "label"])
        writer.writeheader()
        for row in rows:
            writer.writerow({k: row[k] for k in ("uid", "question", "label")})


def _check_rows(tasks: list) -> None:
    assert [t.id for t in tasks] == ["t-1", "t-2", "t-3"]
    assert [t.input.prompt for t in tasks] == [r["question"] for r in ROWS]
    assert [t.expected.text for t in tasks] == [r["label"] for r in ROWS]


def test_csv_with_bom_and_quoting_round_trips(tmp_path: Path) -> None:
    _write_csv(tmp_path / "t.csv", ROWS)
    tasks = _imported(
        tmp_path / "t.csv",
        tmp_path / "set",
        format="csv",
        id_column="uid",
        input_column="question",
        expected_column="label",
    )
    _check_rows(tasks)


def test_jsonl_nested_fields_by_dotted_path(tmp_path: Path) -> None:
    lines = [json.dumps({"req": {"text": r["question"]}, "out": {"label": r["label"]}, "uid": r["uid"]}) for r in ROWS]
    (tmp_path / "t.jsonl").write_text("\n".join(lines) + "\n\n", encoding="utf-8")
    tasks = _imported(
        tmp_path / "t.jsonl",
        tmp_path / "set",
        format="jsonl",
        id_column="uid",
        input_column="req.text",
        expected_column="out.label",
    )
    _check_rows(tasks)


def test_parquet_round_trips(tmp_path: Path) -> None:
    pq.write_table(pa.Table.from_pylist(ROWS), tmp_path / "t.parquet")
    tasks = _imported(
        tmp_path / "t.parquet",
        tmp_path / "set",
        format="parquet",
        id_column="uid",
        input_column="question",
        expected_column="label",
    )
    _check_rows(tasks)
    assert tasks[0].expected.text == "billing"


def _save_to_disk(folder: Path, rows: list[dict]) -> None:
    """The layout `datasets.Dataset.save_to_disk` writes: Arrow IPC stream files + state.json."""
    folder.mkdir(parents=True)
    table = pa.Table.from_pylist(rows)
    with pa.OSFile(str(folder / "data-00000-of-00001.arrow"), "wb") as sink:
        with pa.ipc.new_stream(sink, table.schema) as writer:
            writer.write_table(table, max_chunksize=2)
    (folder / "state.json").write_text(
        json.dumps({"_data_files": [{"filename": "data-00000-of-00001.arrow"}], "_split": None}), encoding="utf-8"
    )
    (folder / "dataset_info.json").write_text("{}", encoding="utf-8")


def test_hf_saved_dataset_and_dataset_dict(tmp_path: Path) -> None:
    _save_to_disk(tmp_path / "ds", ROWS)
    tasks = _imported(
        tmp_path / "ds",
        tmp_path / "set",
        format="hf",
        id_column="uid",
        input_column="question",
        expected_column="label",
    )
    _check_rows(tasks)
    _save_to_disk(tmp_path / "dd" / "test", ROWS)
    (tmp_path / "dd" / "dataset_dict.json").write_text(json.dumps({"splits": ["test"]}), encoding="utf-8")
    with pytest.raises(ImportingError, match="--split"):
        import_set(tmp_path / "dd", ImportOptions(format="hf", input_column="question", expected_column="label"))
    tasks = _imported(
        tmp_path / "dd", tmp_path / "set2", format="hf", split="test", input_column="question", expected_column="label"
    )
    assert [t.id for t in tasks] == ["row-0001", "row-0002", "row-0003"]


def test_inspect_jsonl(tmp_path: Path) -> None:
    samples = [
        {"id": "a1", "input": "2+2?", "target": "4", "metadata": {"k": 1}},
        {
            "id": "a2",
            "input": [{"role": "system", "content": "Be short."}, {"role": "user", "content": "Capital of France?"}],
            "target": ["Paris", "paris"],
        },
    ]
    (tmp_path / "s.jsonl").write_text("".join(json.dumps(s) + "\n" for s in samples), encoding="utf-8")
    tasks = _imported(tmp_path / "s.jsonl", tmp_path / "set", format="inspect")
    assert tasks[0].input.prompt == "2+2?" and tasks[0].expected.text == "4"
    assert tasks[1].input.messages is not None and tasks[1].input.messages[1].content == "Capital of France?"
    assert tasks[1].scorer is not None and tasks[1].scorer.kind == "regex"
    assert tasks[1].scorer.compiled().fullmatch("paris")


PROMPTFOO = """\
prompts:
  - "Classify this ticket: {{ text }}. Answer with one word."
defaultTest:
  vars:
    text: default
tests:
  - vars: {text: "charged twice"}
    assert:
      - type: equals
        value: billing
      - type: llm-rubric
        value: is polite
  - vars: {text: "crash"}
    assert:
      - type: contains
        value: "bug (crash)"
  - vars: {text: "CRASH"}
    assert:
      - type: icontains
        value: BUG
  - vars: {text: "account"}
    assert:
      - type: regex
        value: "^acc(ount)?$"
  - vars: {text: "json"}
    assert:
      - type: is-json
        value: {type: object, required: [label]}
  - vars: {text: "json anywhere"}
    assert:
      - type: contains-json
  - vars: {text: "object"}
    assert:
      - type: equals
        value: {label: billing}
  - vars: {text: "other"}
    assert:
      - type: javascript
        value: "output.length < 10"
      - type: similar
        value: "bug"
      - type: not-contains
        value: "sorry"
"""


def test_promptfoo_every_assert_kind(tmp_path: Path) -> None:
    (tmp_path / "promptfooconfig.yaml").write_text(PROMPTFOO, encoding="utf-8")
    with pytest.raises(ImportingError) as refused:
        import_set(tmp_path / "promptfooconfig.yaml", ImportOptions(format="promptfoo"))
    assert "row 8, column 'assert'" in str(refused.value) and "javascript, similar, not-contains" in str(refused.value)
    imported = import_set(tmp_path / "promptfooconfig.yaml", ImportOptions(format="promptfoo", skip_bad_rows=True))
    write_imported_set(imported, tmp_path / "set")
    tasks = load_golden_set(tmp_path / "set").tasks
    kinds = [(t.scorer.kind if t.scorer else None) for t in tasks]
    assert kinds == ["exact", "regex", "regex", "regex", "json", "json", "json"]
    assert tasks[0].input.prompt == "Classify this ticket: charged twice. Answer with one word."
    assert tasks[1].scorer.compiled().search("a bug (crash) here")
    assert tasks[2].scorer.compiled().search("its a bug")
    assert tasks[4].scorer.schema_ == {"type": "object", "required": ["label"]}
    assert tasks[6].scorer.fields == ["label"] and tasks[6].expected.json_ == {"label": "billing"}
    assert imported.info["not_imported"] == {"row-0001": ["llm-rubric"]}
    assert imported.info["skipped"][0]["row"] == 8


def test_bad_rows_are_listed_and_nothing_is_written(tmp_path: Path, capsys) -> None:
    rows = ROWS + [
        {"uid": "t-1", "question": "dup", "label": "x"},
        {"uid": "bad id!", "question": "q", "label": "x"},
        {"uid": "t-9", "question": " ", "label": "x"},
    ]
    _write_csv(tmp_path / "t.csv", rows)
    out = tmp_path / "set"
    argv = ["sets", "import", str(tmp_path / "t.csv"), "--out", str(out)]
    argv += ["--id-column", "uid", "--input-column", "question", "--expected-column", "label"]
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 2 and not out.exists()
    # Rows as the spreadsheet numbers them: the header is row 1.
    assert "row 5, column 'uid': id 't-1' is also row 2's" in err
    assert "row 6, column 'uid'" in err and "row 7, column 'question': empty input" in err
    code = main([*argv, "--skip-bad-rows"])
    assert code == 0
    info = json.loads((out / "import.json").read_text(encoding="utf-8"))
    assert [s["row"] for s in info["skipped"]] == [5, 6, 7]
    assert len(load_golden_set(out).tasks) == 3


def test_ids_differing_only_in_case_collide(tmp_path: Path) -> None:
    _write_csv(
        tmp_path / "t.csv", [{"uid": "A", "question": "q", "label": "x"}, {"uid": "a", "question": "q", "label": "x"}]
    )
    with pytest.raises(ImportingError, match="differing only in case"):
        import_set(
            tmp_path / "t.csv",
            ImportOptions(format="csv", id_column="uid", input_column="question", expected_column="label"),
        )


def _folder_bytes(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_deterministic_byte_for_byte_with_limit_and_seed(tmp_path: Path) -> None:
    rows = [{"uid": f"t-{i}", "question": f"q {i}", "label": str(i % 3)} for i in range(50)]
    _write_csv(tmp_path / "t.csv", rows)
    args = [
        "sets",
        "import",
        str(tmp_path / "t.csv"),
        "--input-column",
        "question",
        "--expected-column",
        "label",
        "--limit",
        "10",
        "--seed",
        "7",
    ]
    assert main([*args, "--out", str(tmp_path / "a")]) == 0
    assert main([*args, "--out", str(tmp_path / "b")]) == 0
    assert _folder_bytes(tmp_path / "a") == _folder_bytes(tmp_path / "b")
    ids = [t.id for t in load_golden_set(tmp_path / "a").tasks]
    assert len(ids) == 10 and ids != [f"row-{i:04d}" for i in range(2, 12)]
    assert main([*args[:-1], "8", "--out", str(tmp_path / "c")]) == 0
    assert [t.id for t in load_golden_set(tmp_path / "c").tasks] != ids


def test_scrub_redacts_and_counts(tmp_path: Path) -> None:
    _write_csv(tmp_path / "t.csv", [{"uid": "s", "question": "mail me at jo@example.com", "label": "ok"}])
    imported = import_set(
        tmp_path / "t.csv", ImportOptions(format="csv", input_column="question", expected_column="label", scrub=True)
    )
    assert "jo@example.com" not in json.dumps(imported.tasks) and imported.info["redaction"]["replaced"] == {"email": 1}


def test_json_and_tool_call_scorers(tmp_path: Path) -> None:
    rows = [{"prompt": "p", "expected": {"name": "get", "arguments": {"id": 1}}}]
    (tmp_path / "t.jsonl").write_text(json.dumps(rows[0]) + "\n", encoding="utf-8")
    tasks = _imported(tmp_path / "t.jsonl", tmp_path / "a", format="jsonl", scorer="tool_call")
    assert tasks[0].expected.tool_call is not None and tasks[0].expected.tool_call.arguments == {"id": 1}
    tasks = _imported(tmp_path / "t.jsonl", tmp_path / "b", format="jsonl", scorer="json")
    assert tasks[0].expected.json_ == rows[0]["expected"]
    tasks = _imported(tmp_path / "t.jsonl", tmp_path / "c", format="jsonl", scorer="json_schema")
    assert load_golden_set(tmp_path / "c").scorer_for(tasks[0]).schema_ == rows[0]["expected"]


TEXT = st.text(
    st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), min_size=1, max_size=40
).filter(lambda s: s.strip() != "")


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cells=st.lists(st.tuples(TEXT, TEXT), min_size=1, max_size=6))
def test_csv_quoting_and_unicode_survive(tmp_path_factory, cells) -> None:
    folder = tmp_path_factory.mktemp("h")
    with (folder / "t.csv").open("w", encoding="utf-8", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["prompt", "expected"])
        writer.writerows(cells)
    tasks = _imported(folder / "t.csv", folder / "set", format="csv")
    assert [(t.input.prompt, t.expected.text) for t in tasks] == cells


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cells=st.lists(st.tuples(TEXT, TEXT), min_size=1, max_size=6), ascii_only=st.booleans())
def test_jsonl_quoting_and_unicode_survive(tmp_path_factory, cells, ascii_only) -> None:
    folder = tmp_path_factory.mktemp("h")
    text = "".join(json.dumps({"prompt": p, "expected": e}, ensure_ascii=ascii_only) + "\n" for p, e in cells)
    (folder / "t.jsonl").write_text(text, encoding="utf-8")
    tasks = _imported(folder / "t.jsonl", folder / "set", format="jsonl")
    assert [(t.input.prompt, t.expected.text) for t in tasks] == cells


def test_a_column_no_row_has_is_one_line_naming_the_columns(tmp_path: Path) -> None:
    _write_csv(tmp_path / "t.csv", ROWS)
    with pytest.raises(ImportingError) as refused:
        import_set(tmp_path / "t.csv", ImportOptions(format="csv", expected_column="label"))
    assert "no row has a column 'prompt'" in str(refused.value)
    assert "the first row's columns are: uid, question, label" in str(refused.value)


def test_a_csv_field_longer_than_the_csv_modules_default_limit(tmp_path: Path) -> None:
    long = "x" * 300_000
    _write_csv(tmp_path / "t.csv", [{"uid": "a", "question": long, "label": "y"}])
    tasks = _imported(
        tmp_path / "t.csv", tmp_path / "set", format="csv", input_column="question", expected_column="label"
    )
    assert tasks[0].input.prompt == long


@pytest.mark.parametrize("scorer", ["exact", "regex"])
def test_a_blank_expected_cell_is_a_bad_row_not_a_task(tmp_path: Path, scorer: str) -> None:
    # A CSV's blank cell is its missing value: kept, an exact task would pass no answer and a
    # regex task (pattern "") every answer.
    (tmp_path / "t.csv").write_text('prompt,expected\n"Say yes",yes\n"Bad row",\n"Blank too","  "\n', encoding="utf-8")
    with pytest.raises(ImportingError) as refused:
        import_set(tmp_path / "t.csv", ImportOptions(format="csv", scorer=scorer))
    assert "row 3, column 'expected': empty expected value" in str(refused.value)
    assert "row 4, column 'expected': empty expected value" in str(refused.value)
    imported = import_set(tmp_path / "t.csv", ImportOptions(format="csv", scorer=scorer, skip_bad_rows=True))
    write_imported_set(imported, tmp_path / "set")
    assert [t.id for t in load_golden_set(tmp_path / "set").tasks] == ["row-0002"]

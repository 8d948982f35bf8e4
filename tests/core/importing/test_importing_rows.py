"""`sets import` as a spreadsheet user meets it: the delimiter told from the header (a European
export is semicolon-delimited), one row numbering (the spreadsheet's) in every message and id,
blank rows named, and a list in an expected column only where a list of targets is the
convention (inspect)."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compare_tui.cli import main
from compare_tui.goldset import load_golden_set
from compare_tui.importing import ImportingError, ImportOptions, import_set, write_imported_set

# A semicolon export as a spreadsheet writes it where the comma is the decimal separator: a
# byte-order mark, commas inside the prompts, a blank row (row 4) and a duplicate id (row 6,
# the id of row 3), and a cell with a line break (still one row: row 7).
EXPORT = (
    "\ufeffid;question;label\r\n"
    't-1;"I was charged twice, help";billing\r\n'
    "t-2;App crashes on save, when offline;bug\r\n"
    ";;\r\n"
    "t-3;Réinitialiser mon mot de passe;account\r\n"
    "t-2;Refund please, order 5512;billing\r\n"
    't-4;"Two lines,\r\nstill one row";bug\r\n'
)
COLUMNS = ["--id-column", "id", "--input-column", "question", "--expected-column", "label"]


def _options(**extra) -> ImportOptions:
    return ImportOptions(format="csv", id_column="id", input_column="question", expected_column="label", **extra)


def _import(tmp_path: Path, capsys, *args: str) -> tuple[int, str, str]:
    code = main(["sets", "import", *args])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_a_semicolon_export_imports_without_being_told(tmp_path: Path, capsys) -> None:
    (tmp_path / "tickets.csv").write_text(EXPORT, encoding="utf-8")
    out = tmp_path / "set"
    code, stdout, stderr = _import(
        tmp_path, capsys, str(tmp_path / "tickets.csv"), "--out", str(out), *COLUMNS, "--skip-bad-rows"
    )
    assert code == 0, stderr
    tasks = load_golden_set(out).tasks
    assert [t.id for t in tasks] == ["t-1", "t-2", "t-3", "t-4"]
    assert tasks[0].input.prompt == "I was charged twice, help"
    assert tasks[3].input.prompt == "Two lines,\r\nstill one row"
    assert "(csv, semicolon-delimited)" in stdout
    assert json.loads((out / "import.json").read_text(encoding="utf-8"))["options"]["delimiter"] == ";"


def test_one_numbering_the_spreadsheets_with_the_blank_row_named(tmp_path: Path, capsys) -> None:
    (tmp_path / "tickets.csv").write_text(EXPORT, encoding="utf-8")
    out = tmp_path / "set"
    code, _, stderr = _import(tmp_path, capsys, str(tmp_path / "tickets.csv"), "--out", str(out), *COLUMNS)
    assert code == 2 and not out.exists()
    # The header is row 1: the duplicate is the spreadsheet's row 6, its first use row 3.
    assert "row 6, column 'id': id 't-2' is also row 3's" in stderr
    code, stdout, _ = _import(
        tmp_path, capsys, str(tmp_path / "tickets.csv"), "--out", str(out), *COLUMNS, "--skip-bad-rows"
    )
    assert code == 0
    lines = stdout.splitlines()
    assert lines[0].endswith("4 tasks from 5 rows of tickets.csv (csv, semicolon-delimited)")
    assert "left out 1 blank row: row 4" in lines
    assert (
        "skipped 1 bad row" in lines[2]
        and lines[3] == "  row 6, column 'id': id 't-2' is also row 3's; ids must be unique"
    )
    info = json.loads((out / "import.json").read_text(encoding="utf-8"))
    assert info["counts"] == {"rows": 5, "tasks": 4, "bad_rows": 1, "blank_rows": 1, "left_out_by_limit": 0}
    assert info["blank_rows"] == [4]
    assert [t["row"] for t in info["tasks"]] == [2, 3, 5, 7]


def test_row_number_ids_are_the_spreadsheets_rows(tmp_path: Path) -> None:
    (tmp_path / "t.csv").write_text("prompt,expected\nfirst,a\n\n,\nfourth? no: fifth,b\n", encoding="utf-8")
    imported = import_set(tmp_path / "t.csv", ImportOptions(format="csv"))
    assert [t["id"] for t in imported.tasks] == ["row-0002", "row-0005"]
    assert imported.info["blank_rows"] == [3, 4]


def test_jsonl_rows_are_its_lines_and_a_blank_line_is_named(tmp_path: Path) -> None:
    lines = ['{"prompt": "a", "expected": "x"}', "", '{"prompt": "b", "expected": "y"}', "[1]"]
    (tmp_path / "t.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    imported = import_set(tmp_path / "t.jsonl", ImportOptions(format="jsonl", skip_bad_rows=True))
    assert [t["id"] for t in imported.tasks] == ["row-0001", "row-0003"]
    assert imported.info["blank_rows"] == [2]
    assert imported.info["skipped"] == [{"row": 4, "column": "", "reason": "a JSON list, not an object"}]


@pytest.mark.parametrize(("delimiter", "name"), [("\t", "tab"), ("|", "pipe"), (",", "comma")])
def test_tab_pipe_and_comma_are_told_from_the_header(tmp_path: Path, delimiter: str, name: str) -> None:
    rows = [["id", "question", "label"], ["a", "one, two; three | four", "x"], ["b", "tab\there", "y"]]
    buffer = io.StringIO()
    csv.writer(buffer, delimiter=delimiter).writerows(rows)
    (tmp_path / "t.csv").write_text(buffer.getvalue(), encoding="utf-8")
    imported = import_set(tmp_path / "t.csv", _options())
    assert [t["input"]["prompt"] for t in imported.tasks] == ["one, two; three | four", "tab\there"]
    assert imported.info["options"].get("delimiter", ",") == delimiter


def test_excels_separator_line_names_the_delimiter_and_is_no_row(tmp_path: Path) -> None:
    (tmp_path / "t.csv").write_text("sep=;\r\n" + EXPORT.lstrip("\ufeff"), encoding="utf-8")
    imported = import_set(tmp_path / "t.csv", _options(skip_bad_rows=True))
    assert [t["id"] for t in imported.tasks] == ["t-1", "t-2", "t-3", "t-4"]
    assert imported.info["blank_rows"] == [4]  # Excel shows no row for `sep=;`: the header is row 1


def test_a_header_read_as_one_column_holding_a_semicolon_says_so(tmp_path: Path) -> None:
    (tmp_path / "t.csv").write_text(EXPORT, encoding="utf-8")
    with pytest.raises(ImportingError) as refused:
        import_set(tmp_path / "t.csv", _options(delimiter=","))
    message = str(refused.value)
    assert "the header is one column, 'id;question;label', holding a semicolon" in message
    assert "pass --delimiter ';'" in message
    assert "row" not in message.split("holding", 1)[0]  # one line about the file, not one a row


def test_delimiter_option_from_the_command_line(tmp_path: Path, capsys) -> None:
    (tmp_path / "t.csv").write_text("prompt\texpected\nsay hi\thi\n", encoding="utf-8")
    code, stdout, stderr = _import(
        tmp_path, capsys, str(tmp_path / "t.csv"), "--out", str(tmp_path / "s"), "--delimiter", "tab"
    )
    assert code == 0, stderr
    assert "(csv, tab-delimited)" in stdout
    code, _, stderr = _import(
        tmp_path, capsys, str(tmp_path / "t.csv"), "--out", str(tmp_path / "s2"), "--delimiter", ";;"
    )
    assert code == 2 and "--delimiter ';;': give one character" in stderr
    (tmp_path / "t.jsonl").write_text('{"prompt": "a", "expected": "b"}\n', encoding="utf-8")
    code, _, stderr = _import(
        tmp_path, capsys, str(tmp_path / "t.jsonl"), "--out", str(tmp_path / "s3"), "--delimiter", ";"
    )
    assert code == 2 and "--delimiter is a CSV's" in stderr


def test_an_import_that_reads_as_before_keeps_its_version(tmp_path: Path) -> None:
    """A comma CSV with an id column reads as it did before delimiters were told from the
    header: same tasks, same pin (docs/first-run.md prints this one), no new workload version."""
    (tmp_path / "tickets.csv").write_text(
        "id,question,label\n"
        't1,"My card was charged twice for order 1182. Label this ticket: billing, shipping or account.",billing\n'
        't2,"The parcel for order 5521 has not arrived after two weeks. Label this ticket: billing, shipping or account.",shipping\n'
        't3,"I cannot log in since I changed my email address. Label this ticket: billing, shipping or account.",account\n',
        encoding="utf-8",
    )
    imported = import_set(tmp_path / "tickets.csv", _options(normalize=("case",)))
    assert imported.manifest["version"] == "import-12ce0dfa49a9"
    assert "delimiter" not in imported.info["options"]
    (tmp_path / "t.jsonl").write_text('{"prompt": "a", "expected": "b"}\n', encoding="utf-8")
    assert "delimiter" not in import_set(tmp_path / "t.jsonl", ImportOptions(format="jsonl")).info["options"]


CELL = st.text(
    st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), min_size=1, max_size=30
).filter(lambda s: s.strip() != "")


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(delimiter=st.sampled_from([",", ";", "\t", "|"]), cells=st.lists(st.tuples(CELL, CELL), min_size=1, max_size=5))
def test_any_cells_survive_any_delimiter_told_from_the_header(tmp_path_factory, delimiter, cells) -> None:
    """Prompts full of the other delimiters, quotes and line breaks cannot sway the header's reading."""
    folder = tmp_path_factory.mktemp("d")
    buffer = io.StringIO()
    writer = csv.writer(buffer, delimiter=delimiter)
    writer.writerow(["prompt", "expected"])
    writer.writerows(cells)
    (folder / "t.csv").write_text(buffer.getvalue(), encoding="utf-8", newline="")
    imported = import_set(folder / "t.csv", ImportOptions(format="csv"))
    got = [(t["input"]["prompt"], t["expected"]["text"]) for t in imported.tasks]
    assert got == [(p, e) for p, e in cells]
    assert imported.info["options"].get("delimiter", ",") == delimiter


def test_a_json_list_expected_value_is_refused_outside_inspect(tmp_path: Path) -> None:
    (tmp_path / "t.jsonl").write_text(
        '{"prompt": "capital of France?", "expected": ["Paris", "paris"]}\n', encoding="utf-8"
    )
    with pytest.raises(ImportingError) as refused:
        import_set(tmp_path / "t.jsonl", ImportOptions(format="jsonl"))
    assert "row 1, column 'expected': the expected is a JSON list, not text" in str(refused.value)
    assert "with --format inspect any of them passes" in str(refused.value)


def test_inspect_targets_are_any_of_and_never_silently_unnormalised(tmp_path: Path) -> None:
    (tmp_path / "s.jsonl").write_text(
        '{"id": "q1", "input": "capital of France?", "target": ["Paris", "Paris, France"]}\n', encoding="utf-8"
    )
    imported = import_set(tmp_path / "s.jsonl", ImportOptions(format="inspect"))
    write_imported_set(imported, tmp_path / "set")
    scorer = load_golden_set(tmp_path / "set").manifest.default_scorer
    assert scorer.kind == "regex" and scorer.mode == "fullmatch"
    assert scorer.compiled().fullmatch("Paris, France") and not scorer.compiled().fullmatch("paris")
    with pytest.raises(ImportingError) as refused:
        import_set(tmp_path / "s.jsonl", ImportOptions(format="inspect", normalize=("case",)))
    assert "--normalize cannot apply to it" in str(refused.value)

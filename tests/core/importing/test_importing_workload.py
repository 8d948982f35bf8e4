"""`sets import` and the store: a workload id taken from the file name that the store already
holds for another set (another digest) is refused, nothing written, until `--workload-id`
says which workload the set belongs to; baselines and promotions never mix unasked."""

from __future__ import annotations

from pathlib import Path

import pytest

from compare_tui.cli import main
from compare_tui.goldset import load_golden_set
from compare_tui.importing import ImportOptions, import_set, imported_digest, write_imported_set
from compare_tui.store import Store
from compare_tui.store.decisions import DecisionRecord
from compare_tui.store.records import RunRecord

OTHER = "sha256:" + "ab" * 32


def _csv(path: Path, label: str = "billing") -> Path:
    path.write_text(f"prompt,expected\nI was charged twice,{label}\n", encoding="utf-8")
    return path


def _import(capsys, source: Path, out: Path, store: Path | None, *extra: str) -> tuple[int, str, str]:
    given = ["--store", str(store)] if store is not None else []
    code = main(["sets", "import", str(source), "--out", str(out), *given, *extra])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture
def store_with_tickets(tmp_path: Path) -> Path:
    """A store holding two runs of workload `tickets` from another set (another digest)."""
    path = tmp_path / "runs.sqlite"
    with Store.open(path) as store:
        for model in ("gemma3-270m", "smollm2-135m"):
            store.create_run(
                RunRecord(
                    goldset_id="tickets",
                    goldset_name="Imported from tickets.csv",
                    goldset_version="import-0123456789ab",
                    goldset_digest=OTHER,
                    model_name=model,
                )
            )
    return path


def test_a_file_name_workload_the_store_holds_for_another_set_is_refused(tmp_path, capsys, store_with_tickets):
    source = _csv(tmp_path / "tickets.csv")
    out = tmp_path / "sets" / "tickets"
    code, stdout, stderr = _import(capsys, source, out, store_with_tickets)
    assert code == 2 and not out.exists()
    assert "workload 'tickets', taken from the file name tickets.csv, is already in the store" in stderr
    assert "2 runs of 'Imported from tickets.csv' import-0123456789ab (digest sha256:abababababab…)" in stderr
    assert "--workload-id tickets to make this set that workload's new version" in stderr
    assert "--workload-id ANOTHER-ID to keep it apart" in stderr


def test_workload_id_given_joins_the_workload_with_a_note(tmp_path, capsys, store_with_tickets):
    source = _csv(tmp_path / "tickets.csv")
    out = tmp_path / "sets" / "tickets"
    code, stdout, stderr = _import(capsys, source, out, store_with_tickets, "--workload-id", "tickets")
    assert code == 0, stderr
    assert "workload 'tickets': this set" in stderr and "shares their baseline and promotions" in stderr
    assert load_golden_set(out).manifest.workload_id == "tickets"
    code, _, stderr = _import(capsys, source, tmp_path / "apart", store_with_tickets, "--workload-id", "tickets-eu")
    assert code == 0 and stderr == ""


def test_the_same_set_again_and_an_empty_store_are_not_collisions(tmp_path, capsys, monkeypatch):
    source = _csv(tmp_path / "tickets.csv")
    store = tmp_path / "runs.sqlite"
    monkeypatch.setenv("COMPARE_TUI_STORE", str(store))
    code, _, stderr = _import(capsys, source, tmp_path / "first", None)  # no store yet: nothing to collide with
    assert code == 0, stderr
    assert not store.exists()  # an import never creates a store
    code, _, stderr = _import(capsys, source, tmp_path / "typo", tmp_path / "runs.sqlit")
    assert code == 2 and "no store at" in stderr  # a mistyped --store is not an empty one
    digest = load_golden_set(tmp_path / "first").digest
    with Store.open(store) as opened:
        opened.create_run(RunRecord(goldset_id="tickets", goldset_digest=digest, model_name="m"))
    code, _, stderr = _import(capsys, source, tmp_path / "again", store)
    assert code == 0 and stderr == ""


def test_a_promotion_of_another_set_is_a_collision_too(tmp_path, capsys):
    store = tmp_path / "runs.sqlite"
    with Store.open(store) as opened:
        opened.record_decision(
            DecisionRecord(workload_id="tickets", model="gemma3-270m", goldset_digest=OTHER, kind="initial")
        )
    code, _, stderr = _import(capsys, _csv(tmp_path / "tickets.csv"), tmp_path / "set", store)
    assert code == 2 and "1 promotion" in stderr


def test_the_digest_known_before_writing_is_the_written_sets(tmp_path: Path) -> None:
    """The check compares the digest the set will have; a command scorer's script counts."""
    source = _csv(tmp_path / "t.csv")
    out = tmp_path / "set"
    out.mkdir()
    (out / "check.py").write_text("print('pass')\n", encoding="utf-8")
    imported = import_set(source, ImportOptions(format="csv", scorer="command", command=("python3", "check.py")))
    before = imported_digest(imported, out)
    (out / "golden.toml").write_text("", encoding="utf-8")  # let --force reuse the folder holding check.py
    write_imported_set(imported, out, force=True)
    assert before == load_golden_set(out).digest
    plain = import_set(source, ImportOptions(format="csv"))
    write_imported_set(plain, tmp_path / "plain")
    assert imported_digest(plain, tmp_path / "plain") == load_golden_set(tmp_path / "plain").digest

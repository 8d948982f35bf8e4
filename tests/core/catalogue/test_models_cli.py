"""`models list | show | verify | remove`, refusals naming their fix, and comments kept through
add/replace/remove (golden files in tests/golden/)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from compare_tui.catalogue import ModelEntry, ModelRefused, combined_digest, load_catalogue, verify_weights
from compare_tui.catalogue.adding import AddRequest, add_model
from compare_tui.catalogue.editing import read_for_edit, save, with_entry, without_entry
from compare_tui.cli import main
from tests.support.scripted_stacks import ScriptedServer, llama_cpp_routes

GOLDEN = Path(__file__).parents[2] / "golden"


@pytest.fixture
def catalogue(tmp_path: Path) -> tuple[Path, Path]:
    folder = tmp_path / "weights"
    folder.mkdir()
    (folder / "tiny.gguf").write_bytes(b"GGUF" + b"\x01" * 4096)
    (folder / "vocab.bin").write_bytes(b"vocab")
    path = tmp_path / "models.toml"
    with ScriptedServer(llama_cpp_routes("tiny")) as server:
        add_model(
            AddRequest(name="tiny", endpoint=server.url, weights_dir=folder, revision="v1", usd_per_hour=0.5), path
        )
        add_model(
            AddRequest(
                name="gone",
                endpoint=server.url,
                model="tiny",
                weights=(folder / "tiny.gguf", folder / "vocab.bin"),
                revision="v1",
                usd_per_hour=0.5,
            ),
            path,
        )
    return path, folder


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_list_says_whether_a_run_would_be_refused(catalogue, capsys):
    path, folder = catalogue
    code, out, _ = run(capsys, "models", "list", "--json", "--models", str(path))
    rows = {r["name"]: r for r in json.loads(out)}
    assert code == 0 and rows["tiny"]["ready"] and rows["tiny"]["files"] == 2
    assert rows["tiny"]["cost"] == "hardware $0.5/h"
    (folder / "extra.safetensors").write_bytes(b"x")
    code, out, _ = run(capsys, "models", "list", "--json", "--models", str(path))
    rows = {r["name"]: r for r in json.loads(out)}
    assert not rows["tiny"]["ready"] and "extra: extra.safetensors" in rows["tiny"]["reasons"][0]
    code, out, _ = run(capsys, "models", "list", "--models", str(path))
    assert code == 0 and "tiny" in out and "refused" in out


def test_show_prints_the_entry_and_its_readiness(catalogue, capsys):
    path, _ = catalogue
    code, out, _ = run(capsys, "models", "show", "tiny", "--models", str(path))
    assert code == 0 and 'name = "tiny"' in out and "[model.files]" in out and "# run: ready" in out
    code, out, _ = run(capsys, "models", "show", "tiny", "--json", "--models", str(path))
    assert json.loads(out)["entry"]["revision"] == "v1"
    code, _, err = run(capsys, "models", "show", "nope", "--models", str(path))
    assert code == 2 and "unknown model 'nope'" in err and "models add nope" in err


def test_verify_matches_then_names_each_changed_missing_and_extra_file(catalogue, capsys):
    path, folder = catalogue
    code, out, _ = run(capsys, "models", "verify", "tiny", "--models", str(path))
    assert code == 0 and "tiny: verified, 2 file(s)" in out
    data = bytearray((folder / "tiny.gguf").read_bytes())
    data[100] ^= 0x01  # one byte
    (folder / "tiny.gguf").write_bytes(bytes(data))
    code, out, err = run(capsys, "models", "verify", "tiny", "--models", str(path))
    assert code == 1 and "tiny: DRIFT" in out and "changed: tiny.gguf" in out and "models add" in err
    (folder / "vocab.bin").unlink()
    (folder / "new.pt").write_bytes(b"n")
    code, out, _ = run(capsys, "models", "verify", "--all", "--models", str(path))
    assert code == 1
    assert "changed: tiny.gguf" in out and "missing: vocab.bin" in out and "extra: new.pt" in out
    assert out.count("DRIFT") == 2


def test_refusals_name_the_command_that_fixes_them(catalogue):
    path, folder = catalogue
    entry = load_catalogue(path).get("tiny")
    (folder / "tiny.gguf").write_bytes(b"other")
    with pytest.raises(ModelRefused) as info:
        verify_weights(entry)
    assert "compare-tui models verify tiny" in str(info.value)
    assert f"compare-tui models add tiny --endpoint {entry.endpoint} --weights-dir {folder}" in str(info.value)
    unpinned = entry.model_copy(update={"files": {}, "weights_digest": None})
    with pytest.raises(ModelRefused, match="compare-tui models add tiny"):
        verify_weights(unpinned)


def test_remove(catalogue, capsys):
    path, _ = catalogue
    code, out, _ = run(capsys, "models", "remove", "gone", "--models", str(path))
    assert code == 0 and load_catalogue(path).names() == ["tiny"]
    code, _, err = run(capsys, "models", "remove", "gone", "--models", str(path))
    assert code == 2 and "no model named 'gone'" in err and "tiny" in err
    code, _, err = run(capsys, "models", "remove", "tiny", "--models", str(path))
    assert code == 2 and "only model" in err and load_catalogue(path).names() == ["tiny"]


# ---------------------------------------------------------------- golden files: comments survive edits


def fixed_entry(name: str, revision: str = "v1") -> ModelEntry:
    files = {"model.gguf": "sha256:" + "a" * 64}
    return ModelEntry.model_validate(
        {
            "name": name,
            "kind": "local",
            "endpoint": "http://127.0.0.1:8080/v1",
            "model": name,
            "revision": revision,
            "weights_digest": combined_digest(files),
            "weights_dir": "/srv/models/" + name,
            "files": files,
            "serving": {"stack": "llama.cpp llama-server"},
            "cost": {"basis": "hardware", "usd_per_hour": 0.5},
        }
    )


def edit_and_compare(tmp_path: Path, edits, golden: str) -> None:
    path = tmp_path / "models.toml"
    path.write_text((GOLDEN / "catalogue_before.toml").read_text())
    for edit in edits:
        document, _ = read_for_edit(path)
        save(edit(document), path)
    expected = (GOLDEN / golden).read_text()
    assert path.read_text() == expected
    load_catalogue(path)  # and it still loads


def test_golden_add_appends_and_keeps_every_comment(tmp_path):
    edit_and_compare(
        tmp_path,
        [
            lambda d: with_entry(
                d, fixed_entry("new-one"), replace=False, comment="added by `compare-tui models add` on 2026-12-04"
            )
        ],
        "catalogue_after_add.toml",
    )


def test_golden_replace_keeps_position_and_the_next_entrys_comment(tmp_path):
    edit_and_compare(
        tmp_path, [lambda d: with_entry(d, fixed_entry("first", "v2"), replace=True)], "catalogue_after_replace.toml"
    )


def test_golden_remove_keeps_comments_that_describe_other_entries(tmp_path):
    edit_and_compare(tmp_path, [lambda d: without_entry(d, "middle")], "catalogue_after_remove_middle.toml")
    edit_and_compare(tmp_path, [lambda d: without_entry(d, "first")], "catalogue_after_remove_first.toml")


def test_add_then_remove_gives_back_the_original_file(tmp_path):
    edit_and_compare(
        tmp_path,
        [lambda d: with_entry(d, fixed_entry("temp"), replace=False), lambda d: without_entry(d, "temp")],
        "catalogue_before.toml",
    )

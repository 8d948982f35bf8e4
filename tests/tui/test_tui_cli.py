"""`compare-tui` with no subcommand opens the TUI with `--store`, `--models`, `--sets` and
`--theme`; the subcommands keep their own options."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from compare_tui.cli import build_parser, main
from tests.tui.test_tui_data import build_store

ROOT = Path(__file__).resolve().parents[2]


def test_top_level_options_are_the_tuis_and_do_not_shadow_subcommand_options():
    parser = build_parser()
    args = parser.parse_args(["--store", "a.sqlite", "--models", "m.toml", "--sets", "sets", "--theme", "light"])
    assert args.command is None
    assert (args.tui_store, args.tui_models, args.tui_sets, args.tui_theme) == ("a.sqlite", "m.toml", "sets", "light")
    sub = parser.parse_args(["--store", "tui.sqlite", "runs", "list", "--store", "runs.sqlite"])
    assert (sub.command, sub.store, sub.tui_store) == ("runs", "runs.sqlite", "tui.sqlite")


def test_without_a_terminal_the_tui_prints_help_instead(capsys):
    assert main(["--store", "x.sqlite"]) == 0  # pytest's stdout is not a terminal
    assert "terminal UI" in capsys.readouterr().out


def test_subcommands_still_work_beside_the_tui_options(tmp_path):
    store, _ = build_store(tmp_path)
    store.close()
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "compare_tui",
            "--theme",
            "dark",
            "runs",
            "list",
            "--store",
            str(tmp_path / "runs.sqlite"),
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 0, done.stderr
    assert len(json.loads(done.stdout)) == 3


def test_runs_list_fits_80_columns_with_whole_run_ids(tmp_path, capsys, monkeypatch):
    store, _ = build_store(tmp_path)
    ids = [run.id for run in store.list_runs()]
    store.close()
    monkeypatch.setenv("COLUMNS", "80")
    assert main(["runs", "list", "--store", str(tmp_path / "runs.sqlite")]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert all(len(line) <= 80 for line in lines), lines
    assert all(
        any(line.startswith(run_id + " ") for line in lines) for run_id in ids
    )  # never cut: other commands take it
    assert lines[-2].startswith("tasks: ✓ pass ✗ fail ? needs a person ! error · not done")


def test_a_store_given_before_the_command_is_the_commands_store(tmp_path, capsys):
    # `compare-tui --store X runs list` once read the default store instead of X, and
    # `compare-tui --store X run …` wrote there: the top-level option now reaches the command.
    store, _ = build_store(tmp_path)
    store.close()
    assert main(["--store", str(tmp_path / "runs.sqlite"), "runs", "list", "--json"]) == 0
    assert len(json.loads(capsys.readouterr().out)) == 3
    # Given twice with different paths, neither is guessed.
    assert (
        main(["--store", str(tmp_path / "runs.sqlite"), "runs", "list", "--store", str(tmp_path / "other.sqlite")]) == 2
    )
    assert "--store given twice with different paths" in capsys.readouterr().err

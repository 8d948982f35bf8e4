"""The commands share their pieces through `commands/common.py` (and `execution.py`,
`progress.py`), never through each other; a reader on a machine with no store says so and
leaves none behind."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from compare_tui.cli import main

ROOT = next(p for p in Path(__file__).resolve().parents if (p / "pyproject.toml").is_file())
COMMANDS = ROOT / "compare_tui" / "commands"
SHARED = {"common", "execution", "progress"}
"""Modules of `commands/` that are pieces, not commands: any command may import them."""
NOT_YET = {("evaluator_compare", "judge"), ("grade", "judge"), ("runs", "run")}
"""Commands that still import another command's helpers (the judge family; `runs` the tally)."""


def command_imports() -> set[tuple[str, str]]:
    """(command, command it imports) for every import of one command module by another."""
    found = set()
    for path in COMMANDS.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("compare_tui.commands."):
                target = node.module.split(".")[2]
                if target not in SHARED and target != path.stem:
                    found.add((path.stem, target))
    return found


def test_no_command_imports_another():
    assert command_imports() - NOT_YET == set()
    assert ("experiment", "run") not in command_imports() and ("run", "report") not in command_imports()


@pytest.mark.parametrize("argv", [["audit"], ["insights", "latest"], ["runs", "list"], ["report", "latest"]])
def test_a_reader_with_no_store_yet_says_so_and_makes_none(tmp_path, argv, monkeypatch, capsys):
    monkeypatch.delenv("COMPARE_TUI_STORE", raising=False)
    monkeypatch.delenv("COMPARE_TUI_STATE_DIR", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    expected = tmp_path / "data" / "compare-tui" / "runs.sqlite"
    assert main(argv) == 2
    assert capsys.readouterr().err.strip() == (
        f"compare-tui: no store yet at {expected} (run `compare-tui run SET --model NAME` first)"
    )
    assert not (tmp_path / "data").exists()

"""The documentation site: generated pages current, every command and option in the CLI
reference, every shell example either run here or marked illustrative, and a strict build."""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from compare_tui.cli import build_parser

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
SHELL_FENCE = re.compile(r"^```(sh|bash|shell|console)\s*$")
MARKERS = ("<!-- shell: illustrative -->", "<!-- shell: tested -->")


def _script(name: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, str(ROOT / "scripts" / name), *args], capture_output=True, text=True, env=env, cwd=ROOT
    )


def _commands(parser: argparse.ArgumentParser, path: list[str]) -> list[tuple[list[str], argparse.ArgumentParser]]:
    found = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found.append(([*path, name], sub))
                found.extend(_commands(sub, [*path, name]))
    return found


def _shell_blocks() -> list[tuple[Path, int, str, list[str]]]:
    """(file, line, marker line above the fence, block lines) of every shell block in the docs and README."""
    blocks = []
    for path in [ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]:
        lines = path.read_text(encoding="utf-8").splitlines()
        in_code = False
        for i, line in enumerate(lines):
            if line.startswith("```"):
                if not in_code and SHELL_FENCE.match(line):
                    end = next(k for k in range(i + 1, len(lines)) if lines[k].startswith("```"))
                    blocks.append((path, i + 1, lines[i - 1].strip() if i else "", lines[i + 1 : end]))
                in_code = not in_code
    return blocks


def test_the_cli_reference_is_what_the_parser_generates() -> None:
    result = _script("gen_cli_reference.py", "--check")
    assert result.returncode == 0, result.stderr


def test_the_benchmark_pages_and_tui_pictures_are_what_the_script_generates() -> None:
    result = _script("gen_docs_pages.py", "--check")
    assert result.returncode == 0, result.stderr


def test_every_command_and_option_has_its_place_in_the_reference() -> None:
    commands = _commands(build_parser(), ["compare-tui"])
    assert len(commands) > 30  # every subcommand, not just the top level
    index = (DOCS / "reference" / "cli.md").read_text(encoding="utf-8")
    for path, parser in commands:
        page = (DOCS / "reference" / f"cli-{path[1]}.md").read_text(encoding="utf-8")
        assert f"# `{' '.join(path)}`" in page, f"{' '.join(path)} has no section in cli-{path[1]}.md"
        if len(path) == 2:
            assert f"(cli-{path[1]}.md)" in index, f"{path[1]} is not listed on cli.md"
        section = page.split(f"# `{' '.join(path)}`", 1)[1]
        for action in parser._actions:
            for option in action.option_strings:
                assert f"`{option}" in section or f", {option}" in section, f"{option} of {' '.join(path)} is missing"
        if parser.epilog and "exit codes:" in parser.epilog:
            assert "exit codes:" in section


def test_every_shell_example_is_run_here_or_marked_illustrative() -> None:
    blocks = _shell_blocks()
    assert blocks
    unmarked = [f"{p.relative_to(ROOT)}:{line}" for p, line, marker, _ in blocks if marker not in MARKERS]
    assert not unmarked, f"shell blocks with neither {MARKERS[0]} nor {MARKERS[1]} above them: {unmarked}"


@pytest.mark.parametrize(
    "block",
    [b for b in _shell_blocks() if b[2] == MARKERS[1]],
    ids=lambda b: f"{b[0].relative_to(ROOT)}:{b[1]}",
)
def test_a_tested_shell_example_runs_as_written(block: tuple[Path, int, str, list[str]], tmp_path: Path) -> None:
    """Run in a fresh folder with the repository's sample sets and a store of its own."""
    (tmp_path / "sample_sets").symlink_to(ROOT / "sample_sets")
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "COMPARE_TUI_STORE": str(tmp_path / "runs.sqlite"),
    }
    script = "set -euo pipefail\n" + "\n".join(block[3]) + "\n"
    result = subprocess.run(["bash", "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert result.returncode == 0, f"{block[0].name}:{block[1]} failed:\n{result.stdout}\n{result.stderr}"


def test_the_site_builds_strictly(tmp_path: Path) -> None:
    mkdocs = Path(sys.executable).parent / "mkdocs"
    result = subprocess.run(
        [str(mkdocs), "build", "--strict", "--quiet", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "site" / "reference" / "cli-run" / "index.html").is_file()

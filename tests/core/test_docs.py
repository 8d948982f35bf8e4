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
FENCE = re.compile(r"^(?P<indent>\s*)(?P<fence>`{3,}|~{3,})\s*(?P<info>[^`\s]*)")
"""A fenced code block's opening or closing line, at any indentation (a list item, an admonition)."""
SHELL = ("sh", "bash", "shell", "console")
MARKERS = ("<!-- shell: illustrative -->", "<!-- shell: tested -->")
SKIPPED_DIRS = {"site", "node_modules", "__pycache__"}
"""Folders holding no page of ours (besides hidden ones: `.venv`, `.state`, …)."""


def _pages() -> list[Path]:
    """Every Markdown page of the repository, so a page added anywhere later is checked too:
    README, docs/, sample_sets/, bench/, ARCHITECTURE.md, …"""
    return sorted(
        path
        for path in ROOT.rglob("*.md")
        if not any(part.startswith(".") or part in SKIPPED_DIRS for part in path.relative_to(ROOT).parts[:-1])
    )


def shell_blocks_in(text: str) -> list[tuple[int, str, list[str]]]:
    """(line, the marker line above the fence, block lines) of every shell block in a page's
    text: fenced with backticks or tildes, with or without attributes after the language, and
    indented (in a list item or an admonition, its lines dedented)."""
    blocks = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        opening = FENCE.match(lines[i])
        if opening is None:
            i += 1
            continue
        indent, fence = opening["indent"], opening["fence"]
        end = next(
            (
                k
                for k in range(i + 1, len(lines))
                if (close := FENCE.match(lines[k])) and close["fence"].startswith(fence) and not close["info"]
            ),
            len(lines),
        )
        if opening["info"].split("{")[0].lower() in SHELL:
            body = [line[len(indent) :] if line.startswith(indent) else line.lstrip() for line in lines[i + 1 : end]]
            blocks.append((i + 1, lines[i - 1].strip() if i else "", body))
        i = end + 1
    return blocks


def _markers_in(text: str) -> list[int]:
    """Lines (1-based) of a `shell: tested` marker outside code blocks."""
    found, in_code, fence = [], False, ""
    for number, line in enumerate(text.splitlines(), start=1):
        opening = FENCE.match(line)
        if opening and not in_code:
            in_code, fence = True, opening["fence"]
        elif opening and in_code and opening["fence"].startswith(fence) and not opening["info"]:
            in_code = False
        elif not in_code and line.strip() == MARKERS[1]:
            found.append(number)
    return found


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
    """(file, line, marker line above the fence, block lines) of every shell block of every page."""
    return [
        (path, line, marker, body)
        for path in _pages()
        for line, marker, body in shell_blocks_in(path.read_text(encoding="utf-8"))
    ]


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


def test_shell_blocks_are_found_wherever_markdown_puts_them() -> None:
    page = "\n".join(
        [
            "<!-- shell: tested -->",
            "```sh",
            "echo top",
            "```",
            "- a list item:",
            "",
            "  <!-- shell: tested -->",
            "  ```bash",
            "  echo in a list",
            "  ```",
            "<!-- shell: illustrative -->",
            "~~~console",
            "echo tildes",
            "~~~",
            '```sh title="with attributes"',
            "echo attributes",
            "```",
            "```text",
            "<!-- shell: tested -->",
            "```",
            "````markdown",
            "```sh",
            "echo inside another block: not a block of its own",
            "```",
            "````",
        ]
    )
    blocks = shell_blocks_in(page)
    assert [(marker, body) for _, marker, body in blocks] == [
        (MARKERS[1], ["echo top"]),
        (MARKERS[1], ["echo in a list"]),
        (MARKERS[0], ["echo tildes"]),
        ("~~~", ["echo attributes"]),  # the line above is the closing fence: no marker
    ]
    assert _markers_in(page) == [1, 7]  # the one inside the text block is an example, not a marker


def test_every_page_of_the_repository_is_read() -> None:
    pages = {path.relative_to(ROOT).as_posix() for path in _pages()}
    assert {"README.md", "docs/first-run.md", "docs/reference/cli-sets.md", "sample_sets/README.md"} <= pages
    assert not any(page.startswith((".venv/", ".state/")) for page in pages)


def test_every_tested_marker_runs_a_block() -> None:
    """A `shell: tested` marker that is not right above a shell block would run nothing."""
    tested = {(path, line - 1) for path, line, marker, _ in _shell_blocks() if marker == MARKERS[1]}
    markers = {(path, line) for path in _pages() for line in _markers_in(path.read_text(encoding="utf-8"))}
    assert markers, "no page has a tested shell example"
    stray = sorted(f"{path.relative_to(ROOT)}:{line}" for path, line in markers - tested)
    assert not stray, f"`shell: tested` markers with no shell block right under them: {stray}"


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
    script = "set -euo pipefail\n" + "\n".join(block[3]) + "\n"
    result = subprocess.run(
        ["bash", "-c", script], cwd=tmp_path, env=_block_env(tmp_path), capture_output=True, text=True
    )
    assert result.returncode == 0, f"{block[0].name}:{block[1]} failed:\n{result.stdout}\n{result.stderr}"


def _block_env(tmp_path: Path) -> dict[str, str]:
    return {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "COMPARE_TUI_STORE": str(tmp_path / "runs.sqlite"),
    }


def test_the_examples_run_this_checkouts_compare_tui(tmp_path: Path) -> None:
    """`compare-tui` in a tested block is the one on PATH (an installed script): it must import
    this checkout's code, or the examples would test another copy of the product."""
    script = (
        'exec "$(head -1 "$(command -v compare-tui)" | cut -c3-)" -c "import compare_tui; print(compare_tui.__file__)"'
    )
    result = subprocess.run(
        ["bash", "-c", script], cwd=tmp_path, env=_block_env(tmp_path), capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    assert Path(result.stdout.strip()) == ROOT / "compare_tui" / "__init__.py"


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


def test_the_readme_names_every_place_a_set_up_writes_to(monkeypatch) -> None:
    """Where files land, as `compare_tui/paths.py` computes it with no overrides: the README
    names the data folder (models, store) and the state folder (catalogue, pids, logs)."""
    from compare_tui import paths

    for var in ("XDG_DATA_HOME", "XDG_STATE_HOME", "COMPARE_TUI_STATE_DIR", "COMPARE_TUI_STORE", "COMPARE_TUI_MODELS"):
        monkeypatch.delenv(var, raising=False)
    home = Path.home()
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    spelled = " ".join(readme.split())  # a name may wrap across lines
    for place in (paths.data_dir(), paths.state_dir()):
        assert f"`~/{place.relative_to(home)}/`" in spelled, f"README does not name {place}"
    assert f"`{paths.catalogue_path().relative_to(paths.state_dir())}`" in spelled  # local/models.toml
    assert f"`{paths.store_path().name}`" in spelled  # runs.sqlite


def test_the_licence_is_an_spdx_expression_setuptools_reads_without_warning() -> None:
    """`project.license` as a table is deprecated by setuptools 77 (a warning on every `make
    setup`); the SPDX string form needs setuptools 77 or later to build."""
    import tomllib

    from packaging.licenses import canonicalize_license_expression

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    license_ = project["project"]["license"]
    assert isinstance(license_, str), f'project.license is {license_!r}: give the SPDX expression, e.g. "MIT"'
    assert canonicalize_license_expression(license_) == license_
    assert not any(c.startswith("License ::") for c in project["project"].get("classifiers", []))
    (setuptools,) = [r for r in project["build-system"]["requires"] if r.startswith("setuptools")]
    assert setuptools == "setuptools>=77"

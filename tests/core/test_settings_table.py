"""Every `COMPARE_TUI_*` variable the code names is a row of `compare_tui.settings.ENVIRONMENT`,
and docs/settings.md shows that table as `settings_table()` writes it."""

from __future__ import annotations

import re
from pathlib import Path

from compare_tui.settings import ENVIRONMENT, settings_table

ROOT = Path(__file__).resolve().parents[2]
SCORER_CONTRACT = ("scoring/command.py", "scoring/sandbox.py")
"""Where compare-tui *sets* variables for a command scorer: the scorer's inputs, not settings."""
NAME = re.compile(r"COMPARE_TUI_[A-Z][A-Z_]*[A-Z]")


def named_in_code() -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for path in (ROOT / "compare_tui").rglob("*.py"):
        module = path.relative_to(ROOT / "compare_tui").as_posix()
        if module in SCORER_CONTRACT or module == "settings.py":
            continue
        for name in NAME.findall(path.read_text(encoding="utf-8")):
            found.setdefault(name, set()).add(module)
    return found


def test_every_variable_the_code_names_is_in_the_one_table():
    listed = {v.name for v in ENVIRONMENT}
    assert {name: sorted(m) for name, m in named_in_code().items() if name not in listed} == {}
    assert listed <= set(named_in_code())  # and the table lists nothing the code no longer names


def test_the_docs_show_the_table_as_written():
    page = (ROOT / "docs" / "settings.md").read_text(encoding="utf-8")
    shown = page.split("<!-- settings table: compare_tui/settings.py -->\n", 1)[1].split("<!-- end of", 1)[0]
    assert shown == settings_table()

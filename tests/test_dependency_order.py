"""The packages depend one way, in the order ARCHITECTURE.md states ("Dependency order"): every
import inside compare_tui (at module level or in a function) must reach a package on a line
above the importer's. Read statically, so it also covers modules nothing imports yet."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "compare_tui"


def stated_order() -> dict[str, int]:
    """Package (or top-level module) name → its line in ARCHITECTURE.md's order, 0 first."""
    text = (ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8")
    section = text.split("## Dependency order", 1)[1]
    block = re.search(r"```\n(.*?)```", section, re.DOTALL)
    assert block, "ARCHITECTURE.md: the Dependency order section has no fenced block"
    return {
        name.strip(): level
        for level, line in enumerate(block.group(1).splitlines())
        for name in line.split("·")
        if name.strip()
    }


def unit_of(module: str) -> str | None:
    """`compare_tui.engine.runner` → `engine`; `compare_tui` → `__init__`; outside → None."""
    parts = module.split(".")
    if parts[0] != "compare_tui":
        return None
    return parts[1] if len(parts) > 1 else "__init__"


def imports_against_the_order(order: dict[str, int]) -> list[str]:
    problems = []
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE).with_suffix("")
        unit = relative.parts[0]
        if unit not in order:
            problems.append(f"{path.relative_to(ROOT)}: `{unit}` is not in ARCHITECTURE.md's dependency order")
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            else:
                continue
            for name in names:
                target = unit_of(name)
                if target is None or target == unit:
                    continue
                if target not in order or order[target] >= order[unit]:
                    problems.append(
                        f"{path.relative_to(ROOT)}:{node.lineno}: `{unit}` imports `{name}`, which is "
                        f"not above it in ARCHITECTURE.md's dependency order"
                    )
    return problems


def test_every_import_follows_the_stated_dependency_order():
    assert imports_against_the_order(stated_order()) == []


def test_the_check_catches_an_import_against_the_order():
    order = stated_order()
    assert order["vocabulary"] < order["store"] < order["engine"] < order["commands"] == order["tui"]
    upside_down = dict(order, store=order["engine"] + 1)  # store would sit above the engine it serves
    assert any("`engine` imports `compare_tui.store" in p for p in imports_against_the_order(upside_down))

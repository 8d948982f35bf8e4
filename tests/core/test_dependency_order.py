"""The packages depend one way, in the order ARCHITECTURE.md states ("Dependency order"): every
import inside compare_tui (at module level or in a function) must reach a package on a line
above the importer's. Read statically, so it also covers modules nothing imports yet."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
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


# ------------------------------------------------------------------ no circles inside a package


def module_graph() -> dict[str, set[str]]:
    """Module → the compare_tui modules it imports (module level, in a function, or under
    TYPE_CHECKING: a circle hidden in a function is still a circle). `from a import b` counts
    as importing `a.b` when that is a module. A submodule importing its own package (its
    `__init__`, the public API) is not counted."""
    modules = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = ".".join(package[: len(package) - node.level + 1]) if node.level else ""
                module = ".".join(p for p in (base, node.module or "") if p)
                targets = [f"{module}.{a.name}" if f"{module}.{a.name}" in modules else module for a in node.names]
            else:
                continue
            graph[name] |= {t for t in targets if t in modules and t != name and not name.startswith(t + ".")}
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    group = []
                    while True:
                        member = stack.pop()
                        group.append(member)
                        if member == node:
                            break
                    if len(group) > 1:
                        found.append(sorted(group))
            elif child not in index:
                index[child] = low[child] = len(index)
                stack.append(child)
                work.append((child, iter(sorted(graph[child]))))
            elif child in stack:
                low[node] = min(low[node], index[child])
    return found


def test_no_module_imports_itself_through_others():
    assert circles(module_graph()) == []


def test_the_circle_check_finds_a_circle_of_two():
    graph = module_graph()
    graph["compare_tui.catalogue.keys"].add("compare_tui.catalogue.models")  # models imports keys already
    assert ["compare_tui.catalogue.keys", "compare_tui.catalogue.models"] in circles(graph)

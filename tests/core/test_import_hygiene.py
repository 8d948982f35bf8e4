"""The core never imports Textual: only `compare_tui/tui` may. Rich is allowed in
`cli.py`, `commands/` and the report's text renderer.

Every core module is imported in one fresh interpreter, one after another, with `__import__`
watched: an `import rich`/`import textual` statement calls it each time it runs, whether or not
the library is loaded already, so a module imported earlier cannot hide what a later one asks
for. Textual appearing in `sys.modules` is charged to the module whose import loaded it.

httpx imports Rich itself (for its own command line), so for Rich the test records which module
*asked* for it: a core module doing so fails; a third-party library doing so does not.
"""

from __future__ import annotations

import json
import pkgutil
import subprocess
import sys
from pathlib import Path

import compare_tui

ROOT = Path(__file__).resolve().parents[2]
RICH_ALLOWED = ("compare_tui.cli", "compare_tui.commands", "compare_tui.report.render_text", "compare_tui.tui")

PROBE = """
import builtins, importlib, json, sys
asked = set()
real_import = builtins.__import__
def watching_import(name, globals=None, locals=None, fromlist=(), level=0):
    importer = (globals or {}).get("__name__", "")
    if level == 0 and name.split(".")[0] in ("rich", "textual") and importer.startswith("compare_tui"):
        asked.add((importer, name.split(".")[0]))
    return real_import(name, globals, locals, fromlist, level)
builtins.__import__ = watching_import
loaded_textual, failed = [], {}
for module in sys.argv[1:]:
    had_textual = "textual" in sys.modules
    try:
        importlib.import_module(module)
    except Exception as exc:
        failed[module] = f"{type(exc).__name__}: {exc}"
    if not had_textual and "textual" in sys.modules:
        loaded_textual.append(module)
print(json.dumps({"textual_loaded_by": loaded_textual, "asked": sorted(asked), "failed": failed}))
"""


def _core_modules() -> list[str]:
    return sorted(
        info.name
        for info in pkgutil.walk_packages(compare_tui.__path__, "compare_tui.")
        if not info.name.startswith("compare_tui.tui") and info.name != "compare_tui.__main__"
    )


def _probe(*names: str) -> dict:
    out = subprocess.run([sys.executable, "-c", PROBE, *names], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, f"the probe failed: {out.stderr[-2000:]}"
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_core_modules_do_not_import_textual_or_rich():
    modules = _core_modules()
    assert {"compare_tui.engine.runner", "compare_tui.store.store", "compare_tui.goldset.loader"} <= set(modules)
    result = _probe(*modules)
    assert result["failed"] == {}
    offenders = [f"{name} loads textual" for name in result["textual_loaded_by"]]
    for importer, lib in result["asked"]:
        if lib == "textual" or not importer.startswith(RICH_ALLOWED):
            offenders.append(f"{importer} imports {lib}")
    assert offenders == []


def test_the_probe_catches_a_direct_import_even_when_the_library_is_loaded_already(tmp_path):
    # The check above must be able to fail, in one interpreter: a module importing rich (or
    # textual) after another module already loaded it is still caught, and charged to itself.
    package = tmp_path / "compare_tui_probe"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "first.py").write_text("import rich.text\nimport textual\n")
    (package / "second.py").write_text("from rich.console import Console\n")
    probe = PROBE.replace('importer.startswith("compare_tui")', 'importer.startswith("compare_tui_probe")')
    out = subprocess.run(
        [sys.executable, "-c", probe, "compare_tui_probe.first", "compare_tui_probe.second"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["textual_loaded_by"] == ["compare_tui_probe.first"]
    assert {tuple(a) for a in result["asked"]} == {
        ("compare_tui_probe.first", "rich"),
        ("compare_tui_probe.first", "textual"),
        ("compare_tui_probe.second", "rich"),
    }


def test_the_project_docs_stand_alone_no_file_cites_a_document_outside_the_repository():
    outside = ("DESIGN.md", "STYLE.md", "shared/reference")
    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    cited = [
        f"{path}: {word}"
        for path in tracked
        if path.endswith((".py", ".md", ".toml", ".tcss")) and path != "tests/core/test_import_hygiene.py"
        for word in outside
        if word in (ROOT / path).read_text(encoding="utf-8", errors="replace")
    ]
    assert cited == []

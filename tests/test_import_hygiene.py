"""The core never imports Textual: only `compare_tui/tui` may. Rich is allowed in
`cli.py`, `commands/` and the report's text renderer. Each module is imported in a fresh
interpreter, so a module imported earlier by another cannot hide what this one pulls in.

httpx imports Rich itself (for its own command line), so for Rich the test records which module
*asked* for it: a core module doing so fails; a third-party library doing so does not.
"""

from __future__ import annotations

import json
import pkgutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import compare_tui

ROOT = Path(__file__).resolve().parents[1]
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
importlib.import_module(sys.argv[1])
print(json.dumps({"textual_loaded": "textual" in sys.modules, "asked": sorted(asked)}))
"""


def _core_modules() -> list[str]:
    return sorted(
        info.name
        for info in pkgutil.walk_packages(compare_tui.__path__, "compare_tui.")
        if not info.name.startswith("compare_tui.tui") and info.name != "compare_tui.__main__"
    )


def _probe(name: str) -> dict:
    out = subprocess.run([sys.executable, "-c", PROBE, name], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, f"{name} failed to import: {out.stderr[-2000:]}"
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_core_modules_do_not_import_textual_or_rich():
    modules = _core_modules()
    assert {"compare_tui.engine.runner", "compare_tui.store.store", "compare_tui.goldset.loader"} <= set(modules)
    with ThreadPoolExecutor(max_workers=2) as pool:
        results = dict(zip(modules, pool.map(_probe, modules)))
    offenders = []
    for name, result in results.items():
        if result["textual_loaded"]:
            offenders.append(f"{name} loads textual")
        for importer, lib in result["asked"]:
            if lib == "textual" or not importer.startswith(RICH_ALLOWED):
                offenders.append(f"{importer} imports {lib} (reached from {name})")
    assert offenders == []


def test_the_probe_catches_a_direct_import(tmp_path):
    # The check above must be able to fail: a throwaway module that imports rich is caught.
    package = tmp_path / "compare_tui_probe_check"
    package.mkdir()
    (package / "__init__.py").write_text("")
    out = subprocess.run(
        [sys.executable, "-c", PROBE.replace('importer.startswith("compare_tui")', "True"), "rich.text"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout.strip().splitlines()[-1])["asked"]


def test_the_project_docs_stand_alone_no_file_cites_a_document_outside_the_repository():
    outside = ("DESIGN.md", "STYLE.md", "shared/reference")
    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    cited = [
        f"{path}: {word}"
        for path in tracked
        if path.endswith((".py", ".md", ".toml", ".tcss")) and path != "tests/test_import_hygiene.py"
        for word in outside
        if word in (ROOT / path).read_text(encoding="utf-8", errors="replace")
    ]
    assert cited == []

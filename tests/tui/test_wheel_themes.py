"""A built wheel carries the themes: installed with no checkout beside it, the app offers dark,
light and high-contrast, and `--theme light` starts in light with no fallback notice."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

PROBE = r"""
import asyncio, sys
import compare_tui
from compare_tui.tui.app import create_app
from compare_tui.tui.themes import THEMES_DIR, load_themes

print("package", compare_tui.__file__)
loaded = load_themes()
print("themes", sorted(t.name for t in loaded.themes), list(loaded.problems))

async def main():
    app = create_app(sys.argv[1], catalogue_path=sys.argv[2], sets_dir=sys.argv[3], theme="light")
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        print("running", app.theme)

asyncio.run(main())
"""


def test_a_wheel_installed_without_the_checkout_offers_the_packaged_themes(tmp_path):
    wheels = tmp_path / "wheels"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(wheels), str(ROOT)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    (wheel,) = wheels.glob("compare_tui-*.whl")
    target = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(target), str(wheel)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    away = tmp_path / "elsewhere"
    away.mkdir()
    (away / "sets").mkdir()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"} | {"PYTHONPATH": str(target)}
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(away / "runs.sqlite"), str(away / "models.toml"), str(away / "sets")],
        cwd=away,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    lines = dict(line.split(" ", 1) for line in done.stdout.splitlines())
    assert lines["package"].startswith(str(target)), "the wheel's copy must be the one imported, not the checkout"
    assert lines["themes"] == "['compare-dark', 'compare-high-contrast', 'compare-light'] []"
    assert lines["running"] == "compare-light"

"""Every test file sits in a tier folder (tests/conftest.py marks each test with its tier)."""

from __future__ import annotations

from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parents[1]
PACKAGES = TESTS.parent / "compare_tui"


def test_every_test_file_is_in_a_tier_folder():
    loose = sorted(p.name for p in TESTS.glob("test_*.py"))
    assert loose == [], "move these into tests/core, tests/tui or tests/integration"
    assert {p.name for p in TESTS.iterdir() if p.is_dir() and any(p.glob("test_*.py"))} == {
        "core",
        "tui",
        "integration",
    }


def test_the_core_tier_is_split_by_the_package_each_file_tests():
    # tests/core/<package>/ mirrors compare_tui/<package>/ (or a top module: settings/); only the project-wide checks
    # (docs, import order and hygiene, the tiers, the root error, the fake server, the vocabulary's
    # literals) sit at the top.
    folders = {p.name for p in (TESTS / "core").iterdir() if p.is_dir() and any(p.glob("test_*.py"))}
    packages = {p.name for p in PACKAGES.iterdir() if (p / "__init__.py").is_file()}
    packages |= {p.stem for p in PACKAGES.glob("*.py") if p.stem != "__init__"}  # settings.py, paths.py …
    assert folders and folders <= packages, f"not a package or module of compare_tui: {sorted(folders - packages)}"
    top = sorted(p.stem for p in (TESTS / "core").glob("test_*.py"))
    assert top == [
        "test_dependency_order",
        "test_docs",
        "test_errors",
        "test_fake_openai",
        "test_import_hygiene",
        "test_tiers",
        "test_vocabulary_literals",
    ]


def test_a_test_carries_its_tier_marker(request: pytest.FixtureRequest):
    assert request.node.get_closest_marker("core") is not None
    assert request.node.get_closest_marker("tui") is None

"""Every test file sits in a tier folder (tests/conftest.py marks each test with its tier)."""

from __future__ import annotations

from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parents[1]


def test_every_test_file_is_in_a_tier_folder():
    loose = sorted(p.name for p in TESTS.glob("test_*.py"))
    assert loose == [], "move these into tests/core, tests/tui or tests/integration"
    assert {p.name for p in TESTS.iterdir() if p.is_dir() and any(p.glob("test_*.py"))} == {
        "core",
        "tui",
        "integration",
    }


def test_a_test_carries_its_tier_marker(request: pytest.FixtureRequest):
    assert request.node.get_closest_marker("core") is not None
    assert request.node.get_closest_marker("tui") is None

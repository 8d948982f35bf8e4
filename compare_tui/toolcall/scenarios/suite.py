"""The official suite: versioned data files shipped in the package, loaded into `Scenario`s.

The digest is a sha256 over the canonical JSON (sorted keys, no spaces, UTF-8) of the
manifest, the toolbox and the scenarios, so two runs can prove they sent the same requests.
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from compare_tui.errors import CompareTuiError
from compare_tui.toolcall.scenarios.scenario import CallPattern, Expectation, Scenario, ToolSpec

SUITE_DIR = "v1"
"""The folder under `suite/` that holds the current version's data files."""


class SuiteDataError(CompareTuiError, ValueError):
    """The packaged suite data is malformed (a packaging bug, reported with file and field)."""


@dataclass(frozen=True, slots=True)
class Suite:
    """A loaded suite: its version, digest, defaults and scenarios in order."""

    name: str
    version: str
    digest: str
    defaults: dict[str, Any]
    scenarios: tuple[Scenario, ...]

    def select(self, patterns: list[str] | None) -> tuple[Scenario, ...]:
        """The scenarios whose id or name matches any glob (all when no pattern)."""
        return select(self.scenarios, patterns)


def select(scenarios: tuple[Scenario, ...], patterns: list[str] | None) -> tuple[Scenario, ...]:
    """Scenarios whose id or name matches one of `patterns` (fnmatch, case-sensitive)."""
    if not patterns:
        return scenarios
    return tuple(
        s for s in scenarios if any(fnmatch.fnmatchcase(s.id, p) or fnmatch.fnmatchcase(s.name, p) for p in patterns)
    )


def canonical_json(value: Any) -> bytes:
    """The one byte form a JSON value is hashed in."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def _read(name: str) -> Any:
    path = resources.files("compare_tui.toolcall.scenarios") / "suite" / SUITE_DIR / name
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise SuiteDataError(f"suite/{SUITE_DIR}/{name}: cannot be read as JSON: {exc}") from None


@cache
def official_suite() -> Suite:
    """The packaged official suite (read once per process)."""
    manifest = _read("manifest.json")
    toolbox = _read("toolbox.json")
    scenarios = _read("scenarios.json")
    digest = (
        "sha256:"
        + hashlib.sha256(canonical_json({"manifest": manifest, "toolbox": toolbox, "scenarios": scenarios})).hexdigest()
    )
    tools = {
        name: ToolSpec(name, name, str(spec.get("description", "")), spec["parameters"])
        for name, spec in toolbox.items()
    }
    parsed = tuple(_scenario(raw, tools, i) for i, raw in enumerate(scenarios["scenarios"]))
    ids = [s.id for s in parsed]
    if len(set(ids)) != len(ids):
        raise SuiteDataError(f"suite/{SUITE_DIR}/scenarios.json: scenario ids are not unique")
    return Suite(manifest["suite"], manifest["version"], digest, dict(manifest["defaults"]), parsed)


def _scenario(raw: dict[str, Any], tools: dict[str, ToolSpec], index: int) -> Scenario:
    where = f"suite/{SUITE_DIR}/scenarios.json: scenarios[{index}]"
    try:
        offered = tuple(tools[name] for name in raw["tools"])
        return Scenario(
            id=raw["id"],
            name=raw["name"],
            category=raw["category"],
            title=raw["title"],
            tools=offered,
            messages=tuple(raw["messages"]),
            expect=parse_expectation(raw.get("expect", {})),
            tool_choice=raw.get("tool_choice"),
            parallel_tool_calls=raw.get("parallel_tool_calls"),
            stream=bool(raw.get("stream", False)),
            catches=raw.get("catches", ""),
        )
    except KeyError as exc:
        raise SuiteDataError(f"{where}: missing or unknown {exc}") from None
    except (TypeError, ValueError) as exc:
        raise SuiteDataError(f"{where}: {exc}") from None


def parse_expectation(raw: dict[str, Any]) -> Expectation:
    """An `expect` table from the data files (shape documented in `checks/expectations.py`)."""
    known = {"status", "http_error_is_fail", "calls", "match", "content_not_empty", "text_contains", "not_repeated"}
    unknown = set(raw) - known
    if unknown:
        raise ValueError(f"expect has unknown keys {sorted(unknown)}")
    calls = raw.get("calls", {})
    return Expectation(
        refused=raw.get("status", "ok") == "refused",
        http_error_is_fail=bool(raw.get("http_error_is_fail", False)),
        min_calls=calls.get("min"),
        max_calls=calls.get("max"),
        match=tuple(_pattern(m) for m in raw.get("match", [])),
        content_not_empty=bool(raw.get("content_not_empty", False)),
        text_contains=tuple(raw.get("text_contains", [])),
        not_repeated=tuple(_pattern(m) for m in raw.get("not_repeated", [])),
    )


def _pattern(raw: dict[str, Any]) -> CallPattern:
    args = raw.get("args")
    return CallPattern(raw["name"], None if args is None else dict(args))

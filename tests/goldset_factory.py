"""Small golden sets built in a temporary folder, for the goldset tests.

`make_set(root)` writes a valid set (a manifest and two tasks: one TOML, one JSON); every
argument replaces one part of it, so a test states only what it breaks.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import tomli_w


def manifest_data(**overrides: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "workload_id": "support-triage",
        "name": "Support ticket triage",
        "version": "1.0.0",
        "caveats": ["Expected labels are what production returned in October."],
        "default_scorer": {"kind": "exact", "normalize": ["case", "whitespace"]},
        "run": {"attempts": 2, "temperature": 0.0, "max_tokens": 64},
    }
    data.update(overrides)
    return data


def task_data(task_id: str = "refund-01", **overrides: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "id": task_id,
        "tags": ["billing"],
        "input": {
            "system": "Classify the ticket: billing, bug, account or other.",
            "prompt": "I was charged twice for my subscription this month.",
        },
        "expected": {"text": "billing"},
    }
    data.update(overrides)
    return data


def write_data(path: Path, data: Any) -> Path:
    """`data` as TOML or JSON, by `path`'s suffix."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix == ".json":
        path.write_text(json.dumps(data, indent=2, ensure_ascii=False), encoding="utf-8")
    else:
        path.write_text(tomli_w.dumps(data), encoding="utf-8")
    return path


def make_set(
    root: Path,
    *,
    manifest: dict[str, Any] | None = None,
    tasks: dict[str, Any] | None = None,
    files: dict[str, str | bytes] | None = None,
) -> Path:
    """Write a golden set at `root` and return `root`.

    `tasks` maps a file name under tasks/ to its data (a dict, written by suffix) or to raw
    `str`/`bytes` written as is. `files` maps other relative paths to their contents.
    """
    root.mkdir(parents=True, exist_ok=True)
    write_data(root / "golden.toml", manifest if manifest is not None else manifest_data())
    if tasks is None:
        tasks = {
            "refund-01.toml": task_data("refund-01"),
            "login-02.json": task_data("login-02", expected={"text": "account"}),
        }
    (root / "tasks").mkdir(exist_ok=True)
    for name, data in tasks.items():
        target = root / "tasks" / name
        if isinstance(data, bytes):
            target.write_bytes(data)
        elif isinstance(data, str):
            target.write_text(data, encoding="utf-8")
        else:
            write_data(target, data)
    for rel, content in (files or {}).items():
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            target.write_bytes(content)
        else:
            target.write_text(content, encoding="utf-8")
    return root

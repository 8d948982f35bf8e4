"""The golden-set digest: proof that two runs ran the same set.

The digest is `sha256:<hex>` over one canonical JSON text (sorted keys, compact separators,
no ASCII escaping) of `{"manifest": …, "tasks": [… sorted by id], "files": {relpath: sha256}}`.
It therefore depends only on what the set means, never on how it is written: file names,
file order, TOML vs JSON, whitespace and comments do not change it; any field value, or a
byte of a file a scorer references, does.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from typing import Any

from .models import Manifest, Task


def canonical_json(value: Any) -> str:
    """The one JSON text the digest hashes for `value` (a JSON-compatible structure)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _manifest_form(manifest: Manifest) -> dict[str, Any]:
    """The manifest as digested. An absent optional `[decision]` table is left out, so a set
    that never had one keeps the digest it had before the table existed; so is `[run]
    strict_serving`, a policy about servers rather than part of what the set measures, and
    `[decision] sequential`, a policy about when to stop sending (the verdict's margin is digested)."""
    form = manifest.model_dump(mode="json", by_alias=True)
    if form.get("decision") is None:
        form.pop("decision", None)
    else:
        form["decision"].pop("sequential", None)
    _drop_unset_text_calls(form.get("default_scorer"))
    form.get("run", {}).pop("strict_serving", None)
    return form


def _task_form(task: Task) -> dict[str, Any]:
    """The task as digested. An absent `trace` is left out, so a set written before the field
    existed keeps its digest."""
    form = task.model_dump(mode="json", by_alias=True)
    if form.get("trace") is None:
        form.pop("trace", None)
    _drop_unset_text_calls(form.get("scorer"))
    return form


def _drop_unset_text_calls(scorer: Any) -> None:
    """A `tool_call` scorer's `accept_text_calls` left at its default (off) is not digested,
    so a set written before the option existed keeps its digest."""
    if isinstance(scorer, dict) and scorer.get("accept_text_calls") is False:
        scorer.pop("accept_text_calls")


def digest_golden_set(manifest: Manifest, tasks: Iterable[Task], files: Mapping[str, str]) -> str:
    """`sha256:<hex>` of manifest + tasks (any order) + referenced files (relpath -> sha256 hex)."""
    payload = {
        "manifest": _manifest_form(manifest),
        "tasks": [_task_form(t) for t in sorted(tasks, key=lambda t: t.id)],
        "files": dict(files),
    }
    # surrogatepass: a JSON task may hold a lone surrogate ("\ud800"); it must hash, not crash.
    data = canonical_json(payload).encode("utf-8", "surrogatepass")
    return "sha256:" + hashlib.sha256(data).hexdigest()


def input_digest(task: Task) -> str:
    """The first 16 hex digits of the sha256 of what a task sends (its input and, for a traced
    step, its place in the run): two runs' answers answer the same request exactly when these
    agree (`rescore` relies on it). 64 bits keep a run's row small at 100,000 tasks; they guard
    against edits, not against an adversary."""
    form: dict[str, Any] = {"input": task.input.model_dump(mode="json", by_alias=True, exclude_none=True)}
    if task.trace is not None:
        form["trace"] = task.trace.model_dump(mode="json")
    return hashlib.sha256(canonical_json(form).encode("utf-8", "surrogatepass")).hexdigest()[:16]


def scorers_digest(scorers: Mapping[str, Any], files: Mapping[str, str]) -> str:
    """`sha256:<hex>` of each task's scorer and expected outcome (task id → JSON form) and the
    files scorers reference: two scorings of the same answers agree when these do."""
    data = canonical_json({"tasks": dict(scorers), "files": dict(files)}).encode("utf-8", "surrogatepass")
    return "sha256:" + hashlib.sha256(data).hexdigest()

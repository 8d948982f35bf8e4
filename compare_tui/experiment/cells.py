"""Cells: which runs measure the same thing, derived from what a run record stores.

A cell is golden set digest + model + configuration digest + settings. Any run whose record
gives the same cell key belongs to the cell, whoever started it (an experiment, another
experiment, or a plain `compare-tui run`), so runs are reused rather than repeated.

What is in the key is what the user *asked for*: the set, the catalogue model (name, kind,
the model id sent), where and how it is served (endpoint + stated serving notes) and the
settings that change the requests (attempts, temperature, max_tokens). What a run *got*
— weights digest, revision, per-file pins, server build, chat template, concurrency,
timeout, cost basis — is deliberately left out and checked as a confound instead
(`confounds.py`): were the weights digest in the key, a run made against a different model
file under the same catalogue name would silently drop out of its arm instead of being
flagged.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import fields
from typing import Any, get_type_hints

from compare_tui.engine.settings import RunSettings
from compare_tui.store import RunRecord
from compare_tui.vocabulary import PromptCache, RunStatus

CELL_SETTINGS = ("attempts", "temperature", "max_tokens")
"""The settings that select a cell: they change what is sent to the model."""
RUN_SETTINGS = tuple(f.name for f in fields(RunSettings))
"""Every setting a run records (the fields of `engine.RunSettings`); all are checked for drift."""
_SETTING_TYPES = get_type_hints(RunSettings)
MODEL_IDENTITY = ("name", "kind", "model")
"""The catalogue entry's fields that name the model a cell is about."""
IN_FLIGHT = frozenset({RunStatus.PENDING, RunStatus.RUNNING})
"""Run statuses that hold a place in a cell without being complete yet."""


def canonical(value: Any) -> str:
    """`value` as canonical JSON text (sorted keys, no spaces): equal values, equal text."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def _sha256(value: Any) -> str:
    return "sha256:" + hashlib.sha256(canonical(value).encode("utf-8")).hexdigest()


def normalised_settings(settings: Mapping[str, Any], names: tuple[str, ...] = RUN_SETTINGS) -> dict[str, Any]:
    """`settings` reduced to `names`, with numbers in one form (temperature 0 == 0.0)."""
    out: dict[str, Any] = {}
    for name in names:
        value = settings.get(name)
        if name == "prompt_cache":
            # Recorded before the setting existed: those runs had the server's own cache.
            value = str(PromptCache(value)) if value else str(PromptCache.SERVER)
        kind = _SETTING_TYPES.get(name)
        if kind is float and isinstance(value, int | float):
            value = float(value)
        elif kind is int and isinstance(value, float) and value.is_integer():
            value = int(value)
        out[name] = value
    return out


def configuration_digest(model_entry: Mapping[str, Any]) -> str:
    """sha256 over the endpoint and the stated serving notes of a recorded catalogue entry."""
    return _sha256({"endpoint": model_entry.get("endpoint"), "serving": model_entry.get("serving") or {}})


def cell_key(goldset_digest: str, model_entry: Mapping[str, Any], settings: Mapping[str, Any]) -> str:
    """The cell key (`cell:` + 16 hex digits) of a set digest, a recorded entry and settings."""
    fields = {
        "goldset_digest": goldset_digest,
        "model": {name: model_entry.get(name) for name in MODEL_IDENTITY},
        "configuration": configuration_digest(model_entry),
        "settings": normalised_settings(settings, CELL_SETTINGS),
    }
    return "cell:" + _sha256(fields)[len("sha256:") :][:16]


def run_cell_key(run: RunRecord) -> str:
    """The cell a stored run belongs to, from its record alone (works for any run)."""
    return cell_key(run.goldset_digest, run.model_entry, run.settings)

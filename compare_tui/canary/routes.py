"""The alias's routes in the managed gateway's config: read, compared and written.

Without a database LiteLLM reads its routes only from the config at start, so the split is
changed by rewriting the config (only the alias's entries; everything else in the file stays as
it is) and restarting the proxy (`local.gateway.restart`). Each deployment is named by its
catalogue name in `model_info.id`, which LiteLLM reports as the deployment that answered
(`model_id` in the traffic log, `x-litellm-model-id` on the response).

The compare-and-set: the canary keeps the digest of the alias's entries as it last wrote them;
before any change the file is read again, and entries that differ (a person's edit) refuse the
change, naming what differs. Shadow mode adds a second route, `<alias>--shadow`, serving B, and
`silent_model` on the baseline's deployment: LiteLLM mirrors each request to it in the
background (tagged `is_silent_experiment`) and never returns its answer to the user.
"""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypedDict

import yaml

from compare_tui.catalogue import ModelEntry
from compare_tui.errors import CompareTuiError


class RoutesError(CompareTuiError):
    """The gateway's config cannot be read or does not hold what the canary needs."""


def shadow_route(alias: str) -> str:
    return f"{alias}--shadow"


def load_config(path: Path) -> dict[str, Any]:
    try:
        document = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise RoutesError(f"cannot read the gateway's config {path}: {exc}") from None
    if not isinstance(document, dict) or not isinstance(document.get("model_list", []), list):
        raise RoutesError(f"the gateway's config {path} has no model_list")
    return document


def write_config(path: Path, document: Mapping[str, Any]) -> None:
    """JSON is YAML: written as JSON, so any value survives without a YAML writer's quoting."""
    temporary = path.with_suffix(".tmp")
    temporary.write_text(json.dumps(document, indent=1), encoding="utf-8")
    temporary.replace(path)


def alias_entries(document: Mapping[str, Any], alias: str) -> list[dict[str, Any]]:
    """The config's entries of the alias and of its shadow route, in file order."""
    names = (alias, shadow_route(alias))
    return [e for e in document.get("model_list") or [] if isinstance(e, dict) and e.get("model_name") in names]


def routes_digest(entries: Sequence[Mapping[str, Any]]) -> str:
    return "sha256:" + hashlib.sha256(json.dumps(list(entries), sort_keys=True).encode()).hexdigest()


@dataclass(frozen=True)
class Split:
    """Who serves the alias and with what weight (%), by deployment id."""

    weights: dict[str, float]
    shadow: str | None = None
    written: dict[str, float | None] = field(default_factory=dict)
    """Each deployment's `weight` as the file writes it (None: no weight)."""

    def describe(self) -> str:
        parts = [
            f"{name} {share:.3g}%" + (f" (weight {self.written[name]:g})" if self.written.get(name) is not None else "")
            for name, share in self.weights.items()
        ] or ["no deployment"]
        return ", ".join(parts) + (f"; shadow {self.shadow}" if self.shadow else "")


def split_of(entries: Sequence[Mapping[str, Any]], alias: str) -> Split:
    """The split the entries route, weights as shares of 100 (LiteLLM's `simple-shuffle`)."""
    serving = [e for e in entries if e.get("model_name") == alias]
    raw, written = {}, {}
    for index, entry in enumerate(serving):
        params = entry.get("litellm_params") or {}
        name = str((entry.get("model_info") or {}).get("id") or params.get("model") or f"deployment {index + 1}")
        weight = params.get("weight")
        written[name] = float(weight) if isinstance(weight, (int, float)) else None
        raw[name] = written[name] or (0.0 if weight is not None else 1.0)
    total = sum(raw.values())
    weights = {k: (v / total * 100 if total else 0.0) for k, v in raw.items()}
    shadowed = [e for e in entries if e.get("model_name") == shadow_route(alias)]
    shadow = str((shadowed[0].get("model_info") or {}).get("id")) if shadowed else None
    return Split({k: round(v, 6) for k, v in weights.items()}, shadow, written)


def deployment_params(entry: ModelEntry, document: Mapping[str, Any]) -> dict[str, Any]:
    """LiteLLM params that reach `entry`'s model: a route of this gateway already named by the
    entry (its `model` is the route) keeps that route's params; else `openai/` with the entry's
    endpoint, and no key (a key-holding endpoint outside this gateway is refused)."""
    for existing in document.get("model_list") or []:
        if isinstance(existing, dict) and existing.get("model_name") == entry.model and entry.gateway:
            return copy.deepcopy(dict(existing.get("litellm_params") or {}))
    if entry.key_env:
        raise RoutesError(
            f"{entry.name} needs a key (${entry.key_env}) that the gateway's process does not hold: "
            "a canary routes models the gateway can reach without one, or its own routes"
        )
    return {"model": f"openai/{entry.model}", "api_base": entry.endpoint, "api_key": "none"}


def baseline_params(entries: Sequence[Mapping[str, Any]], alias: str, baseline: str) -> dict[str, Any] | None:
    """The params of the alias's deployment of A as the config has it: the canary's own entry
    (`model_info.id` A), else the alias's one deployment before any canary. None: neither."""
    serving = [e for e in entries if e.get("model_name") == alias]
    own = [e for e in serving if (e.get("model_info") or {}).get("id") == baseline]
    chosen = own[0] if own else (serving[0] if len(serving) == 1 else None)
    if chosen is None:
        return None
    params = copy.deepcopy(dict(chosen.get("litellm_params") or {}))
    params.pop("weight", None)
    params.pop("silent_model", None)
    return params


class DeploymentInfo(TypedDict):
    """A deployment's `model_info`: the catalogue model it reaches (A or B)."""

    id: str


class Deployment(TypedDict):
    """One `model_list` entry the canary writes: the alias (or its shadow route), LiteLLM's
    params for it (the route's own, as the config or `deployment_params` gives them, with the
    canary's `weight` or `silent_model`), and which model it is."""

    model_name: str
    litellm_params: dict[str, Any]
    model_info: DeploymentInfo


def canary_entries(
    alias: str,
    base_params: Mapping[str, Any],
    baseline: str,
    cand_params: Mapping[str, Any],
    candidate: str,
    weight: float,
    *,
    shadow: bool = False,
) -> list[Deployment]:
    """The alias's entries with B at `weight` % (100: B alone), or B in shadow behind A."""
    a_params, b_params = dict(base_params), dict(cand_params)
    a: Deployment = {"model_name": alias, "litellm_params": a_params, "model_info": {"id": baseline}}
    b: Deployment = {"model_name": alias, "litellm_params": b_params, "model_info": {"id": candidate}}
    if shadow:
        a_params["silent_model"] = shadow_route(alias)
        return [a, {**b, "model_name": shadow_route(alias)}]
    if weight >= 100:
        return [b]
    a_params["weight"] = 100 - weight
    b_params["weight"] = weight
    return [a, b]


def with_entries(document: Mapping[str, Any], alias: str, entries: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The config with the alias's entries replaced by `entries` (where the first one was)."""
    names = (alias, shadow_route(alias))
    models = list(document.get("model_list") or [])
    at = next((i for i, e in enumerate(models) if isinstance(e, dict) and e.get("model_name") in names), len(models))
    kept = [e for e in models if not (isinstance(e, dict) and e.get("model_name") in names)]
    before = sum(1 for e in models[:at] if not (isinstance(e, dict) and e.get("model_name") in names))
    return {**document, "model_list": kept[:before] + [dict(e) for e in entries] + kept[before:]}

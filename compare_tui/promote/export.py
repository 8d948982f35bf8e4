"""Exports of a promotion, for the system that routes production traffic. Never a key.

- `litellm`: a LiteLLM proxy `model_list` (YAML) routing an alias (the workload id) to the
  promoted model's endpoint; with a canary, two weighted deployments under the one alias
  (LiteLLM's default `simple-shuffle` routing picks by `weight`): the previous baseline keeps
  100 − P % of the traffic, the promoted model takes P %.
- `json`: a plain alias file: the alias, the model, its endpoint and pins, and the split.

Scalars are written as JSON strings and numbers, which YAML reads as the same values, so an
endpoint or a model id can hold any character without breaking the file.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from compare_tui.store import DecisionRecord

FORMATS = ("litellm", "json")


def deployments(decision: DecisionRecord) -> list[tuple[str, Mapping[str, Any], float]]:
    """(model name, its recorded pins, share of traffic 0–100), the promoted model first."""
    promoted = decision.pins.get(decision.model, {})
    canary = decision.canary_percent
    if canary is None or canary >= 100 or not decision.previous_model:
        return [(decision.model, promoted, 100.0)]
    previous = decision.pins.get(decision.previous_model, {})
    return [(decision.model, promoted, float(canary)), (decision.previous_model, previous, 100.0 - canary)]


def _litellm_model(pins: Mapping[str, Any]) -> str:
    # Every OpenAI-compatible endpoint is LiteLLM's `openai/` provider with an api_base.
    return f"openai/{pins.get('model', '')}"


def litellm_config(decision: DecisionRecord) -> str:
    """A LiteLLM proxy config fragment: `model_list` with one entry per deployment."""
    alias = decision.workload_id
    lines = [
        f"# compare-tui promote: workload {decision.workload_id} -> {decision.model} ({decision.kind}, "
        f"decision {decision.id}, {decision.decided_at})",
        "# No key is written here: add api_key: os.environ/NAME to each deployment if the endpoint needs one.",
        "model_list:",
    ]
    for name, pins, share in deployments(decision):
        lines += [
            f"  - model_name: {json.dumps(alias)}",
            "    litellm_params:",
            f"      model: {json.dumps(_litellm_model(pins))}",
            f"      api_base: {json.dumps(pins.get('endpoint', ''))}",
        ]
        if share < 100:
            lines.append(f"      weight: {share:g}")
        lines += [
            "    model_info:",
            f"      compare_tui_model: {json.dumps(name)}",
            f"      weights_digest: {json.dumps(pins.get('weights_digest'))}",
        ]
    return "\n".join(lines) + "\n"


def alias_json(decision: DecisionRecord) -> str:
    """The plain alias file."""
    document = {
        "alias": decision.workload_id,
        "decision_id": decision.id,
        "kind": decision.kind,
        "decided_at": decision.decided_at,
        "comparison_id": decision.comparison_id,
        "routes": [
            {
                "model": name,
                "endpoint": pins.get("endpoint"),
                "model_id": pins.get("model"),
                "weights_digest": pins.get("weights_digest"),
                "revision": pins.get("revision"),
                "percent": share,
            }
            for name, pins, share in deployments(decision)
        ],
    }
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def export(decision: DecisionRecord, fmt: str) -> str:
    if fmt not in FORMATS:
        raise ValueError(f"--export expects one of {', '.join(FORMATS)} (got {fmt!r})")
    return litellm_config(decision) if fmt == "litellm" else alias_json(decision)

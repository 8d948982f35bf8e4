"""What a serving stack says about a model, turned into catalogue serving notes (pure).

`models add` asks the server (see `probe.py`) and hands the parsed JSON bodies here. Each
reader takes one documented response shape and returns `ServerFacts`: serving-note fields,
a discovered revision where the stack states one, and plain-words notes. Nothing here does
IO, so every shape (and every malformed variant of it) is cheap to test.

Shapes read (from each project's public API docs and server code):
- llama.cpp `GET /props`: `build_info`, `chat_template`, `total_slots`,
  `default_generation_settings.n_ctx` (older builds: top-level `n_ctx`), `model_path`,
  `model_ftype` (the quantisation).
- Ollama `GET /api/tags`: `models[]` of {name, model, digest, details{format, family,
  parameter_size, quantization_level}}; `POST /api/show`: {modelfile, template, parameters,
  details, model_info{"<arch>.context_length"}}.
- vLLM `GET /v1/models`: `data[]` of {id, root, parent, max_model_len, owned_by: "vllm"}.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from typing import Any

from compare_tui.endpoint.account import ListedModel, LlamaProps, ModelListing, positive_int, text_value

READ_FROM_SERVER = "read from the server"
"""How serving notes that a server reported are marked (the user's own are "stated")."""


@dataclass
class ServerFacts:
    """What one server said. `serving` holds `ServingNotes` fields (with `extra` strings)."""

    stack: str | None = None
    """"llama.cpp llama-server", "Ollama", "vLLM", or None when the stack is not known."""
    serving: dict[str, Any] = field(default_factory=dict)
    extra: dict[str, str] = field(default_factory=dict)
    revision: str | None = None
    """A revision the stack states for the model (Ollama's digest), else None."""
    revision_source: str | None = None
    weights_file: str | None = None
    """A weights file path the server names (Ollama's `FROM`, llama.cpp's model_path)."""
    weights_root: str | None = None
    """vLLM's `root`: the repo id or folder it loaded."""
    sources: list[str] = field(default_factory=list)
    """The requests these facts came from, e.g. "GET /props"."""
    notes: list[str] = field(default_factory=list)
    """Plain-words findings for the user (what a gateway hides, what could not be read)."""

    def merge(self, other: ServerFacts) -> None:
        """Fold `other` in; values already set win (first reader to know a fact names it)."""
        self.stack = self.stack or other.stack
        for key, value in other.serving.items():
            self.serving.setdefault(key, value)
        for key, value in other.extra.items():
            self.extra.setdefault(key, value)
        if self.revision is None and other.revision is not None:
            self.revision, self.revision_source = other.revision, other.revision_source
        self.weights_file = self.weights_file or other.weights_file
        self.weights_root = self.weights_root or other.weights_root
        self.sources += [s for s in other.sources if s not in self.sources]
        self.notes += other.notes


def _template_summary(template: str) -> tuple[str, str]:
    digest = hashlib.sha256(template.encode("utf-8")).hexdigest()
    return f"served by the server, sha256:{digest[:12]} ({len(template)} chars)", digest


def model_ids(listing: Any) -> list[str] | None:
    """The ids in an OpenAI `GET /v1/models` body, or None when it is not that shape."""
    parsed = listing if isinstance(listing, ModelListing) else ModelListing.parse(listing)
    return None if parsed is None else parsed.ids


def from_llama_props(props: LlamaProps | Any) -> ServerFacts | None:
    """llama.cpp's `/props` (typed, or a body parsed by `LlamaProps.parse`), or None when it is
    not llama.cpp's."""
    typed = props if isinstance(props, LlamaProps) else LlamaProps.parse(props)
    if typed is None:
        return None
    facts = ServerFacts(stack="llama.cpp llama-server", sources=["GET /props"])
    if typed.build_info:
        facts.serving["build"] = typed.build_info
    if typed.context_per_slot:
        facts.serving["context_size"] = typed.context_per_slot
    if typed.total_slots:
        facts.extra["parallel_slots"] = str(typed.total_slots)
    if typed.chat_template:
        facts.serving["chat_template"], facts.extra["chat_template_sha256"] = _template_summary(typed.chat_template)
    if typed.model_ftype:
        facts.serving["quantisation"] = typed.model_ftype
    if typed.model_path:
        facts.weights_file = typed.model_path
    return facts


def from_ollama(tags: Any, show: Any, model_id: str) -> ServerFacts | None:
    """Ollama's `/api/tags` entry for `model_id` and its `/api/show` body, or None when
    `tags` is not Ollama's shape. The tag's digest becomes the revision."""
    models = tags.get("models") if isinstance(tags, dict) else None
    if not isinstance(models, list):
        return None
    facts = ServerFacts(stack="Ollama", sources=["GET /api/tags"])
    wanted = {model_id, f"{model_id}:latest"} if ":" not in model_id else {model_id}
    tag = next(
        (m for m in models if isinstance(m, dict) and (m.get("name") in wanted or m.get("model") in wanted)), None
    )
    if tag is None:
        facts.notes.append(f"Ollama's /api/tags does not list {model_id!r}; its digest could not be read")
        return facts
    digest = text_value(tag.get("digest"), 100)
    if digest and re.fullmatch(r"(sha256:)?[0-9a-f]{64}", digest):
        facts.revision = "ollama:sha256:" + digest.removeprefix("sha256:")
        facts.revision_source = "Ollama's model digest (GET /api/tags)"
        facts.extra["ollama_digest"] = digest.removeprefix("sha256:")
    details = tag.get("details")
    if isinstance(show, dict):
        facts.sources.append("POST /api/show")
        details = show.get("details") if isinstance(show.get("details"), dict) else details
        template = show.get("template")
        if isinstance(template, str) and template:
            facts.serving["chat_template"], facts.extra["chat_template_sha256"] = _template_summary(template)
        parameters = text_value(show.get("parameters"), 1000)
        if parameters:
            facts.extra["ollama_parameters"] = parameters
        info = show.get("model_info")
        if isinstance(info, dict):
            for key, value in info.items():
                if isinstance(key, str) and key.endswith(".context_length") and positive_int(value):
                    facts.serving["context_size"] = positive_int(value)
                    break
        modelfile = show.get("modelfile")
        if isinstance(modelfile, str):
            match = re.search(r"^FROM\s+(/\S+)\s*$", modelfile, re.M)
            if match:
                facts.weights_file = match.group(1)
    if isinstance(details, dict):
        quant = text_value(details.get("quantization_level"), 200)
        if quant:
            facts.serving["quantisation"] = quant
        for key in ("format", "family", "parameter_size"):
            value = text_value(details.get(key), 200)
            if value:
                facts.extra[f"ollama_{key}"] = value
    return facts


def from_vllm(item: ListedModel | Any) -> ServerFacts | None:
    """vLLM's `/v1/models` entry for the model, or None when it is not vLLM's."""
    typed = item if isinstance(item, ListedModel) else ListedModel.parse(item)
    if typed is None or not typed.vllm:
        return None
    facts = ServerFacts(stack="vLLM", sources=["GET /v1/models"])
    if typed.max_model_len:
        facts.serving["context_size"] = typed.max_model_len
    if typed.root:
        facts.extra["vllm_root"] = typed.root
        facts.weights_root = typed.root
    if typed.parent:
        facts.extra["vllm_parent"] = typed.parent
    return facts


def gateway_findings(gateway: str, props_found: bool) -> list[str]:
    """What a gateway hides, as the notes `models add` records and prints."""
    hidden = [] if props_found else ["/props (build, chat template, context, slots)"]
    hidden.append("server `timings` in answers (server-side prompt/decode times)")
    return [
        f"through the {gateway} gateway these cannot be read: {'; '.join(hidden)}; "
        "state the upstream stack with --note stack=… (recorded as stated, not verified)"
    ]

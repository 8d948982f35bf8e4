"""What a server says about itself, as typed values: parsed here once, read by everyone.

A server describes itself in bodies of its own shape: the OpenAI `GET /v1/models` listing (vLLM
adds `root`, `parent` and `max_model_len` to each entry), llama.cpp's `GET /props`, vLLM's
`GET /version`. Each body is parsed by one constructor here (`ModelListing.parse`,
`LlamaProps.parse`, `engine_version`), which returns a frozen value or None when the body is not
that shape. Every reader (the serving fingerprint, `models add`'s serving notes, a run's server
identity, `local up`, the tool-call run's notes) takes these values, never the raw dicts.

What a run stored of it is read back here too, once, typed: its serving reading at each start
(`ServingReading`, `stored_readings`), its server identity (`StoredIdentity`), whether the tools
reached the prompt (`StoredToolsReach`) and vLLM's latency histograms (`StoredServerLatency`).
Each `from_stored` accepts any shape an older run stored (a field of another type reads as
absent) and never raises; no reader digs into the stored JSON itself.

Pure: fetching is `endpoint.props.fetch_props` and the catalogue's probe.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypedDict

from compare_tui.endpoint.prometheus import Histogram

__all__ = [
    "LlamaProps",
    "ListedModel",
    "ModelListing",
    "ServingReading",
    "StoredIdentity",
    "StoredServerLatency",
    "StoredToolsReach",
    "engine_version",
    "latest_fingerprint",
    "latest_reading",
    "positive_int",
    "stored_readings",
    "text_value",
]


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


_CAP = re.compile(
    r"['\"]?(supports_tools|supports_tool_calls|supports_parallel_tool_calls)['\"]?\s*:\s*(true|false)", re.I
)


def _template_caps(caps: Any) -> tuple[tuple[str, bool], ...]:
    """The tool capabilities in `chat_template_caps` (a dict, or the string form some builds send)."""
    if isinstance(caps, Mapping):
        found = {str(k): bool(v) for k, v in caps.items() if str(k).startswith("supports_") and "tool" in str(k)}
    elif isinstance(caps, str):
        found = {m.group(1): m.group(2).lower() == "true" for m in _CAP.finditer(caps)}
    else:
        found = {}
    return tuple(sorted(found.items()))


@dataclass(frozen=True, slots=True)
class LlamaProps:
    """llama.cpp's `GET /props`: the fields that change what a run measures."""

    build_info: str | None = None
    context_per_slot: int | None = None
    """`default_generation_settings.n_ctx` (older builds: top-level `n_ctx`): one slot's context."""
    total_slots: int | None = None
    chat_template: str | None = None
    """The whole template as served (None when the server sent none)."""
    model_path: str | None = None
    model_ftype: str | None = None
    """The quantisation, as llama.cpp names it."""
    threads: int | None = None
    template_caps: tuple[tuple[str, bool], ...] = ()
    """`chat_template_caps`' tool capabilities, sorted by name."""

    @classmethod
    def parse(cls, body: Any) -> LlamaProps | None:
        """The typed `/props`, or None when `body` is not llama.cpp's."""
        if not isinstance(body, Mapping) or not any(
            k in body for k in ("build_info", "default_generation_settings", "total_slots")
        ):
            return None
        settings = body.get("default_generation_settings")
        per_slot = positive_int(settings.get("n_ctx")) if isinstance(settings, Mapping) else None
        template = body.get("chat_template")
        return cls(
            build_info=text_value(body.get("build_info"), 200),
            context_per_slot=per_slot or positive_int(body.get("n_ctx")),
            total_slots=positive_int(body.get("total_slots")),
            chat_template=template if isinstance(template, str) and template else None,
            model_path=text_value(body.get("model_path")),
            model_ftype=text_value(body.get("model_ftype"), 100),
            threads=positive_int(body.get("n_threads")),
            template_caps=_template_caps(body.get("chat_template_caps")),
        )

    @property
    def chat_template_sha256(self) -> str | None:
        """The served template's sha256 (hex), None without one."""
        return hashlib.sha256(self.chat_template.encode("utf-8")).hexdigest() if self.chat_template else None

    @property
    def context_total(self) -> int | None:
        """Context over every slot, when both are reported."""
        if self.context_per_slot and self.total_slots:
            return self.context_per_slot * self.total_slots
        return None

    @property
    def caps(self) -> dict[str, bool]:
        return dict(self.template_caps)


@dataclass(frozen=True, slots=True)
class ListedModel:
    """One entry of `GET /v1/models`."""

    id: str
    owned_by: str | None = None
    root: str | None = None
    """vLLM: the folder or repository id it loaded."""
    parent: str | None = None
    max_model_len: int | None = None
    vllm: bool = False
    """Whether the entry is vLLM's (it alone adds `max_model_len` and `root`, and owns its
    models as "vllm")."""

    @classmethod
    def parse(cls, item: Any) -> ListedModel | None:
        if not isinstance(item, Mapping) or not isinstance(item.get("id"), str):
            return None
        owner = item.get("owned_by")
        return cls(
            id=item["id"],
            owned_by=None if owner is None else str(owner),
            root=text_value(item.get("root")),
            parent=text_value(item.get("parent")),
            max_model_len=positive_int(item.get("max_model_len")),
            vllm=owner == "vllm" or ("max_model_len" in item and "root" in item),
        )


@dataclass(frozen=True, slots=True)
class ModelListing:
    """`GET /v1/models`: every entry with an id, in the server's order."""

    models: tuple[ListedModel, ...]
    owners: frozenset[str] = frozenset()
    """Every `owned_by` the listing names (llama-server's "llamacpp" answers any id)."""

    @classmethod
    def parse(cls, body: Any) -> ModelListing | None:
        """The typed listing, or None when `body` has no `data` list (not OpenAI's shape)."""
        data = body.get("data") if isinstance(body, Mapping) else None
        if not isinstance(data, list):
            return None
        models = tuple(m for m in (ListedModel.parse(item) for item in data) if m is not None)
        owners = frozenset(str(i.get("owned_by")) for i in data if isinstance(i, Mapping))
        return cls(models, owners)

    @property
    def ids(self) -> list[str]:
        return [m.id for m in self.models]

    def find(self, model_id: str) -> ListedModel | None:
        return next((m for m in self.models if m.id == model_id), None)


def engine_version(body: Any) -> str | None:
    """vLLM's `GET /version` body → its version, else None."""
    return text_value(body.get("version"), 100) if isinstance(body, Mapping) else None


@dataclass(frozen=True, slots=True)
class StoredIdentity:
    """A run's recorded server identity (`environment["server"]`, written by
    `engine.environment`), read back typed: what the server listed and said in `/props`."""

    model_ids: tuple[str, ...] | None = None
    """The ids `/v1/models` listed, None when it was not read."""
    props: Mapping[str, Any] | None = None
    """The recorded `/props` summary (`build_info`, `chat_template_sha256`, …), None when the
    server had none or it could not be read."""
    props_error: str | None = None
    """Why `/props` could not be read, when it was asked and failed."""
    recorded: Mapping[str, Any] = field(default_factory=dict)
    """The whole record as stored (`{}` when none), for a surface that lists every field."""

    @classmethod
    def of(cls, environment: Mapping[str, Any] | None) -> StoredIdentity:
        server = (environment or {}).get("server")
        if not isinstance(server, Mapping):
            return cls()
        models = server.get("models")
        ids = models.get("ids") if isinstance(models, Mapping) else None
        props = server.get("props")
        error = props.get("error") if isinstance(props, Mapping) else None
        return cls(
            model_ids=tuple(str(i) for i in ids) if isinstance(ids, list) else None,
            props=props if isinstance(props, Mapping) and error is None else None,
            props_error=str(error) if error is not None else None,
            recorded=_string_keyed(server),
        )

    def prop(self, key: str) -> Any:
        """One recorded `/props` field, None when not recorded."""
        return (self.props or {}).get(key)


@dataclass(frozen=True, slots=True)
class StoredToolsReach:
    """Whether the offered tools reached the prompt as the server rendered it, as a run stored it
    (`environment["tools_reach"]`, or a tool-call run's `serving["tools_reach"]`: written by
    `engine.tools_reach.ToolsReach.as_dict`), read back typed."""

    reached: bool
    how: str | None = None
    """Which request showed it and the two sizes."""

    @classmethod
    def from_stored(cls, value: Any) -> StoredToolsReach | None:
        """The stored check, None when none is stored (or not in this shape). Never raises."""
        if not isinstance(value, Mapping) or not isinstance(value.get("reached"), bool):
            return None
        how = value.get("how")
        return cls(value["reached"], None if how is None else str(how))


@dataclass(frozen=True, slots=True)
class StoredServerLatency:
    """vLLM's own latency histograms over a run's requests, as the run stored them
    (`environment["server_latency"]`, from its `/metrics` before and after each execution:
    `engine.server_latency.merged`), read back typed."""

    source: str | None = None
    """Where the figures came from (`prometheus.VLLM_METRICS`)."""
    ttft: Histogram | None = None
    e2e: Histogram | None = None
    requests_answered: int = 0
    """The run's requests the server answered while it counted."""
    executions: int = 1
    """How many of the run's executions the histograms cover."""

    @classmethod
    def from_stored(cls, value: Any) -> StoredServerLatency | None:
        """The stored figures, None when none are stored. A histogram of another shape reads as
        absent. Never raises."""
        if not isinstance(value, Mapping):
            return None
        answered = value.get("requests_answered")
        return cls(
            source=text_value(value.get("source")),
            ttft=_histogram(value.get("ttft")),
            e2e=_histogram(value.get("e2e")),
            requests_answered=answered if isinstance(answered, int) and not isinstance(answered, bool) else 0,
            executions=positive_int(value.get("executions")) or 1,
        )


def _histogram(value: Any) -> Histogram | None:
    if not isinstance(value, Mapping):
        return None
    try:
        return Histogram.from_dict(value)
    except (TypeError, ValueError):
        return None


def _texts(value: Any) -> tuple[str, ...] | None:
    return tuple(str(v) for v in value) if isinstance(value, list | tuple) else None


class StoredReading(TypedDict, total=False):
    """A serving reading as a run stores it (`RunRecord.serving`), as `engine.serving.read_server`
    writes it and its check completes it: `ServingReading`'s fields, and `when` (`start` or
    `resume`). Runs stored by older versions may hold any shape: read them with `from_stored`."""

    captured_at: str
    fingerprint: dict[str, Any]
    """The flat serving fingerprint (`endpoint.fingerprint`)."""
    notes: list[str]
    unread: str
    not_served: list[str]
    stated: dict[str, str]
    loaded: dict[str, str]
    """`catalogue.serving_check.LoadedCheck.as_dict`."""
    when: str


@dataclass(frozen=True, slots=True)
class ServingReading:
    """One serving reading a run stored (`RunRecord.serving`: one per start of the run, written
    by `engine.serving.read_server`, `loaded` added by its check), read back typed. Readers take
    these, never the stored dicts: `from_stored` is the one place they are dug into."""

    captured_at: str | None = None
    fingerprint: Mapping[str, Any] = field(default_factory=dict)
    """The serving fingerprint (`endpoint.fingerprint`: a flat dict of the fields the server
    reported), `{}` when nothing was read."""
    notes: tuple[str, ...] = ()
    unread: str | None = None
    """Why the server's account could not be read, else None."""
    not_served: tuple[str, ...] | None = None
    """The ids the server listed when it did not serve the entry's model, else None."""
    stated: Mapping[str, str] = field(default_factory=dict)
    """vLLM settings it does not expose, as the catalogue states them (`{label: text}`)."""
    loaded: Mapping[str, Any] | None = None
    """The loaded-weights check (`catalogue.serving_check.LoadedCheck.as_dict`), None when not
    recorded."""

    @classmethod
    def from_stored(cls, value: Any) -> ServingReading | None:
        """The reading a stored value holds, None when it is not a reading (not a mapping).
        Tolerant of every shape older runs stored: a field of another type is read as absent.
        Never raises."""
        if not isinstance(value, Mapping):
            return None
        fingerprint, stated, loaded = value.get("fingerprint"), value.get("stated"), value.get("loaded")
        captured, unread = value.get("captured_at"), value.get("unread")
        return cls(
            captured_at=None if captured is None else str(captured),
            fingerprint=_string_keyed(fingerprint),
            notes=_texts(value.get("notes")) or (),
            unread=None if unread is None else str(unread),
            not_served=_texts(value.get("not_served")),
            stated={k: str(v) for k, v in _string_keyed(stated).items()},
            loaded=_string_keyed(loaded) if isinstance(loaded, Mapping) else None,
        )

    def as_stored(self) -> StoredReading:
        """The JSON-ready dict the engine stores for this reading (`from_stored`'s inverse)."""
        out: StoredReading = {} if self.captured_at is None else {"captured_at": self.captured_at}
        out |= {"fingerprint": dict(self.fingerprint), "notes": list(self.notes)}
        if self.unread is not None:
            out["unread"] = self.unread
        if self.not_served is not None:
            out["not_served"] = list(self.not_served)
        if self.stated:
            out["stated"] = dict(self.stated)
        if self.loaded is not None:
            out["loaded"] = dict(self.loaded)
        return out

    @property
    def stack(self) -> str | None:
        """The stack the server named (`llama.cpp llama-server`, `vLLM`), None when unread."""
        stack = self.fingerprint.get("stack")
        return str(stack) if stack else None


def _string_keyed(value: Any) -> dict[str, Any]:
    return {str(k): v for k, v in value.items()} if isinstance(value, Mapping) else {}


def stored_readings(serving: Any) -> tuple[ServingReading, ...]:
    """A run's stored readings (`RunRecord.serving`), oldest first; what is not a reading is
    skipped, and a value that is not a list reads as none. Never raises."""
    if not isinstance(serving, list | tuple):
        return ()
    return tuple(r for r in map(ServingReading.from_stored, serving) if r is not None)


def latest_reading(serving: Any) -> ServingReading | None:
    """The reading of a run's latest start (`RunRecord.serving`), None when it recorded none."""
    readings = stored_readings(serving)
    return readings[-1] if readings else None


def stack_of(serving: Any) -> str | None:
    """The stack the run's latest serving reading names (`llama.cpp llama-server`, `vLLM`)."""
    latest = latest_reading(serving)
    return latest.stack if latest is not None else None


def latest_fingerprint(readings: Sequence[Any]) -> Mapping[str, Any]:
    """The serving fingerprint of a run's latest reading (`RunRecord.serving`), else {}."""
    latest = latest_reading(readings)
    return latest.fingerprint if latest is not None else {}


CACHE_CONFIG_LABELS = (
    "block_size",
    "cache_dtype",
    "enable_prefix_caching",
    "prefix_caching_hash_algo",
    "gpu_memory_utilization",
    "kv_cache_memory_bytes",
    "num_gpu_blocks_override",
    "calculate_kv_scales",
    "sliding_window",
    "cpu_offload_gb",
)
"""The labels of vLLM's `vllm:cache_config_info` a fingerprint keeps (its `CacheConfig` fields
that change what a run measures), in this order; the engine index, and figures the server
derives at each start from the memory it finds free (`num_gpu_blocks`), are left out."""


def vllm_cache_config(samples: Sequence[Any]) -> str | None:
    """`vllm:cache_config_info`'s labels (the first engine's) as `name=value, …` in
    `CACHE_CONFIG_LABELS` order, from parsed `/metrics` samples (`prometheus.parse_exposition`);
    None when the server exports no such gauge."""
    for sample in samples:
        if getattr(sample, "name", None) == "vllm:cache_config_info":
            labels = dict(sample.labels)
            kept = [f"{k}={labels[k]}" for k in CACHE_CONFIG_LABELS if k in labels and labels[k] not in ("", "None")]
            return ", ".join(kept) or None
    return None


@dataclass(frozen=True, slots=True)
class TokenizedPrompt:
    """vLLM's `POST /tokenize` answer for a chat (`messages`, and `tools` when sent): the prompt its
    chat template renders, as token ids."""

    count: int
    tokens: tuple[int, ...]

    @classmethod
    def parse(cls, body: Any) -> TokenizedPrompt | None:
        if not isinstance(body, Mapping):
            return None
        tokens = body.get("tokens")
        if not isinstance(tokens, list) or not all(isinstance(t, int) and not isinstance(t, bool) for t in tokens):
            return None
        count = positive_int(body.get("count")) or len(tokens)
        return cls(count, tuple(tokens))

    @property
    def sha256(self) -> str:
        """sha256 (hex) of the ids, comma-separated: the same template renders the same ids."""
        return hashlib.sha256(",".join(map(str, self.tokens)).encode("ascii")).hexdigest()

"""The model catalogue (docs/catalogue.md) as pydantic models.

Validation here covers shape: types, URL form, digest syntax, names. Whether an entry is
*runnable* (pins present and consistent) is decided by `refusals.check_entry`, so that a
catalogue with one unpinned entry still loads and the refusal names that entry clearly.
Unknown fields are rejected everywhere, so a typo is an error, not a silently ignored key.
"""

from __future__ import annotations

import datetime as dt
import difflib
import re
from pathlib import Path, PurePosixPath
from typing import Annotated, Any, Literal
from urllib.parse import urlsplit

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, field_validator, model_validator

from compare_tui.catalogue.errors import UnknownModel
from compare_tui.catalogue.keys import provider_key_kind
from compare_tui.endpoint.dcgm import parse_gpu_telemetry
from compare_tui.vocabulary import ModelKind


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


_DIGEST = re.compile(r"^sha256:[0-9a-f]{64}$")


def _check_digest(value: str) -> str:
    value = value.strip().lower()
    if not _DIGEST.match(value):
        raise ValueError('expected "sha256:" followed by 64 hex digits (as printed by `sha256sum`)')
    return value


def _check_file_name(value: str) -> str:
    path = PurePosixPath(value)
    if (
        not value
        or "\\" in value
        or path.is_absolute()
        or ".." in path.parts
        or any(ord(c) < 0x20 for c in value)
        or str(path) != value
    ):
        raise ValueError(
            f"file names are paths relative to weights_dir, with '/' separators and no '..' (got {value!r})"
        )
    return value


Digest = Annotated[str, AfterValidator(_check_digest)]
"""`sha256:<64 lowercase hex>`; upper-case hex is accepted and lower-cased."""
FileName = Annotated[str, AfterValidator(_check_file_name)]

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:/@+-]{0,127}$")
_ENV_VAR = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")


def _date_string(value: Any) -> Any:
    # TOML parses an unquoted `captured = 2026-11-30` as a date; accept it as the string.
    if isinstance(value, dt.datetime):
        raise ValueError("give a date (YYYY-MM-DD), not a date and time")
    if isinstance(value, dt.date):
        return value.isoformat()
    return value


def _check_date(value: str) -> str:
    try:
        if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", value):
            raise ValueError
        dt.date.fromisoformat(value)
    except ValueError:
        raise ValueError(f'expected a date as YYYY-MM-DD, e.g. "2026-11-30" (got {value!r})') from None
    return value


def _check_gpu_telemetry(value: str) -> str:
    return parse_gpu_telemetry(value).spec


class ServingNotes(_Strict):
    """How the model is served, as stated by the user. Recorded, never verified."""

    stack: str | None = None
    """e.g. "llama.cpp llama-server", "vLLM 0.6.3"."""
    chat_template: str | None = None
    tool_parser: str | None = None
    quantisation: str | None = None
    build: str | None = None
    """Server build or version string."""
    context_size: int | None = Field(default=None, ge=1)
    notes: str | None = None
    extra: dict[str, str] = {}
    """Anything else worth recording, as name -> value strings."""
    gpu_telemetry: Annotated[str, AfterValidator(_check_gpu_telemetry)] | None = None
    """`dcgm=HOST:PORT`: the DCGM exporter of the host serving this endpoint, read for the run's
    GPU memory when that host is not this machine (`run --gpu-telemetry` overrides it)."""


class HardwareCost(_Strict):
    """Amortised hardware cost: the report charges wall-clock time at this rate."""

    basis: Literal["hardware"]
    usd_per_hour: float = Field(gt=0)
    """What the whole serving box costs per hour (all `gpu_count` GPUs together)."""
    gpu_count: int | None = Field(default=None, ge=0)
    """How many GPUs `usd_per_hour` covers (0: a CPU box); recorded, not multiplied. None: not
    stated (`models add` reads it from NVML or the DCGM exporter, or asks; never assumes one)."""
    note: str | None = None


class TokenPriceCost(_Strict):
    """A provider's token price, with when and where it was read (prices change)."""

    basis: Literal["token_price"]
    usd_per_mtok_input: float = Field(ge=0)
    usd_per_mtok_output: float = Field(ge=0)
    usd_per_mtok_cached: float | None = Field(default=None, ge=0)
    """Price of cached prompt tokens, where the provider discounts them."""
    captured: Annotated[str, BeforeValidator(_date_string), AfterValidator(_check_date)]
    """The date the price was read, YYYY-MM-DD."""
    source: str = Field(min_length=1)
    """Where the price was read (a URL or a document name)."""
    currency: str = Field(default="USD", pattern=r"^[A-Z]{3}$")
    """ISO 4217 code of the figures above (the field names say usd for the common case)."""


CostBasis = Annotated[HardwareCost | TokenPriceCost, Field(discriminator="basis")]


class ModelEntry(_Strict):
    """One pinned candidate model (one `[[model]]` table)."""

    name: str
    """What users type and see; unique within the catalogue."""
    kind: ModelKind
    endpoint: str
    """Base URL of an OpenAI-compatible API, usually ending in /v1 (no trailing slash)."""
    model: str = Field(min_length=1)
    """The model id sent in requests."""
    revision: str | None = None
    weights_digest: Digest | None = None
    """For local models: `refusals.combined_digest(files)`; for hosted, the host's digest."""
    weights_dir: Path | None = None
    """Local only: the folder the server loads weights from."""
    files: dict[FileName, Digest] = {}
    """Per-file pins, path relative to weights_dir -> digest. Required for local models;
    a hosted entry may record the host's stated pins (not verified)."""
    key_env: str | None = None
    """The *name* of the environment variable holding a virtual key; never the key."""
    serving: ServingNotes = ServingNotes()
    cost: CostBasis | None = None
    gateway: Literal["litellm"] | None = None
    """Set when `endpoint` is a gateway in front of the serving stack (which then hides
    the stack's own self-description and timings)."""

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        if not _NAME.match(value):
            raise ValueError(
                f"use 1-128 letters, digits and . _ : / @ + -, starting with a letter or digit (got {value!r})"
            )
        return value

    @field_validator("endpoint")
    @classmethod
    def _endpoint(cls, value: str) -> str:
        parts = urlsplit(value.strip())
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f'expected an http(s) URL such as "http://127.0.0.1:8081/v1" (got {value!r})')
        if parts.username or parts.password:
            # Never echo the URL here: the user:password part is key material.
            raise ValueError(
                "the URL contains credentials; remove them and name the variable holding a virtual key in key_env"
            )
        if parts.query or parts.fragment:
            raise ValueError("give the base URL only, without ?query or #fragment")
        return value.strip().rstrip("/")

    @field_validator("key_env")
    @classmethod
    def _key_env(cls, value: str | None) -> str | None:
        if value is None:  # no key: the endpoint needs none (also what model_dump() writes back)
            return None
        provider = provider_key_kind(value)
        if provider is not None:
            raise ValueError(
                f"key_env must name an environment variable, but it holds what looks like "
                f"a provider API key ({provider}); remove it from this file (and revoke it "
                'if the file was shared), then set key_env = "COMPARE_TUI_KEY" and export '
                "a virtual key in that variable"
            )
        if not _ENV_VAR.match(value):
            raise ValueError(
                "key_env is the name of an environment variable (letters, digits, _; not "
                'starting with a digit), e.g. "COMPARE_TUI_KEY"'
            )
        return value

    @model_validator(mode="after")
    def _kind_fields(self) -> ModelEntry:
        if self.kind == ModelKind.HOSTED and self.weights_dir is not None:
            raise ValueError(
                'weights_dir is for kind = "local" only (hosted weights are not hashed '
                'here); remove weights_dir or set kind = "local"'
            )
        return self

    def pins(self) -> dict[str, Any]:
        """What the run store records about this model: every field except `key_env`
        (how to authenticate is not what was run), as JSON-ready values."""
        return self.model_dump(mode="json", exclude={"key_env"})


class Catalogue(BaseModel):
    """The loaded catalogue: entries in file order, names unique."""

    model_config = ConfigDict(frozen=True)

    models: tuple[ModelEntry, ...] = ()
    path: Path | None = None
    """The file it was loaded from, for messages; None when built in code."""

    @model_validator(mode="after")
    def _unique_names(self) -> Catalogue:
        seen: set[str] = set()
        for entry in self.models:
            if entry.name in seen:
                raise ValueError(f"model name {entry.name!r} appears more than once; rename one")
            seen.add(entry.name)
        return self

    def names(self) -> list[str]:
        return [entry.name for entry in self.models]

    def __len__(self) -> int:
        return len(self.models)

    def __contains__(self, name: object) -> bool:
        return any(entry.name == name for entry in self.models)

    def get(self, name: str) -> ModelEntry:
        """The entry called `name`; `UnknownModel` (a `CatalogueError`) names the
        catalogue's file and lists the names it does have."""
        for entry in self.models:
            if entry.name == name:
                return entry
        where = f"the catalogue at {self.path}" if self.path else "the catalogue"
        if not self.models:
            message = f"unknown model {name!r}; {where} has no models"
        else:
            message = f"unknown model {name!r}; {where} has: {', '.join(self.names())}"
            close = difflib.get_close_matches(name, self.names(), n=1)
            if close:
                message += f" (did you mean {close[0]!r}?)"
        message += f"; to add it: `compare-tui models add {name} --endpoint URL …` (see --help)"
        raise UnknownModel(name, self.path, message)

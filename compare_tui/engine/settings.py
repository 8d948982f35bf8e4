"""Run settings: the manifest's `[run]` table, overridden per run from the CLI or the TUI."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields
from typing import Any, TypedDict, cast

from compare_tui.goldset.models import GoldenSet
from compare_tui.vocabulary import PromptCache

DEFAULT_MAX_TOKENS = 256
DEFAULT_CONCURRENCY = 4
DEFAULT_TIMEOUT_S = 120.0


@dataclass(frozen=True, slots=True)
class RunOverrides:
    """What the user asked for on this run; None keeps the manifest's value."""

    attempts: int | None = None
    temperature: float | None = None
    max_tokens: int | None = None
    concurrency: int = DEFAULT_CONCURRENCY
    timeout_s: float = DEFAULT_TIMEOUT_S
    prompt_cache: PromptCache = PromptCache.SERVER


class StoredSettings(TypedDict):
    """`RunSettings` as a run stores them (`as_dict`): the prompt cache as its value."""

    attempts: int
    temperature: float
    max_tokens: int
    concurrency: int
    timeout_s: float
    prompt_cache: str


@dataclass(frozen=True, slots=True)
class RunSettings:
    """The settings a run actually used; stored with the run and compared by `reproduce`.

    The one set of run settings: a golden-set run resolves it from the manifest and the
    user's overrides (`resolve_settings`); a tool-call run sends one request per scenario,
    so it keeps `attempts` at 1 (`toolcall.run.launch.check_request` refuses any other). Each
    setting has its name and default here only."""

    attempts: int = 1
    temperature: float = 0.0
    max_tokens: int = DEFAULT_MAX_TOKENS
    concurrency: int = DEFAULT_CONCURRENCY
    timeout_s: float = DEFAULT_TIMEOUT_S
    prompt_cache: PromptCache = PromptCache.SERVER
    """Whether the server may reuse a cached prompt prefix (`vocabulary.PromptCache`); runs
    stored before the setting existed read as `server`, which is what they had."""

    def as_dict(self) -> StoredSettings:
        # Every field, in field order (a test holds `StoredSettings` to the same keys).
        return cast(StoredSettings, asdict(self) | {"prompt_cache": str(self.prompt_cache)})

    @classmethod
    def from_dict(cls, recorded: Mapping[str, Any]) -> RunSettings:
        """The settings a run recorded (`as_dict`, with any other keys beside them ignored).
        A key the record lacks takes its default: a tool-call run's stored settings have never
        carried `attempts` (one request per scenario)."""
        values = {f.name: recorded[f.name] for f in fields(cls) if f.name in recorded}
        if "prompt_cache" in values:
            values["prompt_cache"] = PromptCache(values["prompt_cache"])
        return cls(**values)

    def overrides(self) -> RunOverrides:
        """Overrides that resolve to exactly these settings, whatever the set's manifest says."""
        return RunOverrides(**asdict(self))


def resolve_settings(goldset: GoldenSet, overrides: RunOverrides) -> RunSettings:
    manifest = goldset.manifest.run
    if overrides.concurrency < 1:
        raise ValueError("concurrency must be at least 1")
    return RunSettings(
        attempts=overrides.attempts if overrides.attempts is not None else manifest.attempts,
        temperature=overrides.temperature if overrides.temperature is not None else manifest.temperature,
        max_tokens=overrides.max_tokens or manifest.max_tokens or DEFAULT_MAX_TOKENS,
        concurrency=overrides.concurrency,
        timeout_s=overrides.timeout_s,
        prompt_cache=overrides.prompt_cache,
    )

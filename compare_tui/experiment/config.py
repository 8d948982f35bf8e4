"""An experiment's saved configuration: the controls held constant and the arms compared.

Configuration only: no figure is ever stored here. The controls are the golden set (id,
version, digest) and the run settings; each arm is one configuration — a catalogue entry as
recorded when the experiment was made (its pins, endpoint and stated serving notes) plus any
per-arm settings — run `repeats` times.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from compare_tui.experiment.cells import RUN_SETTINGS, cell_key, normalised_settings
from compare_tui.vocabulary import PromptCache

if TYPE_CHECKING:
    from compare_tui.catalogue import ModelEntry
    from compare_tui.goldset.models import GoldenSet

MIN_REPEATS, MAX_REPEATS = 1, 50
MIN_ARMS = 2
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
# The same bounds the golden set manifest and the engine put on these settings.
_SETTING_BOUNDS: dict[str, tuple[type, float, float]] = {
    "attempts": (int, 1, 20),
    "temperature": (float, 0.0, 2.0),
    "max_tokens": (int, 1, 1_000_000),
    "concurrency": (int, 1, 256),
    "timeout_s": (float, 0.001, 86_400.0),
}


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def check_name(name: str) -> str:
    """An experiment name: 1-64 letters, digits, `.`, `_`, `-`, starting with a letter or digit."""
    if not _NAME.match(name):
        raise ValueError(
            f"experiment names use 1-64 letters, digits and . _ -, starting with a letter or digit (got {name!r})"
        )
    return name


def check_setting(name: str, value: Any) -> int | float | str:
    """One run setting, converted and bounds-checked; `ValueError` says what was expected."""
    if name == "prompt_cache":
        try:
            return str(PromptCache(value))
        except ValueError:
            raise ValueError(f"setting prompt_cache must be one of {', '.join(PromptCache)}, got {value!r}") from None
    if name not in _SETTING_BOUNDS:
        raise ValueError(f"unknown setting {name!r}: use one of {', '.join(RUN_SETTINGS)}")
    kind, low, high = _SETTING_BOUNDS[name]
    try:
        number = float(value)
        if kind is int and not number.is_integer():
            raise ValueError
    except (TypeError, ValueError):
        raise ValueError(
            f"setting {name} must be {'a whole number' if kind is int else 'a number'}, got {value!r}"
        ) from None
    if not low <= number <= high:
        raise ValueError(f"setting {name} must be within {low:g}..{high:g}, got {value!r}")
    return int(number) if kind is int else number


class GoldenSetRef(_Strict):
    """The golden set every arm runs: the digest proves a run used this very set."""

    workload_id: str
    name: str = ""
    version: str
    digest: str
    path: str
    """Where the set was when the experiment was made (used to launch runs)."""


class ArmConfig(_Strict):
    """One configuration under test."""

    label: str = Field(min_length=1)
    """What the arm is called in every view (the model name, plus any per-arm settings)."""
    model: dict[str, Any]
    """The catalogue entry as recorded (`ModelEntry.pins()`) when the experiment was made."""
    overrides: dict[str, Any] = {}
    """Per-arm settings that replace the experiment's controls for this arm only."""

    @field_validator("overrides")
    @classmethod
    def _overrides(cls, value: dict[str, Any]) -> dict[str, Any]:
        return {name: check_setting(name, item) for name, item in value.items()}

    @property
    def model_name(self) -> str:
        return str(self.model.get("name", ""))


class ExperimentConfig(_Strict):
    """What is saved for an experiment (`Store.create_experiment` keeps it as JSON)."""

    goldset: GoldenSetRef
    settings: dict[str, Any]
    """The controls: every run setting (`cells.RUN_SETTINGS`), resolved when it was made."""
    repeats: int = Field(ge=MIN_REPEATS, le=MAX_REPEATS)
    """N: how many completed runs each arm wants."""
    arms: tuple[ArmConfig, ...] = Field(min_length=MIN_ARMS)
    sequential: bool = False
    """`--stop-when-settled`: where the question is arm-vs-arm (`experiment.sequential`), the
    arms run paired and interleaved, each stopped once its verdict against the reference arm
    (the first) has settled; elsewhere every run covers the full set."""

    @field_validator("settings")
    @classmethod
    def _settings(cls, value: dict[str, Any]) -> dict[str, Any]:
        # An experiment made before the prompt-cache setting ran with the server's own cache.
        value = {"prompt_cache": str(PromptCache.SERVER)} | value
        missing = [name for name in RUN_SETTINGS if name not in value]
        if missing:
            raise ValueError(f"settings lack {', '.join(missing)}")
        return {name: check_setting(name, value[name]) for name in RUN_SETTINGS}

    @model_validator(mode="after")
    def _distinct_arms(self) -> ExperimentConfig:
        # Identical configurations first: the more useful message when one arm is given twice.
        seen: dict[str, str] = {}
        for arm in self.arms:
            key = self.arm_cell(arm)
            if key in seen:
                raise ValueError(
                    f"arms {seen[key]!r} and {arm.label!r} have an identical configuration "
                    "(same model, endpoint, serving notes and settings): nothing would differ"
                )
            seen[key] = arm.label
        labels = [arm.label for arm in self.arms]
        for label in labels:
            if labels.count(label) > 1:
                raise ValueError(f"two arms are labelled {label!r}; give each arm its own label")
        return self

    def arm_settings(self, arm: ArmConfig) -> dict[str, Any]:
        """The settings this arm's runs use: the controls with the arm's overrides applied."""
        return normalised_settings({**self.settings, **arm.overrides})

    def arm_cell(self, arm: ArmConfig) -> str:
        """The cell key this arm's runs must have."""
        return cell_key(self.goldset.digest, arm.model, self.arm_settings(arm))

    def arm(self, label: str) -> ArmConfig:
        for arm in self.arms:
            if arm.label == label:
                return arm
        raise KeyError(f"no arm {label!r}; the arms are {', '.join(a.label for a in self.arms)}")

    def with_repeats(self, repeats: int) -> ExperimentConfig:
        """The same experiment wanting `repeats` runs per arm (validated)."""
        return ExperimentConfig.model_validate({**self.model_dump(mode="json"), "repeats": repeats})

    def with_sequential(self) -> ExperimentConfig:
        """The same experiment with `--stop-when-settled` on."""
        return ExperimentConfig.model_validate({**self.model_dump(mode="json"), "sequential": True})


def arm_label(model_name: str, overrides: Mapping[str, Any]) -> str:
    """The default label: the model name, with per-arm settings in brackets when there are any."""
    if not overrides:
        return model_name
    shown = (f"{k}={v:g}" if isinstance(v, int | float) else f"{k}={v}" for k, v in sorted(overrides.items()))
    return f"{model_name} [{', '.join(shown)}]"


def parse_arm_spec(spec: str) -> tuple[str, dict[str, int | float | str]]:
    """`"MODEL"` or `"MODEL key=value ..."` (per-arm settings) → (model name, settings)."""
    parts = spec.split()
    if not parts:
        raise ValueError(
            "an empty --arm: give a catalogue model name, optionally followed by settings such as `temperature=0.7`"
        )
    overrides: dict[str, int | float | str] = {}
    for part in parts[1:]:
        name, sep, value = part.partition("=")
        if not sep or not value:
            raise ValueError(f"arm {spec!r}: expected key=value after the model name, got {part!r}")
        overrides[name] = check_setting(name, value)
    return parts[0], overrides


def define_experiment(
    goldset: GoldenSet,
    arms: list[tuple[ModelEntry, dict[str, Any]]],
    settings: Mapping[str, Any],
    repeats: int,
    *,
    sequential: bool = False,
) -> ExperimentConfig:
    """A new experiment's configuration: the set, the controls and (entry, per-arm settings)
    for each arm, recorded as they are now. `ValidationError`/`ValueError` when invalid."""
    return ExperimentConfig(
        goldset=GoldenSetRef(
            workload_id=goldset.manifest.workload_id,
            name=goldset.manifest.name,
            version=goldset.manifest.version,
            digest=goldset.digest,
            path=str(goldset.root),
        ),
        settings=dict(settings),
        repeats=repeats,
        arms=tuple(
            ArmConfig(label=arm_label(entry.name, overrides), model=entry.pins(), overrides=overrides)
            for entry, overrides in arms
        ),
        sequential=sequential,
    )

"""Where compare-tui keeps its files (XDG base directories). Pure functions: nothing is
created here; callers create what they write into."""

from __future__ import annotations

import os
from pathlib import Path

from compare_tui.settings import config_dir as settings_config_dir
from compare_tui.settings import current


def _xdg(var: str, fallback: str) -> Path:
    value = os.environ.get(var)
    return Path(value) if value and os.path.isabs(value) else Path.home() / fallback


def data_dir() -> Path:
    """`$XDG_DATA_HOME/compare-tui` (default `~/.local/share/compare-tui`)."""
    return _xdg("XDG_DATA_HOME", ".local/share") / "compare-tui"


def bundles_dir() -> Path:
    """`$XDG_DATA_HOME/compare-tui/bundles`: where the TUI publishes (one folder per comparison or run)."""
    return data_dir() / "bundles"


def state_dir() -> Path:
    """`$COMPARE_TUI_STATE_DIR`, else `$XDG_STATE_HOME/compare-tui`: pids, logs, local servers."""
    override = current().state_dir
    if override:
        return override
    return _xdg("XDG_STATE_HOME", ".local/state") / "compare-tui"


def config_dir() -> Path:
    """`$XDG_CONFIG_HOME/compare-tui` (default `~/.config/compare-tui`): the user's preferences."""
    return settings_config_dir()


def user_config_path() -> Path:
    """The config file (`config.toml` in `config_dir()`): the TUI's theme chosen last, and the
    `[settings]` table `settings.current` reads."""
    return config_dir() / "config.toml"


def cache_dir() -> Path:
    """`$XDG_CACHE_HOME/compare-tui` (default `~/.cache/compare-tui`)."""
    return _xdg("XDG_CACHE_HOME", ".cache") / "compare-tui"


def store_path(explicit: str | os.PathLike[str] | None = None) -> Path:
    """The run store: `--store`, else `$COMPARE_TUI_STORE`, else `<data dir>/runs.sqlite`."""
    if explicit:
        return Path(explicit)
    env = current().store
    if env:
        return env
    return data_dir() / "runs.sqlite"


def catalogue_path(explicit: str | os.PathLike[str] | None = None) -> Path:
    """The model catalogue: `--models`, else `$COMPARE_TUI_MODELS`, else the one `local up` wrote
    (`<state dir>/local/models.toml`)."""
    if explicit:
        return Path(explicit)
    env = current().models
    if env:
        return env
    return state_dir() / "local" / "models.toml"


def local_models_dir() -> Path:
    """Where the embedded default assembles its GGUF files (`$COMPARE_TUI_MODELS_DIR` overrides)."""
    override = current().models_dir
    return override if override else data_dir() / "models"


def hf_hub_cache() -> Path:
    """The Hugging Face hub cache a server on this machine loads repository ids from, as the
    `huggingface_hub` library finds it: `$HF_HUB_CACHE` (or the older `$HUGGINGFACE_HUB_CACHE`),
    else `$HF_HOME/hub`, else `$XDG_CACHE_HOME/huggingface/hub` (default `~/.cache/huggingface/hub`)."""
    for var in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE"):
        value = os.environ.get(var)
        if value:
            return Path(value).expanduser()
    home = os.environ.get("HF_HOME")
    if home:
        return Path(home).expanduser() / "hub"
    return _xdg("XDG_CACHE_HOME", ".cache") / "huggingface" / "hub"

"""Every setting compare-tui reads, once: its variable, its key in the config file, what it sets,
the flag that overrides it and the default (`ENVIRONMENT`), and the one object they are read
into (`Settings`, validated as it is read: `current()`). A flag wins over the variable, the
variable over the config file's `[settings]` table (`config.toml` in the XDG config folder),
and that over the default. The command line checks them before any command runs, and modules
take their values from `current()` rather than from `os.environ`.
docs/settings.md shows the table as `settings_table()` writes it, and a test keeps the code's
`COMPARE_TUI_*` names and this list the same. The variables compare-tui *sets* for a command
scorer (`COMPARE_TUI_ANSWER`, …) are the scorer's inputs, not settings.
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from compare_tui.errors import CompareTuiError


@dataclass(frozen=True, slots=True)
class Variable:
    """One setting read from the environment."""

    name: str
    sets: str
    """What it sets, in a few words."""
    flag: str
    """The command-line option that overrides it (empty: none)."""
    default: str
    """What is used when it is unset, in words."""

    @property
    def key(self) -> str:
        """Its key in the config file's `[settings]` table: the name without `COMPARE_TUI_`, lower case."""
        return self.name.removeprefix("COMPARE_TUI_").lower()


ENVIRONMENT: tuple[Variable, ...] = (
    Variable("COMPARE_TUI_STORE", "the run store", "`--store`", "`<data dir>/runs.sqlite`"),
    Variable(
        "COMPARE_TUI_MODELS",
        "the model catalogue",
        "`--models`",
        "the one `compare-tui local up` wrote (`<state dir>/local/models.toml`)",
    ),
    Variable(
        "COMPARE_TUI_SETS", "the TUI's folder of golden sets", "`--sets`", "`./sample_sets` if it exists, else `.`"
    ),
    Variable("COMPARE_TUI_STATE_DIR", "pids, logs, local servers", "", "`$XDG_STATE_HOME/compare-tui`"),
    Variable(
        "COMPARE_TUI_MODELS_DIR",
        "where the bundled models' GGUF files are assembled",
        "",
        "`<data dir>/models`",
    ),
    Variable("COMPARE_TUI_REVIEWER", "who a verdict or a decision is recorded as", "", "the login name"),
    Variable(
        "COMPARE_TUI_SCORERS",
        "where command scorers run (`local`, `ray`, `ray=ADDRESS`)",
        "`run --scorers`",
        "`local`",
    ),
    Variable(
        "COMPARE_TUI_SCORER_WAIT_S",
        "how long a scorer may wait for a Ray node, in seconds",
        "",
        "300",
    ),
    Variable(
        "COMPARE_TUI_LITELLM_VENV",
        "the virtual environment whose `bin/litellm` `gateway up` starts",
        "`gateway up --litellm`",
        "`litellm` on PATH",
    ),
    Variable(
        "COMPARE_TUI_GATEWAY_KEY",
        "the gateway's own key, which `gateway up` reads (or makes) and its catalogue entry names",
        "`gateway up --gateway-key-env`",
        "one is made and printed once",
    ),
    Variable(
        "COMPARE_TUI_KEY",
        "the usual name for a model's virtual key: a catalogue entry's `key_env` names it",
        "`models add --key-env`",
        "no key is sent",
    ),
)
"""Every `COMPARE_TUI_*` variable compare-tui reads (or names for the user to set)."""


CONFIG_KEYS = frozenset(v.key for v in ENVIRONMENT if v.name not in ("COMPARE_TUI_GATEWAY_KEY", "COMPARE_TUI_KEY"))
"""The keys the config file's `[settings]` table may hold (a key's name is never a setting there:
the two key variables only name where a key is)."""


def settings_table() -> str:
    """`ENVIRONMENT` as the Markdown table docs/settings.md shows."""
    rows = ["| variable | config key | sets | overridden by | when unset |", "|---|---|---|---|---|"]
    rows += [
        f"| `{v.name}` | {f'`{v.key}`' if v.key in CONFIG_KEYS else '–'} | {v.sets} | {v.flag or '–'} | {v.default} |"
        for v in ENVIRONMENT
    ]
    return "\n".join(rows) + "\n"


class SettingsError(CompareTuiError, ValueError):
    """A variable holds a value that cannot be used (the message names it and says what would do)."""


_SCORERS = re.compile(r"local|ray|ray=\S+")


@dataclass(frozen=True, slots=True)
class Settings:
    """The settings the environment gives (None: unset, so the module's default applies)."""

    store: Path | None = None
    models: Path | None = None
    sets: Path | None = None
    state_dir: Path | None = None
    models_dir: Path | None = None
    reviewer: str | None = None
    scorers: str | None = None
    scorer_wait_s: float | None = None
    litellm_venv: Path | None = None

    @classmethod
    def from_environ(cls, environ: Mapping[str, str], config: Mapping[str, Any] | None = None) -> Settings:
        """Read and check every variable of `ENVIRONMENT` (an empty one counts as unset), each
        falling back on its key in `config` (the config file's `[settings]` table). Raises
        `SettingsError` naming the first that cannot be used."""
        table = dict(config or {})
        unknown = sorted(set(table) - CONFIG_KEYS)
        if unknown:
            raise SettingsError(
                f"the config file's [settings] has no key {unknown[0]!r}: its keys are {', '.join(sorted(CONFIG_KEYS))}"
            )

        def text(name: str) -> str | None:
            value = environ.get(name, "").strip()
            if value:
                return value
            key = name.removeprefix("COMPARE_TUI_").lower()
            given = table.get(key)
            if given is None:
                return None
            if isinstance(given, bool) or not isinstance(given, (str, int, float)):
                raise SettingsError(f"the config file's [settings] {key} = {given!r}: give a string or a number")
            return str(given).strip() or None

        def path(name: str) -> Path | None:
            value = text(name)
            return None if value is None else Path(value).expanduser()

        scorers = text("COMPARE_TUI_SCORERS")
        if scorers is not None and not _SCORERS.fullmatch(scorers):
            raise SettingsError(
                f"COMPARE_TUI_SCORERS={scorers!r}: give `local`, `ray` (a cluster started on this machine) "
                "or `ray=ADDRESS`"
            )
        return cls(
            store=path("COMPARE_TUI_STORE"),
            models=path("COMPARE_TUI_MODELS"),
            sets=path("COMPARE_TUI_SETS"),
            state_dir=path("COMPARE_TUI_STATE_DIR"),
            models_dir=path("COMPARE_TUI_MODELS_DIR"),
            reviewer=text("COMPARE_TUI_REVIEWER"),
            scorers=scorers,
            scorer_wait_s=_seconds("COMPARE_TUI_SCORER_WAIT_S", text("COMPARE_TUI_SCORER_WAIT_S")),
            litellm_venv=path("COMPARE_TUI_LITELLM_VENV"),
        )


def _seconds(name: str, raw: str | None) -> float | None:
    if raw is None:
        return None
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not value >= 0:  # NaN and negatives too
        raise SettingsError(f"{name}={raw!r}: give the seconds a scorer may wait to be placed (e.g. 300)")
    return value


def config_dir(environ: Mapping[str, str] | None = None) -> Path:
    """`$XDG_CONFIG_HOME/compare-tui` (default `~/.config/compare-tui`): the user's config file's folder."""
    value = (os.environ if environ is None else environ).get("XDG_CONFIG_HOME")
    return (Path(value) if value and os.path.isabs(value) else Path.home() / ".config") / "compare-tui"


def read_config(path: Path) -> dict[str, Any]:
    """The config file's `[settings]` table (empty when the file or the table is absent).
    Raises `SettingsError` for a file that cannot be read or is not TOML."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise SettingsError(f"the config file {path} cannot be read ({exc}): mend it or move it away") from None
    table = data.get("settings", {})
    if not isinstance(table, dict):
        raise SettingsError(f"{path}: `settings` must be a table ([settings])")
    return table


def current(environ: Mapping[str, str] | None = None) -> Settings:
    """The settings `environ` (default: this process's environment, as it is now) and the config
    file in its XDG config folder give."""
    env = os.environ if environ is None else environ
    return Settings.from_environ(env, read_config(config_dir(env) / "config.toml"))

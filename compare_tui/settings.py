"""Every environment variable compare-tui reads, once: its name, what it sets, the flag that
overrides it and the default (`ENVIRONMENT`). docs/settings.md shows this table as
`settings_table()` writes it, and a test keeps the code's `COMPARE_TUI_*` names and this list
the same. The variables compare-tui *sets* for a command scorer (`COMPARE_TUI_ANSWER`, …) are
the scorer's contract (docs/scorers.md), not settings. Nothing here reads the environment.
"""

from __future__ import annotations

from dataclasses import dataclass


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


def settings_table() -> str:
    """`ENVIRONMENT` as the Markdown table docs/settings.md shows."""
    rows = ["| variable | sets | overridden by | when unset |", "|---|---|---|---|"]
    rows += [f"| `{v.name}` | {v.sets} | {v.flag or '–'} | {v.default} |" for v in ENVIRONMENT]
    return "\n".join(rows) + "\n"

"""What every subcommand shares: the error type, store and catalogue options, a console."""

from __future__ import annotations

import argparse
import shutil
import sys
import textwrap
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from compare_tui.errors import CompareTuiError

if TYPE_CHECKING:
    from compare_tui.catalogue import Catalogue
    from compare_tui.engine import RunOverrides
    from compare_tui.engine.budget import DailyBudget
    from compare_tui.goldset.models import GoldenSet
    from compare_tui.store import Store

INTERRUPTED_EXIT = 130
"""128 + SIGINT: the exit of a command stopped by Ctrl-C, whichever command it is (docs/running.md)."""


def wrapped(text: str, width: int, indent: str = "  ") -> str:
    """`text` wrapped at `width` columns on spaces, each line's own leading spaces kept and its
    continuation lines indented by `indent` more: a word, a figure or an id is never split.
    A width under 40 leaves the text as it is."""
    if width < 40:
        return text
    out = []
    for line in text.split("\n"):
        lead = line[: len(line) - len(line.lstrip(" "))]
        out += textwrap.wrap(
            line, width, subsequent_indent=lead + indent, break_long_words=False, break_on_hyphens=False
        ) or [line]
    return "\n".join(out)


def say(text: str, *, file: TextIO | None = None) -> None:
    """Print a message: on a terminal wrapped at its width (`wrapped`), so an 80-column window
    never cuts a word in two; into a pipe or a file as it is, one line per message. Flushed, so
    progress lines show as they happen."""
    stream = sys.stdout if file is None else file
    print(wrapped(text, terminal_width(stream)), file=stream, flush=True)


def terminal_width(stream: TextIO | None = None) -> int:
    """The width of the terminal `stream` (default stdout) writes to; 0 for a pipe or a file."""
    stream = sys.stdout if stream is None else stream
    try:
        return shutil.get_terminal_size().columns if stream.isatty() else 0
    except (AttributeError, ValueError, OSError):
        return 0


class CommandError(CompareTuiError):
    """A user-facing failure: one line saying what was wrong and what to do."""

    def __init__(self, message: str, exit_code: int = 2) -> None:
        super().__init__(message)
        self.exit_code = exit_code


def add_store_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--store",
        metavar="PATH",
        help="the run store (default: $COMPARE_TUI_STORE or ~/.local/share/compare-tui/runs.sqlite)",
    )


def add_catalogue_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--models",
        metavar="PATH",
        help="the model catalogue (default: $COMPARE_TUI_MODELS, else the one `compare-tui local up` wrote)",
    )


def add_prompt_cache_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--prompt-cache",
        choices=("server", "cold"),
        default="server",
        help="server: the server reuses cached prompt prefixes as it is configured (default); cold: every "
        "request is processed whole (llama.cpp cache_prompt false, vLLM a fresh cache_salt), so runs minutes "
        "apart compare fairly; the report shows each run's condition and cache share",
    )


def run_overrides(args: argparse.Namespace) -> RunOverrides:
    """The run settings the user asked for with the options every run-starting command shares."""
    from compare_tui.engine import RunOverrides
    from compare_tui.vocabulary import PromptCache

    return RunOverrides(
        args.attempts, args.temperature, args.max_tokens, args.concurrency, args.timeout, PromptCache(args.prompt_cache)
    )


def catalogue_path(explicit: str | None) -> Path:
    """The catalogue a command reads (`paths.catalogue_path`: the TUI uses the same)."""
    from compare_tui.paths import catalogue_path as default

    return default(explicit)


def open_store(explicit: str | None, create: bool = False) -> Store:
    """The store at `--store` (or the default). Only a command that makes runs (`create`) starts a
    new store where none exists; any other refuses it (a mistyped path, or a machine with no run
    yet, would otherwise leave an empty store behind and report "no runs")."""
    from compare_tui.paths import store_path
    from compare_tui.store import Store, StoreError

    if explicit and not create and not Path(explicit).expanduser().exists():
        raise CommandError(
            f"no store at {explicit}: check the path given to --store (a store is made by "
            "`compare-tui run`, `toolcall run` or `experiment run`)"
        )
    path = store_path(explicit)
    if not create and not path.exists():
        # The default store (or $COMPARE_TUI_STORE) is made by the first run; a reader must not
        # leave an empty one behind and then say there is nothing in it.
        raise CommandError(f"no store yet at {path} (run `compare-tui run SET --model NAME` first)")
    try:
        return Store.open(path)
    except StoreError as exc:
        raise CommandError(str(exc)) from None


def load_catalogue_or_fail(explicit: str | None) -> Catalogue:
    from compare_tui.catalogue import CatalogueError, load_catalogue

    path = catalogue_path(explicit)
    if not path.exists():
        raise CommandError(
            f"no model catalogue at {path}: pass --models FILE, run `compare-tui local up` to start "
            "the bundled models and write one, or add your own with `compare-tui models add NAME --endpoint URL …`"
        )
    try:
        return load_catalogue(path)
    except CatalogueError as exc:
        raise CommandError(str(exc)) from None


def load_set_or_fail(path: str) -> GoldenSet:
    from compare_tui.goldset import GoldenSetError, load_golden_set

    try:
        return load_golden_set(Path(path))
    except GoldenSetError as exc:
        raise CommandError(str(exc)) from None


def margin_points(text: str) -> float:
    """A margin in points (`5`, `5pp`, `5 pts`), 0–100; `run --margin` uses it too."""
    try:
        value = float(text.strip().removesuffix("pts").removesuffix("pp").strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"expects a number of points such as 5 (got {text!r})") from None
    if not 0 <= value <= 100:
        raise argparse.ArgumentTypeError(f"must be between 0 and 100 points (got {text!r})")
    return value


def daily_budget() -> DailyBudget:
    """Today's eval budget from the user's config (`[budget]`); a malformed table stops the command."""
    from compare_tui.engine.budget import BudgetConfigError, read_budget
    from compare_tui.paths import user_config_path

    try:
        return read_budget(user_config_path())
    except BudgetConfigError as exc:
        raise CommandError(str(exc)) from None

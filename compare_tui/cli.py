"""The command line: `compare-tui SUBCOMMAND …`; with no arguments it opens the TUI.

Each subcommand lives in `compare_tui/commands/` and registers itself here. Handlers return
an exit code; any `CompareTuiError` (a `CommandError` or a package's own error that a handler
let through) becomes one clear line on stderr and its exit code (2 unless it says otherwise),
never a traceback. Ctrl-C is exit 130 (`INTERRUPTED_EXIT`) for every command; output whose
reader left (`… | head`) ends the command quietly with 141 (`CLOSED_PIPE_EXIT`).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from compare_tui import __version__
from compare_tui.commands import COMMAND_MODULES
from compare_tui.commands.common import INTERRUPTED_EXIT, say
from compare_tui.errors import CompareTuiError
from compare_tui.settings import current

CLOSED_PIPE_EXIT = 141
"""128 + SIGPIPE: what a shell reports for `cat` or `git` when the reader of their output left
(`… | head`). Not 0: a gate's exit code (`report --fail-under`) must never turn into a pass."""

EPILOG = """\
examples:
  compare-tui local up                                  # start the bundled models
  compare-tui sets validate sample_sets/support-triage
  compare-tui models add my-model --endpoint http://127.0.0.1:8080/v1 --weights-dir DIR --usd-per-hour 0.5
  compare-tui run sample_sets/support-triage --model smollm2-135m --model gemma3-270m
  compare-tui report latest
  compare-tui                                           # the terminal UI
"""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="compare-tui",
        description="Tell, with evidence from your own tasks, whether a candidate LLM can do your work "
        "as well as the one you run today.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"compare-tui {__version__}")
    # Options of the TUI (`compare-tui` with no subcommand). Their own dests, so that a
    # subcommand's --store/--models (parsed into `store`/`models`) never overrides them.
    tui = parser.add_argument_group("terminal UI (no subcommand)")
    tui.add_argument(
        "--store",
        dest="tui_store",
        metavar="PATH",
        help="the run store (default: $COMPARE_TUI_STORE or ~/.local/share/compare-tui/runs.sqlite)",
    )
    tui.add_argument(
        "--models",
        dest="tui_models",
        metavar="PATH",
        help="the model catalogue (default: $COMPARE_TUI_MODELS, else the one `compare-tui local up` wrote)",
    )
    tui.add_argument(
        "--sets",
        dest="tui_sets",
        metavar="DIR",
        help="the folder holding golden sets (default: $COMPARE_TUI_SETS, else ./sample_sets)",
    )
    tui.add_argument(
        "--theme",
        dest="tui_theme",
        metavar="NAME",
        help="dark (default), light, high-contrast, another theme name, or a theme .toml file",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module in COMMAND_MODULES():
        module.register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command line and return its exit code. The one place that turns a closed output
    pipe into a quiet exit, for every command: each prints through `sys.stdout`."""
    try:
        try:
            code = _run(argv)
        except KeyboardInterrupt:  # Ctrl-C anywhere, reading the options and the command's imports included
            print("compare-tui: interrupted", file=sys.stderr)
            code = INTERRUPTED_EXIT
        finally:
            sys.stdout.flush()  # what is still buffered fails here (`--help` too), not at exit
    except BrokenPipeError:
        _silence_closed_output()
        return CLOSED_PIPE_EXIT
    except SystemExit as exc:
        # Rich's console ends the process itself on a closed pipe (exit 1, raised while handling
        # the BrokenPipeError: `Console.on_broken_pipe`); one exit code for every command.
        if not isinstance(exc.__context__, BrokenPipeError):
            raise
        _silence_closed_output()
        return CLOSED_PIPE_EXIT
    return code


def _silence_closed_output() -> None:
    """Point stdout at /dev/null, so the interpreter's last flush at exit has nowhere to fail
    (it would print "Exception ignored … BrokenPipeError")."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, AttributeError, ValueError):  # no file descriptor (stdout replaced in-process)
        pass


def _run(argv: Sequence[str] | None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        current()  # every COMPARE_TUI_* variable checked once, before anything runs
    except CompareTuiError as exc:
        say(f"compare-tui: {exc}", file=sys.stderr)
        return exc.exit_code
    parser = build_parser()
    if not argv:
        return _open_tui_or_help(parser)
    args = parser.parse_args(argv)
    if args.command is None:  # only top-level options: the TUI with them
        return _open_tui_or_help(parser, args)
    refused = _top_level_options_for_command(args)
    if refused:
        say(f"compare-tui: {refused}", file=sys.stderr)
        return 2
    handler = getattr(args, "handler", None)
    if handler is None:
        # A command group given without its subcommand (`compare-tui sets`): show its help.
        getattr(args, "group_parser", parser).print_help()
        return 2
    try:
        return int(handler(args) or 0)
    except CompareTuiError as exc:  # CommandError included: every error meant for the user
        say(f"compare-tui: {exc}", file=sys.stderr)
        return exc.exit_code


def _top_level_options_for_command(args: argparse.Namespace) -> str | None:
    """Give a command the top-level `--store`/`--models` (`compare-tui --store X run …`) when it
    takes that option and was not given its own: without this, a run meant for X would
    silently go to the default store. A command that reads no store (or no catalogue) has
    nothing to redirect; `--sets` and `--theme` only mean something to the terminal UI."""
    for option, top, own in (("--store", "tui_store", "store"), ("--models", "tui_models", "models")):
        value = getattr(args, top, None)
        if value is None or not hasattr(args, own):
            continue
        if getattr(args, own) is None:
            setattr(args, own, value)
        elif getattr(args, own) != value:
            return (
                f"{option} given twice with different paths ({value} before `{args.command}`, "
                f"{getattr(args, own)} after it): give it once"
            )
    return None


def _open_tui_or_help(parser: argparse.ArgumentParser, args: argparse.Namespace | None = None) -> int:
    """The TUI with the top-level options; help instead when Textual is not installed or
    there is no terminal to draw on (a pipe, a CI log)."""
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        parser.print_help()
        return 0
    try:
        from compare_tui.tui.app import run_app
    except ModuleNotFoundError as exc:
        if exc.name != "textual" and not (exc.name or "").startswith("textual."):
            raise
        parser.print_help()
        print("\ncompare-tui: the terminal UI needs Textual (pip install textual)", file=sys.stderr)
        return 0
    return run_app(
        store=getattr(args, "tui_store", None),
        models=getattr(args, "tui_models", None),
        sets=getattr(args, "tui_sets", None),
        theme=getattr(args, "tui_theme", None),
    )


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())

"""The command line: `compare-tui SUBCOMMAND …`; with no arguments it opens the TUI.

Each subcommand lives in `compare_tui/commands/` and registers itself here. Handlers return
an exit code; a `CommandError` becomes one clear line on stderr and exit code 2, never a
traceback.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from compare_tui import __version__
from compare_tui.commands import COMMAND_MODULES
from compare_tui.commands.common import CommandError

EPILOG = """\
examples:
  compare-tui local up                                  # start the two bundled models
  compare-tui sets validate sample_sets/support-triage
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
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module in COMMAND_MODULES():
        module.register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    if not argv:
        return _open_tui_or_help(parser)
    args = parser.parse_args(argv)
    handler = getattr(args, "handler", None)
    if handler is None:
        # A command group given without its subcommand (`compare-tui sets`): show its help.
        getattr(args, "group_parser", parser).print_help()
        return 2
    try:
        return int(handler(args) or 0)
    except CommandError as exc:
        print(f"compare-tui: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("compare-tui: interrupted", file=sys.stderr)
        return 130


def _open_tui_or_help(parser: argparse.ArgumentParser) -> int:
    try:
        from compare_tui.tui.app import run_app
    except ImportError:
        parser.print_help()
        return 0
    return run_app()


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())

"""One root error: every public error class of compare-tui derives from `CompareTuiError`, and
the command line turns any of them that escapes a handler into one line and its exit code."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import pytest

import compare_tui
from compare_tui import cli
from compare_tui.errors import CompareTuiError
from compare_tui.store import StoreError

INTERNAL = {"SseError", "Skipped"}
"""Control flow inside one module (a malformed SSE frame is classified by its caller; a log line
skipped while sampling is counted), never shown to a user as such."""


def _public_errors() -> list[type[BaseException]]:
    found = []
    for info in pkgutil.walk_packages(compare_tui.__path__, "compare_tui."):
        if info.name.startswith("compare_tui.tui"):
            continue  # the TUI shows errors on screen; it defines none of its own for callers
        module = importlib.import_module(info.name)
        for name, value in vars(module).items():
            if (
                inspect.isclass(value)
                and issubclass(value, Exception)
                and value.__module__ == info.name
                and not name.startswith("_")
                and name not in INTERNAL
            ):
                found.append(value)
    return found


def test_every_public_error_class_derives_from_the_root():
    errors = _public_errors()
    assert len(errors) >= 20
    assert [e.__qualname__ for e in errors if not issubclass(e, CompareTuiError)] == []


def test_an_error_a_handler_lets_through_is_one_line_and_exit_two(monkeypatch, capsys):
    def handler(args):
        raise StoreError("the store at /x is a newer version: upgrade compare-tui")

    parser = cli.build_parser()
    args = parser.parse_args(["runs", "list"])
    monkeypatch.setattr(cli, "build_parser", lambda: _Fixed(parser, args, handler))
    assert cli.main(["runs", "list"]) == 2
    err = capsys.readouterr().err
    assert err == "compare-tui: the store at /x is a newer version: upgrade compare-tui\n"


class _Fixed:
    def __init__(self, parser, args, handler):
        self._parser, self._args = parser, args
        self._args.handler = handler

    def parse_args(self, argv):
        return self._args

    def print_help(self):  # pragma: no cover - not reached
        self._parser.print_help()


def test_a_bug_is_not_swallowed(monkeypatch):
    parser = cli.build_parser()
    args = parser.parse_args(["runs", "list"])

    def handler(args):
        raise ZeroDivisionError("a bug")

    monkeypatch.setattr(cli, "build_parser", lambda: _Fixed(parser, args, handler))
    with pytest.raises(ZeroDivisionError):
        cli.main(["runs", "list"])

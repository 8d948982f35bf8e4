"""`compare-tui toolcall`: tool-call conformance of one model behind its serving stack.

compare-tui toolcall --model NAME [--tools FILE] [--scenario GLOB] [--json] [--note k=v] …
compare-tui toolcall show [RUN_ID …]      the scenario table of stored runs, side by side
compare-tui toolcall list [--tools FILE]  the scenarios and the checks each one runs
compare-tui toolcall runs                 stored tool-call runs, newest first
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from compare_tui.commands.common import (
    INTERRUPTED_EXIT,
    CommandError,
    add_catalogue_option,
    add_store_option,
    load_catalogue_or_fail,
    open_store,
    say,
    terminal_width,
)

if TYPE_CHECKING:
    from collections.abc import Callable

    from compare_tui.catalogue import Catalogue, ModelEntry
    from compare_tui.toolcall.results.model import ScenarioResult
    from compare_tui.toolcall.scenarios.scenario import Scenario
    from compare_tui.toolcall.scenarios.suite import Suite
    from compare_tui.toolcall.tools.file import ToolsFile

EPILOG = """\
examples:
  compare-tui toolcall --model gemma3-270m
  compare-tui toolcall --model gemma3-270m --scenario 'S0*' --scenario 'stream.*' --json
  compare-tui toolcall --model my-vllm --tools mcp-tools-list.json --note parser=hermes --note quantisation=AWQ
  compare-tui toolcall show 3fa2 91bc          # two runs side by side
  compare-tui toolcall list --tools tools.json

Outcomes: pass, fail, unsupported (the server refused the request shape: the serving setup,
not the model), error (nothing measured). No combined score, no ranking; the results do not
tell whether an agent finishes a task. --note values are stored as stated by the user, not
verified. Argument values are stored only with --keep-arguments.

exit codes: 0 the run finished (whatever its outcomes); 2 bad input or a refusal;
130 interrupted by Ctrl-C (the scenarios that finished are stored)
"""


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "toolcall",
        help="tool-call conformance of a model behind its serving stack",
        description="Run the versioned official tool-call suite (and scenarios for your own tools) against one "
        "catalogue model, and list the outcome of every scenario.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--model", metavar="NAME", help="the catalogue model to test")
    add_catalogue_option(p)
    add_store_option(p)
    p.add_argument(
        "--tools", metavar="FILE", help="your tools: OpenAI tools/functions JSON or an MCP tools/list result"
    )
    p.add_argument(
        "--skip-invalid-tools",
        action="store_true",
        help='leave out (and name) your tools whose schema servers refuse, e.g. a "dict" type; by default '
        "they are sent and the scenarios offering them end unsupported",
    )
    p.add_argument(
        "--scenario",
        action="append",
        default=[],
        metavar="GLOB",
        help="only scenarios whose id or name matches (repeatable)",
    )
    p.add_argument(
        "--note",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="your note on the serving stack, e.g. chat_template=… parser=… quantisation=… (stated, not verified)",
    )
    p.add_argument(
        "--keep-arguments", action="store_true", help="store the argument values and answer text (default: not stored)"
    )
    p.add_argument(
        "--publishable", action="store_true", help="store apart as a run of the official suite for general reading"
    )
    p.add_argument("--max-tokens", type=int, metavar="N", help="answer length cap (default: the suite's, 256)")
    p.add_argument("--timeout", type=float, metavar="S", help="per-request timeout in seconds (default 120)")
    p.add_argument("--concurrency", type=int, metavar="N", help="requests at once (default 2)")
    p.add_argument("--json", action="store_true", help="print JSON instead of the table")
    p.set_defaults(handler=_run, group_parser=p)
    sub = p.add_subparsers(dest="toolcall_command", metavar="SUBCOMMAND")

    show = sub.add_parser(
        "show",
        help="the scenario table of stored runs, side by side",
        description="Print the scenario table of stored tool-call runs (default: the latest).",
        epilog="example:\n  compare-tui toolcall show 3fa2 91bc --json",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    show.add_argument(
        "run_ids", nargs="*", metavar="RUN_ID", help="run ids or unique prefixes (default: the latest run)"
    )
    show.add_argument("--store", metavar="PATH", default=argparse.SUPPRESS, help="the run store")
    show.add_argument("--json", action="store_true", default=argparse.SUPPRESS, help="print JSON")
    show.set_defaults(handler=_show)

    listing = sub.add_parser(
        "list",
        help="the scenarios and the checks each one runs",
        description="List the official suite's scenarios (and those for your tools) with their checks.",
        epilog="example:\n  compare-tui toolcall list --tools tools.json",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    listing.add_argument(
        "--tools", metavar="FILE", default=argparse.SUPPRESS, help="also list scenarios for these tools"
    )
    listing.add_argument(
        "--scenario", action="append", metavar="GLOB", default=argparse.SUPPRESS, help="only matching scenarios"
    )
    listing.add_argument("--json", action="store_true", default=argparse.SUPPRESS, help="print JSON")
    listing.set_defaults(handler=_list)

    runs = sub.add_parser(
        "runs",
        help="stored tool-call runs, newest first",
        description="List stored tool-call runs.",
        epilog="example:\n  compare-tui toolcall runs --publishable",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    runs.add_argument("--store", metavar="PATH", default=argparse.SUPPRESS, help="the run store")
    runs.add_argument(
        "--publishable", action="store_true", default=argparse.SUPPRESS, help="list the publishable runs instead"
    )
    runs.add_argument("--limit", type=int, default=50, help="at most this many (default 50)")
    runs.set_defaults(handler=_runs)


def parse_notes(pairs: list[str]) -> dict[str, str]:
    """`--note k=v` pairs as a dict; provider-key-looking tokens are masked before storing."""
    from compare_tui.catalogue import mask_provider_keys

    notes: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise CommandError(f"--note {pair!r}: expected KEY=VALUE, e.g. --note chat_template=chatml")
        notes[key.strip()] = mask_provider_keys(value.strip())
    return notes


def _scenarios(
    tools_path: str | None, patterns: list[str], skip_invalid: bool = False
) -> tuple[Suite, ToolsFile | None, tuple[Scenario, ...]]:
    from compare_tui.toolcall import ToolsFileError, official_suite, read_tools_file, select, user_scenarios

    suite = official_suite()
    tools = None
    scenarios = suite.scenarios
    if tools_path:
        try:
            tools = read_tools_file(tools_path)
        except ToolsFileError as exc:
            raise CommandError(str(exc)) from None
        scenarios = scenarios + user_scenarios(tools, skip_invalid=skip_invalid)
    return suite, tools, select(scenarios, patterns)


def tools_notes(tools: ToolsFile, skip_invalid: bool) -> list[str]:
    """What a run prints about the user's tools before sending: every note of the file
    (renamed tools, fields not sent, shapes servers refuse), and what `--skip-invalid-tools`
    left out or, without it, what will happen."""
    lines = [f"note: {note}" for note in tools.notes]
    refused = tools.refused
    if refused and skip_invalid:
        lines.append(f"left out (--skip-invalid-tools): {', '.join(repr(n) for n in refused)}")
    elif refused:
        lines.append(
            f"sent as they are: the scenarios offering {', '.join(repr(n) for n in refused)} will likely end "
            "unsupported; --skip-invalid-tools leaves them out"
        )
    return lines


def _run(args: argparse.Namespace) -> int:
    from compare_tui.catalogue import ModelRefused
    from compare_tui.toolcall import (
        DEFAULT_SETTINGS,
        RunRequest,
        ToolcallRefused,
        ToolcallStore,
        check_request,
        execute,
    )

    if not args.model:
        raise CommandError("give --model NAME (a catalogue model), or a subcommand: show, list, runs; see --help")
    if any(v is not None and v <= 0 for v in (args.concurrency, args.timeout, args.max_tokens)):
        raise CommandError("--concurrency, --timeout and --max-tokens must be positive")
    entry = _entry(load_catalogue_or_fail(args.models), args.model)
    suite, tools, scenarios = _scenarios(args.tools, args.scenario, args.skip_invalid_tools)
    default = DEFAULT_SETTINGS  # the engine's RunSettings, at a tool-call run's concurrency
    settings = replace(
        default,
        max_tokens=args.max_tokens or int(suite.defaults.get("max_tokens", default.max_tokens)),
        temperature=float(suite.defaults.get("temperature", default.temperature)),
        timeout_s=args.timeout or default.timeout_s,
        concurrency=args.concurrency or default.concurrency,
    )
    request = RunRequest(
        entry,
        suite,
        scenarios,
        settings,
        parse_notes(args.note),
        tools,
        args.publishable,
        args.keep_arguments,
        tuple(args.scenario),
        args.skip_invalid_tools,
    )
    try:
        check_request(request)
    except (ToolcallRefused, ModelRefused) as exc:
        raise CommandError(f"refused: {exc}") from None
    from compare_tui.toolcall import render_json, render_text

    if tools is not None:  # before anything is sent, in both output modes (stderr keeps --json clean)
        for line in tools_notes(tools, args.skip_invalid_tools):
            print(f"your tools: {line}", file=sys.stderr)
    store = open_store(args.store, create=True)
    with store:
        progress = None if args.json else _progress(len(scenarios))
        try:
            run = asyncio.run(execute(request, store=ToolcallStore(store), on_result=progress))
        except (ToolcallRefused, ModelRefused) as exc:
            raise CommandError(f"refused: {exc}") from None
        except KeyboardInterrupt:
            say("interrupted; the scenarios that finished are stored (`compare-tui toolcall runs`)", file=sys.stderr)
            return INTERRUPTED_EXIT
    if args.json:
        print(json.dumps(render_json([run]), indent=2, ensure_ascii=False, default=str))
    else:
        print(render_text([run], width=terminal_width()))
    return 0


def _progress(total: int) -> Callable[[int, ScenarioResult], None]:
    from compare_tui.toolcall.results.table import SYMBOLS

    done = [0]

    def heard(position: int, result: ScenarioResult) -> None:
        done[0] += 1
        say(
            f"  [{done[0]:>2}/{total}] {SYMBOLS[result.outcome]} {result.outcome.value:<11} {result.scenario_id} "
            f"{result.name} ({(result.duration_ms or 0) / 1000:.1f} s)",
            file=sys.stderr,
        )

    return heard


def _entry(catalogue: Catalogue, name: str) -> ModelEntry:
    try:
        return catalogue.get(name)
    except KeyError as exc:
        raise CommandError(str(exc)) from None


def _show(args: argparse.Namespace) -> int:
    from compare_tui.store import StoreError
    from compare_tui.toolcall import ToolcallStore, render_json, render_text

    store = open_store(args.store)
    with store:
        tc = ToolcallStore(store)
        try:
            runs = [tc.get(i) for i in dict.fromkeys(args.run_ids)] if args.run_ids else tc.latest(1)
        except StoreError as exc:
            raise CommandError(str(exc)) from None
    if not runs:
        raise CommandError("no tool-call runs in the store yet; run `compare-tui toolcall --model NAME` first")
    print(
        json.dumps(render_json(runs), indent=2, ensure_ascii=False, default=str)
        if getattr(args, "json", False)
        else render_text(runs, width=terminal_width())
    )
    return 0


def _list(args: argparse.Namespace) -> int:
    from compare_tui.toolcall.checks.evaluate import scenario_checks

    suite, tools, scenarios = _scenarios(getattr(args, "tools", None), getattr(args, "scenario", None) or [])
    rows: list[dict[str, Any]] = []
    for s in scenarios:
        checks = [c for c, _ in scenario_checks(s)]
        rows.append(
            {
                "id": s.id,
                "name": s.name,
                "title": s.title,
                "tool_choice": s.tool_choice_form,
                "stream": s.stream,
                "tools": [t.name for t in s.tools],
                "checks": checks,
                "catches": s.catches,
            }
        )
    if getattr(args, "json", False):
        print(
            json.dumps(
                {"suite": suite.name, "version": suite.version, "digest": suite.digest, "scenarios": rows},
                indent=2,
                ensure_ascii=False,
            )
        )
        return 0
    print(f"{suite.name} {suite.version}  {suite.digest}  ({len(suite.scenarios)} official scenarios)")
    if tools is not None:
        print(f"your tools: {tools.path} ({tools.shape}); " + ", ".join(t.name for t in tools.tools))
        for line in tools_notes(tools, False):
            print(f"  {line}")
    for row in rows:
        print(
            f"{row['id']:<13} {row['name']:<28} choice={row['tool_choice']:<8}{' stream' if row['stream'] else ''}  {row['title']}"
        )
        print(f"{'':13} checks: {', '.join(row['checks'])}")
    return 0


def _runs(args: argparse.Namespace) -> int:
    from compare_tui.toolcall import ToolcallStore

    store = open_store(args.store)
    with store:
        runs = ToolcallStore(store).list_runs(publishable=getattr(args, "publishable", False), limit=args.limit)
    if not runs:
        print("no tool-call runs stored")
    for run in runs:
        notes = ", ".join(f"{k}={v}" for k, v in run.user_notes.items())
        print(
            f"{run.id}  {run.created_at[:16].replace('T', ' ')}  {run.model_name:<20} {run.status:<11} "
            f"suite {run.suite_version}{'  notes (stated, not verified): ' + notes if notes else ''}"
        )
    return 0

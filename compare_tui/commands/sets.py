"""`compare-tui sets validate PATH` and `compare-tui sets show PATH`."""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING

from compare_tui.commands.common import CommandError, load_set_or_fail

if TYPE_CHECKING:
    from compare_tui.goldset.models import Task


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    group = subparsers.add_parser(
        "sets", help="check and inspect golden sets", description="Check and inspect golden sets."
    )
    group.set_defaults(group_parser=group)
    sub = group.add_subparsers(dest="sets_command", metavar="SUBCOMMAND")

    validate = sub.add_parser(
        "validate",
        help="check a golden set and list every problem",
        description="Load a golden set and list every problem in it (file, field, what to do). Exit 0 when valid.",
        epilog="example:\n  compare-tui sets validate sample_sets/support-triage",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    validate.add_argument("path", help="the golden set folder (holding golden.toml)")
    validate.set_defaults(handler=_validate)

    show = sub.add_parser(
        "show",
        help="list a golden set's tasks, scorers and digest",
        description="Show a golden set: manifest, tasks, scorer kinds and its digest.",
        epilog="example:\n  compare-tui sets show sample_sets/order-extraction --json",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    show.add_argument("path", help="the golden set folder (holding golden.toml)")
    show.add_argument("--json", action="store_true", help="print JSON instead of a table")
    show.set_defaults(handler=_show)


def _validate(args: argparse.Namespace) -> int:
    from compare_tui.goldset import validate_golden_set

    problems = validate_golden_set(Path(args.path))
    if not problems:
        goldset = load_set_or_fail(args.path)
        print(f"ok: {goldset.manifest.name} {goldset.manifest.version}, {len(goldset.tasks)} tasks, {goldset.digest}")
        return 0
    for problem in problems:
        print(str(problem))
    raise CommandError(f"{len(problems)} problem(s) in {args.path}", exit_code=1)


def _show(args: argparse.Namespace) -> int:
    goldset = load_set_or_fail(args.path)
    m = goldset.manifest
    kinds = Counter(goldset.scorer_for(t).kind for t in goldset.tasks)
    if args.json:
        print(
            json.dumps(
                {
                    "workload_id": m.workload_id,
                    "name": m.name,
                    "version": m.version,
                    "digest": goldset.digest,
                    "run": m.run.model_dump(),
                    "caveats": m.caveats,
                    "scorer_kinds": dict(kinds),
                    "tasks": [
                        {"id": t.id, "scorer": goldset.scorer_for(t).kind, "tags": t.tags} for t in goldset.tasks
                    ],
                },
                indent=2,
            )
        )
        return 0
    from rich.console import Console
    from rich.table import Table

    console = Console()
    console.print(f"[bold]{m.name}[/] {m.version}  ({m.workload_id})")
    console.print(f"digest  {goldset.digest}")
    console.print(f"run     attempts={m.run.attempts} temperature={m.run.temperature:g} max_tokens={m.run.max_tokens}")
    console.print("scorers " + ", ".join(f"{k}×{n}" for k, n in sorted(kinds.items())))
    table = Table("task", "scorer", "tags", "expected", box=None, pad_edge=False)
    for task in goldset.tasks:
        table.add_row(task.id, goldset.scorer_for(task).kind, ",".join(task.tags), _expected_preview(task))
    console.print(table)
    for caveat in m.caveats:
        console.print(f"caveat: {caveat}")
    return 0


def _expected_preview(task: Task) -> str:
    e = task.expected
    if e.tool_call is not None:
        return f"[tool call] {e.tool_call.name}({json.dumps(e.tool_call.arguments, sort_keys=True)})"[:60]
    if e.text is not None:
        return e.text[:60]
    return json.dumps(e.json_, sort_keys=True)[:60]

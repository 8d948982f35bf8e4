"""`compare-tui sets validate PATH` and `compare-tui sets show PATH`."""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING

from compare_tui.commands.common import CommandError, load_set_or_fail, say

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

    from compare_tui.commands import sets_import

    sets_import.register(sub)


def _validate(args: argparse.Namespace) -> int:
    from compare_tui.goldset import validate_golden_set

    problems = validate_golden_set(Path(args.path))
    if not problems:
        goldset = load_set_or_fail(args.path)
        print(f"ok: {goldset.manifest.name} {goldset.manifest.version}, {len(goldset.tasks)} tasks, {goldset.digest}")
        return 0
    for problem in problems:
        say(str(problem))
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
    from rich.text import Text

    console = Console()
    console.print(f"[bold]{m.name}[/] {m.version}  ({m.workload_id})")
    console.print(f"digest  {goldset.digest}")
    console.print(f"run     attempts={m.run.attempts} temperature={m.run.temperature:g} max_tokens={m.run.max_tokens}")
    console.print("scorers " + ", ".join(f"{k}×{n}" for k, n in sorted(kinds.items())))
    rows = [(task.id, goldset.scorer_for(task).kind, ",".join(task.tags)) for task in goldset.tasks]
    widths = [max(len(header), *(len(row[n]) for row in rows)) for n, header in enumerate(("task", "scorer", "tags"))]
    # One line a task: the id, scorer and tags whole; the expected outcome in the rest, cut with
    # "…" (folded mid-key it would read as another value); `sets show --json` has it whole.
    rest = max(12, console.width - sum(widths) - 6)  # 6: two spaces between each two columns
    table = Table(box=None, pad_edge=False)
    for header, width in zip(("task", "scorer", "tags"), widths, strict=True):
        table.add_column(header, no_wrap=True, width=width)
    table.add_column("expected", no_wrap=True, overflow="ellipsis")
    for row, task in zip(rows, goldset.tasks, strict=True):
        table.add_row(*(Text(cell) for cell in (*row, _expected_preview(task, rest))))  # no markup
    console.print(table)
    for caveat in m.caveats:
        console.print(f"caveat: {caveat}")
    return 0


def _expected_preview(task: Task, limit: int = 60) -> str:
    """The expected outcome on one line, cut at `limit` characters with "…" when longer."""
    e = task.expected
    if e.tool_call is not None:
        text = f"[tool call] {e.tool_call.name}({json.dumps(e.tool_call.arguments, sort_keys=True)})"
    elif e.text is not None:
        text = e.text
    else:
        text = json.dumps(e.json_, sort_keys=True, ensure_ascii=False)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"

"""`compare-tui runs list`: the retained runs, newest first."""

from __future__ import annotations

import argparse
import json

from compare_tui.commands.common import add_store_option, open_store
from compare_tui.commands.run import _tally_dict
from compare_tui.report import formatting as fmt
from compare_tui.report.formatting import MARKS
from compare_tui.store import RunRecord
from compare_tui.vocabulary import WEIGHTS_NOT_CHECKED


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    group = subparsers.add_parser("runs", help="list retained runs", description="Browse the runs kept in the store.")
    group.set_defaults(group_parser=group)
    sub = group.add_subparsers(dest="runs_command", metavar="SUBCOMMAND")
    listing = sub.add_parser(
        "list",
        help="list runs, newest first",
        description="List retained runs, newest first, with their tallies (pass, fail, needs a person, error, "
        "not done) and status.",
        epilog="example:\n  compare-tui runs list --set support-triage --limit 20",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_store_option(listing)
    listing.add_argument("--set", dest="goldset_id", help="only runs of this golden set (workload id)")
    listing.add_argument("--model", help="only runs of this model")
    listing.add_argument("--status", help="only runs with this status (completed, interrupted, …)")
    listing.add_argument("--limit", type=int, default=50, help="at most this many (default 50)")
    listing.add_argument("--json", action="store_true", help="print JSON")
    listing.set_defaults(handler=_list)


def _filters(args: argparse.Namespace) -> list[str]:
    """The filters asked for, as words: `of set X`, `of model M`, `with status S`."""
    asked = (("of set", args.goldset_id), ("of model", args.model), ("with status", args.status))
    return [f"{words} {value}" for words, value in asked if value]


def _list(args: argparse.Namespace) -> int:
    store = open_store(args.store)
    with store:
        runs = store.list_runs(goldset_id=args.goldset_id, model=args.model, status=args.status, limit=args.limit)
        rows = []
        for run in runs:
            rows.append((run, store.pass_rate_summary(run.id)))
        filters = _filters(args)
        other_runs = bool(filters) and not rows and bool(store.list_runs(limit=1))
    if args.json:
        print(
            json.dumps(
                [
                    {
                        "id": r.id,
                        "created_at": r.created_at,
                        "status": r.status,
                        "set": r.goldset_id,
                        "set_version": r.goldset_version,
                        "model": r.model_name,
                        "provenance": r.provenance,
                        "rescore_of": _source_of(r),
                    }
                    | _tally_dict(t, r.status)
                    for r, t in rows
                ],
                indent=2,
            )
        )
        return 0
    if not rows and other_runs:
        print(f"no runs {' '.join(filters)} in the store; it has other runs: `compare-tui runs list` shows them")
        return 0
    if not rows:
        print("no runs yet: start one with `compare-tui run SET --model NAME`")
        return 0
    from rich.console import Console
    from rich.table import Table

    # Two lines a run, so that 80 columns hold it whole: the id is never cut (it is what other
    # commands take), model over set, status over date, and the tallies as marks.
    # Only the model / set column gives way (with an ellipsis): the id, the marks and the date
    # keep their whole width (min_width), which Rich would otherwise shrink with the rest.
    cells = [
        (
            run.id + ("\n↻ rescored" if _source_of(run) else ""),
            f"{run.model_name}\n{run.goldset_id} {run.goldset_version}" + _rescore_line(run),
            fmt.tally_marks(tally),
            f"{run.status}\n{run.created_at[:16].replace('T', ' ')}",
        )
        for run, tally in rows
    ]

    def widest(n: int, header: str) -> int:
        return max(len(header), *(len(line) for row in cells for line in row[n].split("\n")))

    console = Console()
    fixed = [widest(0, "run"), widest(2, "tasks"), widest(3, "status / date")]
    rest = max(12, console.width - sum(fixed) - 3)  # 3: the padding after the first three columns
    table = Table(box=None, pad_edge=False, padding=(0, 1, 0, 0))
    table.add_column("run", no_wrap=True, width=fixed[0])
    table.add_column("model / set", no_wrap=True, overflow="ellipsis", max_width=rest)
    table.add_column("tasks", no_wrap=True, width=fixed[1])
    table.add_column("status / date", no_wrap=True, width=fixed[2])
    for row in cells:
        table.add_row(*row)
    console.print(table)
    # A run whose weights were not checked says so under the table, whole (a cell would cut it).
    for run, _ in rows:
        if run.provenance in WEIGHTS_NOT_CHECKED:
            console.print(f"{run.id}: {run.provenance}", highlight=False)
    console.print(
        f"tasks: {MARKS['pass']} pass {MARKS['fail']} fail {MARKS['review']} needs a person "
        f"{MARKS['error']} error {MARKS['missing']} not done, of the set's tasks; "
        "`compare-tui report RUN` for the pass rate",
        highlight=False,
        soft_wrap=False,
    )
    return 0


def _source_of(run: RunRecord) -> str | None:
    source = (run.rescore or {}).get("source_run")
    return str(source) if source else None


def _rescore_line(run: RunRecord) -> str:
    """A third line for a rescored run (under "↻ rescored"): its source's answers scored
    again, not a repeat."""
    source = _source_of(run)
    return f"\nof {source[:8]}, not a repeat" if source else ""

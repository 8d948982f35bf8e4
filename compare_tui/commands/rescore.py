"""`compare-tui rescore RUN|COMPARISON [--set DIR]`: score stored answers again, no model asked."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING

from compare_tui.commands.common import CommandError, add_store_option, load_set_or_fail, open_store

if TYPE_CHECKING:
    from compare_tui.goldset import GoldenSet
    from compare_tui.store.records import RunRecord

DESCRIPTION = """\
Score a stored run's answers again with the golden set's current scorers and expected
outcomes (after fixing a typo in an expected value, or a regex that was too strict), without
asking any model: no request is sent, and no audit-ledger row is written, since the ledger
records requests. The result is a new run that names its source run, the scorers' digest
and the tasks whose outcome moved; its report says the answers were generated at the source
run's time and scored later. Given a comparison, each of its runs is rescored and the new
runs are linked in a new comparison (same baseline), so the decision can be re-made.

When no attempt's outcome moves, nothing is written (no run, no comparison) and the command
says so: the same answers with the same outcomes are not a new measurement, and `report
latest` stays where it was. A rescored run is never a repeat of its source: `runs list`
marks it, and experiments never count it.

Refused (exit 2, nothing written) when a task's input changed since the answers were
generated (its input digest differs from the one the run recorded), when the set gained or
lost tasks, or for a run made before input digests were recorded whose set changed since.
People's latest verdicts on the source run's tasks are carried over.
"""

EPILOG = """\
examples:
  compare-tui rescore 8c21                        # a run, with the set at the path it ran from
  compare-tui rescore 8c21 --set sets/tickets     # the set's current copy elsewhere
  compare-tui rescore 5f0e --json                 # a comparison: every run, linked anew

exit codes: 0 rescored, or nothing moved (nothing written); 2 refused (nothing written)
"""


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "rescore",
        help="score a run's (or a comparison's) stored answers again with the set's current scorers",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("ref", metavar="RUN|COMPARISON", help="a run id or a comparison id (or a unique prefix)")
    parser.add_argument("--set", metavar="DIR", help="the golden set folder (default: the path the run was made from)")
    parser.add_argument("--json", action="store_true", help="print the new runs and what changed as JSON")
    add_store_option(parser)
    parser.set_defaults(handler=_rescore)


def _rescore(args: argparse.Namespace) -> int:
    from compare_tui.engine.rescore import rescore_comparison, rescore_run
    from compare_tui.store import RunNotFoundError

    store = open_store(args.store)

    def load_set(run: RunRecord) -> GoldenSet:
        path = args.set or run.goldset_path
        if not path:
            raise CommandError(f"run {run.id} does not record where its set was; give it with --set DIR")
        return load_set_or_fail(path)

    try:
        source = store.get_run(args.ref)
    except RunNotFoundError:
        source = None
    if source is not None:
        done = [rescore_run(store, source, load_set(source))]
        comparison = None
    else:
        try:
            found = store.get_comparison(args.ref)
        except RunNotFoundError:
            raise CommandError(f"no run or comparison with id {args.ref!r} in the store at {store.path}") from None
        comparison, done = rescore_comparison(store, found, load_set)
    written = [r for r in done if r.run is not None]
    if args.json:
        print(
            json.dumps(
                {
                    "comparison": comparison.id if comparison else None,
                    "runs": [{"run": r.run.id, **(r.run.rescore or {})} for r in written if r.run is not None],
                    "unchanged": [r.source.id for r in done if r.run is None],
                },
                indent=2,
                ensure_ascii=False,
            )
        )
        return 0
    if not written:
        names = ", ".join(f"{r.source.model_name} (run {r.source.id})" for r in done)
        print(
            f"no outcome moved under the set's current scorers for {names}: nothing written "
            "(a copy with the same outcomes would read as a repeat; the latest run is unchanged)"
        )
        return 0
    for r in done:
        if r.run is None:
            print(f"{r.source.model_name}: run {r.source.id} unchanged (no outcome moved)")
            continue
        moved = len(r.changed)
        print(
            f"{r.run.model_name}: run {r.run.id} rescores run {r.source.id} "
            f"({moved} task{'s' if moved != 1 else ''} moved; no request sent, no audit row written; "
            "not a repeat of it)"
        )
        for change in r.changed:
            print(f"  {change['task']}: {change['from']} → {change['to']}")
    if comparison is not None:
        print(f"comparison {comparison.id} links the rescored runs: compare-tui report {comparison.id}")
    else:
        (only,) = written
        assert only.run is not None
        print(f"compare-tui report {only.run.id}")
    return 0

"""`compare-tui reproduce RUN_A RUN_B`: did two runs of one golden set and one pinned model
agree within stated tolerances?"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING

from compare_tui.commands.common import CommandError, add_store_option, open_store, say

if TYPE_CHECKING:
    from compare_tui.diff.tolerances import Tolerance

EPILOG = """\
examples:
  compare-tui reproduce 3f9a 7c21
  compare-tui reproduce 3f9a 7c21 --tolerance latency_p50=10% --tolerance pass_rate=0pp --json

tolerances (defaults; a golden set's manifest may set its own in a `tolerances` table, and
--tolerance replaces either):
  pass_rate=2pp     pass rates differ by at most 2 percentage points
  agreement=95%     at least 95 % of the tasks scored in both runs had the same outcome
  latency_p50=20%   end-to-end p50 latency differs by at most 20 % of run A's
  tokens=5%         total tokens (prompt + completion, every attempt) differ by at most 5 % of run A's

Settings that differ (attempts, temperature, max_tokens, concurrency, timeout), a different
server build, chat template, endpoint, serving notes or cost basis are flagged before comparing.

exit codes:
  0  every figure is within its tolerance (reproduced)
  1  a figure is outside its tolerance (or, with --fail-on-difference, something was flagged)
  2  bad input: no such run, an ambiguous prefix, a bad tolerance, or two runs that cannot
     reproduce each other (different golden set digest or model pins, or a run the report refuses)
"""


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "reproduce",
        help="check that two runs of the same set and model agree within tolerances",
        description="Compare two runs of the same golden set digest and model pins against stated "
        "tolerances: each figure with its delta and verdict, and the tasks whose outcome changed.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_store_option(parser)
    parser.add_argument("run_a", metavar="RUN_A", help="the first run (id or unique prefix): the baseline")
    parser.add_argument("run_b", metavar="RUN_B", help="the second run (id or unique prefix)")
    parser.add_argument(
        "--tolerance",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="replace a tolerance: pass_rate=2pp, agreement=95%%, latency_p50=20%%, tokens=5%% (repeatable)",
    )
    parser.add_argument(
        "--fail-on-difference",
        action="store_true",
        help="also exit 1 when a setting, the server build or another fixed variable differs",
    )
    parser.add_argument("--json", action="store_true", help="print a JSON document instead of text")
    parser.set_defaults(handler=_reproduce)


def _reproduce(args: argparse.Namespace) -> int:
    from compare_tui.diff import NotComparable, ToleranceError, render_text, reproduce_check, reproduce_document
    from compare_tui.report import ReportNotFoundError, load_report_inputs
    from compare_tui.store import StoreError

    with open_store(args.store) as store:
        try:
            runs = [store.get_run(ref) for ref in (args.run_a, args.run_b)]
            if runs[0].id == runs[1].id:
                raise CommandError(f"RUN_A and RUN_B are the same run ({runs[0].id}); give two runs")
            inputs = [load_report_inputs(store, run.id) for run in runs]
        except (ReportNotFoundError, StoreError) as exc:
            raise CommandError(str(exc)) from None
    try:
        tolerances = _tolerances(runs[0].goldset_path, args.tolerance)
        check = reproduce_check(inputs[0], inputs[1], tolerances)
    except (ToleranceError, NotComparable) as exc:
        raise CommandError(str(exc)) from None
    if args.json:
        sys.stdout.write(json.dumps(reproduce_document(check), indent=2) + "\n")
    else:
        say(render_text(check).rstrip("\n"))  # wrapped at a terminal's width (the names can be long)
    if not check.reproduced:
        return 1
    return 1 if args.fail_on_difference and check.differences else 0


def _tolerances(goldset_path: str, given: list[str]) -> dict[str, Tolerance]:
    """The defaults, the golden set manifest's own (when the set can still be read), then `given`."""
    from pathlib import Path

    from compare_tui.diff import resolve_tolerances
    from compare_tui.goldset import GoldenSetError, load_golden_set

    manifest: dict[str, str] = {}
    if goldset_path:
        try:
            manifest = dict(load_golden_set(Path(goldset_path)).manifest.tolerances)
        except (GoldenSetError, OSError):
            # The set moved or changed: its tolerances are unknown; the defaults still apply.
            say(
                f"compare-tui: note: the golden set at {goldset_path} could not be read; its own "
                "tolerances (if any) are not applied",
                file=sys.stderr,
            )
    return resolve_tolerances(manifest, given)

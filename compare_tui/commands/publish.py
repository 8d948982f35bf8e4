"""`compare-tui publish REF|--experiment NAME --out DIR`: a read-only, self-contained HTML bundle
(index.html + report.json), recorded in the store; prints the page's path."""

from __future__ import annotations

import argparse
from pathlib import Path

from compare_tui.commands.common import CommandError, add_store_option, open_store, say

EPILOG = """\
examples:
  compare-tui publish latest --out share/triage
  compare-tui publish 3f9a --out share/triage --no-answers
  compare-tui publish --experiment triage-small --out share/triage-small
  compare-tui publish --list

what it writes:
  DIR/index.html   one self-contained page: CSS, script and SVG plots inline;
                   a Content-Security-Policy of default-src 'none' (nothing is
                   fetched); opens from file://, prints
  DIR/report.json  the same document as `report --format json` (for an
                   experiment, as `experiment show --json`)
Publishing the same stored rows again gives a byte-identical page. Every bundle
is recorded in the store (when, what, the page's sha256): `publish --list`
shows them.

exit codes:
  0  the bundle was written (its path is printed)
  2  bad input: no such comparison, run or experiment, or a folder that cannot
     be written
"""


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "publish",
        help="write a read-only HTML bundle of a comparison, run or experiment",
        description="A self-contained HTML page (+ report.json) to share a comparison, a run or an\n"
        "experiment: figures, verdicts, plots, caveats and (unless --no-answers) every\n"
        "task's answers.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_store_option(parser)
    parser.add_argument(
        "ref",
        metavar="COMPARISON_OR_RUN",
        nargs="?",
        help="a comparison id, a run id (a unique prefix is enough), or `latest`",
    )
    parser.add_argument("--experiment", metavar="NAME", help="publish this experiment instead")
    parser.add_argument("--out", metavar="DIR", help="the folder to write index.html and report.json into")
    parser.add_argument(
        "--no-answers",
        action="store_true",
        help="leave out inputs, expected outcomes and answers (figures and the task matrix stay)",
    )
    parser.add_argument("--list", action="store_true", help="list the bundles published from this store")
    parser.set_defaults(handler=_publish)


def _publish(args: argparse.Namespace) -> int:
    from compare_tui.experiment import ExperimentConfigError
    from compare_tui.publish import PublishError, publish_experiment, publish_report
    from compare_tui.report import ReportNotFoundError
    from compare_tui.store import StoreError

    if args.list:
        return _list(args)
    if (args.ref is None) == (args.experiment is None):
        raise CommandError("give what to publish: a comparison or run id (or `latest`), or --experiment NAME")
    if args.out is None:
        raise CommandError("give the folder to write the bundle into: --out DIR")
    if not args.out.strip():
        # An empty path would silently mean the current folder.
        raise CommandError("--out is empty: give the folder to write the bundle into (--out . for the current one)")
    if args.experiment is not None and args.no_answers:
        raise CommandError("--no-answers applies to a comparison or run; an experiment's page holds no answers")
    with open_store(args.store) as store:
        try:
            if args.experiment is not None:
                published = publish_experiment(store, args.experiment, Path(args.out))
            else:
                published = publish_report(store, args.ref, Path(args.out), answers=not args.no_answers)
        except (ReportNotFoundError, StoreError, ExperimentConfigError, PublishError) as exc:
            raise CommandError(str(exc)) from None
    record = published.record
    say(
        f"published {record.kind} {record.ref}: {published.index} "
        f"({record.size_bytes / 1024:,.0f} KiB, {record.sha256[:19]}…)"
    )
    say(f"report: {published.report}")
    return 0


def _list(args: argparse.Namespace) -> int:
    with open_store(args.store) as store:
        bundles = store.list_bundles()
    if not bundles:
        print("no bundle published from this store yet: `compare-tui publish latest --out DIR`")
        return 0
    for b in bundles:
        answers = "" if b.answers or b.kind == "experiment" else " (no answers)"
        print(f"{b.published_at[:19]}Z  {b.kind} {b.ref}{answers}  {b.sha256[:19]}…  {b.path}/index.html")
    return 0

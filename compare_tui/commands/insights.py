"""`compare-tui insights COMPARISON|latest`: why the answers failed, grouped by cause."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING

from compare_tui.commands.common import (
    CommandError,
    add_catalogue_option,
    add_store_option,
    load_catalogue_or_fail,
    open_store,
)

EPILOG = """\
examples:
  compare-tui insights latest
  compare-tui insights 3f9a --format json
  compare-tui insights 3f9a --group 2
  compare-tui insights 3f9a --analyst gemma3-270m

Every failed attempt (outcome fail or error) lands in exactly one group, by the first cause
that holds: the request failed (its error class); the answer was cut at the token limit
(finish_reason length); it was empty; it opens like a refusal; it is in another language than
the request (a small detector of scripts and function words); then what its scorer recorded
(exact: expected vs answered label; regex: the pattern; json: parse, schema, field or value;
tool_call: no call, a call written as text, the wrong tool, bad arguments; command: the
first line of its output). --group N lists group N's attempts with their answers.

--analyst MODEL (opt-in, like a judge) gives a catalogue model the grouped evidence (not the
raw set) and prints its short summary and insights after them. Every sentence must cite groups
([G2]) or tasks ([T:task-id]); a sentence whose citations the data does not bear out is
dropped and counted. Its one request is audited, its cost shown apart; it changes no figure.

exit codes:
  0  the insights were printed
  2  bad input: no such comparison or run, an ambiguous prefix, no such group, a store that
     cannot be used, an analyst the catalogue lacks or refuses (nothing was sent)
"""

if TYPE_CHECKING:
    from compare_tui.insights import Insights
    from compare_tui.judge.analyst import AnalystReview


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "insights",
        help="why the answers failed: failures grouped by cause, losses by tag, suspect tasks",
        description="The failed attempts of a comparison (or a run) grouped by cause, each "
        "candidate's discordant tasks against the baseline by task tag, and the tasks to check "
        "in the golden set. Read from the store: no model is asked.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_store_option(parser)
    parser.add_argument(
        "ref", metavar="COMPARISON_OR_RUN", help="a comparison id, a run id (a unique prefix is enough), or `latest`"
    )
    parser.add_argument("--format", choices=("text", "json"), default="text", help="output format (default: text)")
    parser.add_argument(
        "--group", metavar="N", type=_group_number, help="list the attempts of failure group N with their answers"
    )
    parser.add_argument(
        "--analyst",
        metavar="MODEL",
        help="a catalogue model that summarises the groups, each sentence checked against the data (opt-in)",
    )
    add_catalogue_option(parser)
    parser.set_defaults(handler=_insights)


def _group_number(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expects a group number from 1 (got {text!r})")
    return int(text)


def _insights(args: argparse.Namespace) -> int:
    from compare_tui.insights import build_insights, insights_document, load_insight_inputs, render_group, render_text
    from compare_tui.report import ReportNotFoundError
    from compare_tui.store import StoreError

    if args.group is not None and args.analyst:
        raise CommandError("--analyst reviews every group: leave out --group (or --analyst)")
    with open_store(args.store) as store:
        try:
            inputs = load_insight_inputs(store, args.ref)
        except (ReportNotFoundError, StoreError) as exc:
            raise CommandError(str(exc)) from None
    insights = build_insights(inputs)
    if args.group is not None:
        if args.group > len(insights.groups):
            raise CommandError(
                f"{insights.ref} has {len(insights.groups)} failure groups, no group {args.group}: "
                f"`compare-tui insights {insights.ref}` lists them"
            )
        group = insights.groups[args.group - 1]
        if args.format == "json":
            document = insights_document(insights)["groups"][args.group - 1]
            print(json.dumps(document, indent=2, ensure_ascii=False))
        else:
            print(render_group(insights, group), end="")
        return 0
    review = _review(args, insights) if args.analyst else None
    if args.format == "json":
        document = insights_document(insights)
        if review is not None:
            from compare_tui.judge.analyst import review_document

            document["analyst"] = review_document(review)
        print(json.dumps(document, indent=2, ensure_ascii=False))
    else:
        print(render_text(insights), end="")
        if review is not None:
            from compare_tui.judge.analyst import render_review

            print("\n" + render_review(review), end="")
    return 0


def _review(args: argparse.Namespace, insights: Insights) -> AnalystReview:
    """The analyst's checked review of `insights`, with the report's decision as context."""
    from compare_tui.catalogue import UnknownModel
    from compare_tui.judge.analyst import AnalystRefused, review_insights
    from compare_tui.report import build_report, load_report_inputs

    try:
        entry = load_catalogue_or_fail(args.models).get(args.analyst)
    except UnknownModel as exc:
        raise CommandError(str(exc)) from None
    with open_store(args.store) as store:
        report = build_report(load_report_inputs(store, insights.ref))
        decision = report.decision.summary if report.decision is not None else report.decision_note
        try:
            return review_insights(store, entry, insights, decision=decision)
        except AnalystRefused as exc:
            raise CommandError(str(exc)) from None

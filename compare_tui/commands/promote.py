"""`compare-tui promote COMPARISON --model B` and `compare-tui baseline show|history WORKLOAD`:
act on a decision, and see each workload's baseline and how it got there."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from compare_tui.commands.common import CommandError, add_store_option, open_store, say
from compare_tui.reviewer import reviewer_name

if TYPE_CHECKING:
    from compare_tui.store.canaries import CanaryChangeRecord
    from compare_tui.store.decisions import DecisionRecord

EPILOG = """\
examples:
  compare-tui promote latest --model smollm2-135m --initial
  compare-tui promote latest --model qwen2.5-coder-0.5b --reason "cheaper, no worse"
  compare-tui promote 3f9a --model B --force --reason "accepted risk: inconclusive on 20 tasks"
  compare-tui promote latest --model B --canary 10 --export litellm --out litellm-routes.yaml

B becomes the workload's baseline when its verdict against the comparison's baseline (else
the workload's current one) is better or no worse. worse or inconclusive: refused, nothing
written, unless --force --reason "…" (recorded as forced). A workload's first baseline may be
set from a comparison without one with --initial. Going back is another promote.

exit codes: 0 recorded; 2 bad input (no such comparison, model not in it, bad option);
            3 refused by the verdict (nothing written)
"""


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "promote",
        help="make a model the workload's baseline, on the strength of a comparison",
        description="Record a decision: make --model the baseline of the comparison's "
        "workload, with the figures and verdict it was decided on.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_store_option(p)
    p.add_argument("comparison", metavar="COMPARISON", help="a comparison id, a unique prefix, or `latest`")
    p.add_argument("--model", required=True, metavar="NAME", help="the model to make the baseline")
    p.add_argument("--reason", default="", metavar="TEXT", help="why (required with --force)")
    p.add_argument("--force", action="store_true", help="promote despite a worse or inconclusive verdict")
    p.add_argument(
        "--initial", action="store_true", help="set the workload's first baseline from a comparison that names none"
    )
    p.add_argument(
        "--canary",
        type=float,
        metavar="PERCENT",
        help="route only this share of traffic to the new baseline in the export",
    )
    p.add_argument("--export", choices=("litellm", "json"), help="also write a routing file (needs --out)")
    p.add_argument("--out", metavar="FILE", help="where --export writes")
    p.set_defaults(handler=_promote)

    b = subparsers.add_parser(
        "baseline",
        help="show a workload's baseline and its history",
        description="A workload's baseline is the model of its latest decision.",
    )
    sub = b.add_subparsers(dest="action", required=True, metavar="show|history")
    show = sub.add_parser("show", help="the workload's current baseline")
    history = sub.add_parser("history", help="every decision of the workload, newest first")
    for parser in (show, history):
        add_store_option(parser)
        parser.add_argument(
            "workload",
            metavar="WORKLOAD",
            nargs="?",
            help="a golden set's workload_id (show: every workload when left out)",
        )
        parser.add_argument("--json", action="store_true", help="print JSON")
    show.set_defaults(handler=_show)
    history.set_defaults(handler=_history)


def _promote(args: argparse.Namespace) -> int:
    from compare_tui.promote import PromotionRefused, VerdictRefused, plan_promotion
    from compare_tui.promote.export import export
    from compare_tui.report import ReportNotFoundError, load_report_inputs
    from compare_tui.store import StoreError

    if args.export and not args.out:
        raise CommandError("--export needs --out FILE (where to write the routing file)")
    if args.out and not args.export:
        raise CommandError("--out is where --export writes: give --export litellm or --export json")
    with open_store(args.store) as store:
        try:
            inputs = load_report_inputs(store, args.comparison)
        except (ReportNotFoundError, StoreError) as exc:
            raise CommandError(str(exc)) from None
        if inputs.comparison_id is None:
            raise CommandError(
                f"{args.comparison!r} is a single run: promote acts on a comparison "
                "(`compare-tui run SET --baseline A --model B`)"
            )
        workload = inputs.runs[0].run.goldset_id if inputs.runs else ""
        current = store.current_baseline(workload)
        try:
            plan = plan_promotion(
                inputs,
                args.model,
                current_baseline=current.model if current else None,
                force=args.force,
                reason=args.reason,
                initial=args.initial,
                canary_percent=args.canary,
                decided_by=reviewer_name(),
            )
        except PromotionRefused as exc:
            # A verdict that does not allow it is a failed gate (3); anything else, bad input (2).
            raise CommandError(str(exc), exit_code=3 if isinstance(exc, VerdictRefused) else 2) from None
        try:
            record = store.record_decision(plan.record)
        except StoreError as exc:
            raise CommandError(str(exc)) from None
    say(plan.summary)
    say(
        f"recorded decision {record.id} ({record.kind}) by {record.decided_by or 'unknown'}; "
        f"see `compare-tui baseline history {record.workload_id}`"
    )
    if args.export:
        try:
            Path(args.out).write_text(export(record, args.export), encoding="utf-8")
        except OSError as exc:
            raise CommandError(
                f"the decision is recorded, but {args.out} could not be written: {exc.strerror or exc}"
            ) from None
        print(f"wrote {args.export} routing to {args.out} (no key in it)")
    return 0


def _decision_dict(d: DecisionRecord) -> dict[str, Any]:
    return {
        "entry": "decision",
        "id": d.id,
        "workload_id": d.workload_id,
        "model": d.model,
        "previous_model": d.previous_model,
        "kind": d.kind,
        "reason": d.reason,
        "decided_by": d.decided_by,
        "decided_at": d.decided_at,
        "comparison_id": d.comparison_id,
        "goldset_digest": d.goldset_digest,
        "canary_percent": d.canary_percent,
        "summary": d.figures.get("summary"),
    }


def _line(d: DecisionRecord) -> str:
    verdict = ((d.figures.get("versus") or {}).get("verdict")) if d.figures else None
    parts = [f"{d.decided_at}  {d.model}", f"({d.kind}" + (f", verdict {verdict}" if verdict else "") + ")"]
    if d.previous_model:
        parts.append(f"replacing {d.previous_model}")
    if d.comparison_id:
        parts.append(f"on comparison {d.comparison_id}")
    if d.decided_by:
        parts.append(f"by {d.decided_by}")
    if d.canary_percent is not None:
        parts.append(f"canary {d.canary_percent:g}%")
    line = " ".join(parts)
    return line + (f"\n    reason: {d.reason}" if d.reason else "")


def _show(args: argparse.Namespace) -> int:
    with open_store(args.store) as store:
        if args.workload:
            current = store.current_baseline(args.workload)
            found = {args.workload: current} if current else {}
        else:
            found = store.current_baselines()
    if args.json:
        print(json.dumps({w: _decision_dict(d) for w, d in found.items()}, indent=2))
        return 0
    if not found:
        where = f"workload {args.workload}" if args.workload else "any workload"
        say(
            f"no baseline for {where} yet: promote one with "
            "`compare-tui promote COMPARISON --model NAME` (--initial for a first one)",
            file=sys.stderr,
        )
        return 0 if not args.workload else 1
    for workload, d in found.items():
        print(f"{workload}: {_line(d)}")
    return 0


def _history(args: argparse.Namespace) -> int:
    from compare_tui.store import DecisionRecord

    if not args.workload:
        raise CommandError("baseline history needs a WORKLOAD (a golden set's workload_id)")
    with open_store(args.store) as store:
        decisions = store.baseline_history(args.workload)
        changes = store.canary_changes(args.workload)
    # Decisions and the canary's changes of the split (each with its evidence), newest first.
    entries: list[DecisionRecord | CanaryChangeRecord] = [*decisions, *changes]
    entries.sort(key=lambda e: e.decided_at if isinstance(e, DecisionRecord) else e.at, reverse=True)
    if args.json:
        print(
            json.dumps(
                [_decision_dict(e) if isinstance(e, DecisionRecord) else _change_dict(e) for e in entries], indent=2
            )
        )
        return 0
    if not entries:
        say(f"workload {args.workload} has no decisions yet", file=sys.stderr)
        return 1
    for entry in entries:
        print(_line(entry) if isinstance(entry, DecisionRecord) else _change_line(entry))
    return 0


def _change_dict(c: CanaryChangeRecord) -> dict[str, Any]:
    return {"entry": "canary", **c.model_dump(mode="json")}


def _change_line(c: CanaryChangeRecord) -> str:
    from compare_tui.canary.policy import bounds_words, verdict_words

    weights = f"{c.from_weight:g}% → {c.to_weight:g}%" if c.from_weight is not None and c.to_weight is not None else ""
    evidence = c.evidence
    figures = ""
    if "pairs" in evidence:
        figures = (
            f"; verdict {verdict_words(str(evidence.get('verdict')))} "
            f"on {evidence['pairs']} pairs, "
            f"B − A in {bounds_words(float(evidence['low_pp']), float(evidence['high_pp']))} points"
        )
    who = f" by {c.decided_by}" if c.decided_by else ""
    return f"{c.at}  canary {c.canary_id}: {c.change.value} {weights}{who}{figures}\n    reason: {c.reason}"

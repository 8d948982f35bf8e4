"""`compare-tui canary start|watch|advance|status|stop WORKLOAD`: a quality-gated canary at the
managed gateway (docs/canary.md)."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from compare_tui.commands.common import (
    CommandError,
    add_catalogue_option,
    add_store_option,
    daily_budget,
    load_catalogue_or_fail,
    load_set_or_fail,
    open_store,
    say,
)
from compare_tui.reviewer import reviewer_name
from compare_tui.vocabulary import CanaryJudgeRubric

if TYPE_CHECKING:
    from compare_tui.goldset import GoldenSet
    from compare_tui.store import CanaryRecord, Store


DESCRIPTION = """\
Move a workload's traffic from its baseline A to a candidate B at the managed gateway (`compare-tui
gateway up`), on the strength of B's own live answers. `start` keeps the alias pointing at A and
lets B in at the first weight step (or, with --shadow, gives B mirrored copies no user sees).
`watch` reads the gateway's traffic log, replays each of B's requests to A off-path (audited
requests, never served), grades both with the workload's golden-set checks (a request that
matches no task: with the canary's --judge, pairwise, both orders asked), and keeps an
anytime-valid verdict on B − A. Worse: B's weight goes back to 0 and the alias to A alone, at
once. Better or no worse, with enough new pairs: the next step is allowed, and taken by a person
(`advance`) unless --auto-advance. Every change is compare-and-set against the gateway's config
(a hand edit is never overwritten) and recorded in `baseline history`; 100 % is a promotion.
"""

EPILOG = """\
examples:
  compare-tui canary start tickets --set sets/tickets --model qwen2.5-coder-0.5b --max-usd-per-day 2
  compare-tui canary watch tickets --interval 30
  compare-tui canary watch tickets --judge qwen2.5-coder-0.5b --judge-structured
  compare-tui canary advance tickets
  compare-tui canary status tickets --json
  compare-tui canary stop tickets --reason "done for today"

exit codes (status, and watch --once; a rollout controller can use them):
  0 ready: the evidence allows the next step (or the canary ended as a promotion)
  2 bad input (no such workload, model, set, or gateway)
  3 hold: verdict not yet, or too few new pairs at this step, or no traffic
  4 worse: B was rolled back (or is due to be)
  5 refused: the gateway's routes for the alias were changed by hand
  6 stopped by a person
"""


_JUDGE_HELP = (
    "the judge (a model in the catalogue) that grades requests matching no golden-set task: pairwise, "
    "both orders asked (default: none; such requests are counted `no check`)"
)


_STRUCTURED_HELP = (
    "ask the judge's server to constrain its replies to a JSON verdict (response_format json_schema), "
    "as `judge --structured`: for small judges that ignore the reply form"
)


_RUBRIC_HELP = (
    "how the judge grades: pairwise (default; which answer better does what the request asks, both orders "
    "asked) or similarity (B's answer graded 1-5 against A's: as close, or departed; it can show B as good "
    "as A or worse, never better)"
)


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    group = subparsers.add_parser(
        "canary",
        help="a quality-gated canary at the managed gateway: live traffic graded against the baseline",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    group.set_defaults(group_parser=group)
    sub = group.add_subparsers(dest="canary_command", metavar="SUBCOMMAND")

    start = sub.add_parser("start", help="route B in beside the baseline (first weight step, or shadow)")
    start.add_argument("workload", metavar="WORKLOAD", help="the workload id (its golden set's workload_id)")
    start.add_argument("--model", required=True, metavar="NAME", help="the candidate B (a catalogue name)")
    start.add_argument(
        "--set", required=True, metavar="DIR", help="the workload's golden set: its checks grade the traffic"
    )
    start.add_argument("--baseline", metavar="NAME", help="A (default: the workload's current baseline)")
    start.add_argument("--alias", metavar="NAME", help="the gateway route the traffic uses (default: WORKLOAD)")
    start.add_argument(
        "--steps", default="1,5,25,50,100", metavar="P,P,…", help="B's weights in %% (default 1,5,25,50,100)"
    )
    start.add_argument("--shadow", action="store_true", help="begin with mirrored copies to B (LiteLLM silent_model)")
    start.add_argument(
        "--margin-pp", type=float, metavar="PP", help="no-worse margin in points (default: the set's, else 5)"
    )
    start.add_argument(
        "--min-pairs", type=int, default=20, metavar="N", help="new pairs needed before each step (default 20)"
    )
    start.add_argument("--auto-advance", action="store_true", help="let watch take a step the evidence allows")
    start.add_argument(
        "--max-usd-per-day", type=float, metavar="USD", help="cap on the replays' and judge's spend per UTC day"
    )
    start.add_argument("--judge", metavar="MODEL", help=_JUDGE_HELP)
    start.add_argument("--judge-structured", action="store_true", help=_STRUCTURED_HELP)
    start.add_argument("--judge-rubric", choices=[r.value for r in CanaryJudgeRubric], help=_RUBRIC_HELP)
    for parser in (start,):
        add_catalogue_option(parser)
    start.set_defaults(handler=_start)

    watch = sub.add_parser("watch", help="pair B's live requests with A's replays and act on the verdict")
    watch.add_argument("workload", metavar="WORKLOAD")
    watch.add_argument("--once", action="store_true", help="one pass, then exit with the status code")
    watch.add_argument("--interval", type=float, default=10.0, metavar="S", help="seconds between passes (default 10)")
    watch.add_argument("--replays-per-s", type=float, default=5.0, metavar="R", help="replay rate limit (default 5/s)")
    watch.add_argument(
        "--judge",
        metavar="MODEL",
        help=_JUDGE_HELP + "; kept for the canary's later passes (each pair records its grader)",
    )
    watch.add_argument("--judge-structured", action="store_true", help=_STRUCTURED_HELP)
    watch.add_argument("--judge-rubric", choices=[r.value for r in CanaryJudgeRubric], help=_RUBRIC_HELP)
    add_catalogue_option(watch)
    watch.set_defaults(handler=_watch)

    adv = sub.add_parser("advance", help="take the next step (a person's decision; the evidence must allow it)")
    adv.add_argument("workload", metavar="WORKLOAD")
    add_catalogue_option(adv)
    adv.set_defaults(handler=_advance)

    status = sub.add_parser("status", help="step, weight, verdict, evidence and the last change")
    status.add_argument("workload", metavar="WORKLOAD")
    status.add_argument("--json", action="store_true", help="print JSON (for a rollout controller)")
    status.set_defaults(handler=_status)

    stop = sub.add_parser("stop", help="end the canary: the alias back to the baseline alone")
    stop.add_argument("workload", metavar="WORKLOAD")
    stop.add_argument("--reason", default="", metavar="TEXT")
    add_catalogue_option(stop)
    stop.set_defaults(handler=_stop)
    for parser in (start, watch, adv, status, stop):
        add_store_option(parser)


def _restart() -> None:
    from compare_tui.local import gateway

    try:
        gateway.restart(os.environ)
    except gateway.GatewayError as exc:
        raise CommandError(f"the routes were written, but the gateway did not restart: {exc}") from None


def _canary(store: Store, workload: str) -> CanaryRecord:
    canary = store.latest_canary(workload)
    if canary is None:
        raise CommandError(f"workload {workload} has no canary: start one with `compare-tui canary start {workload} …`")
    return canary


def _start(args: argparse.Namespace) -> int:
    from compare_tui import canary as canary_pkg
    from compare_tui.local import gateway

    running = gateway.status()
    record = running.record if running is not None and running.alive else None
    if record is None:
        raise CommandError("no managed gateway is running: start it with `compare-tui gateway up …` first")
    if not record.traffic_log:
        raise CommandError(
            "the running gateway was started before it logged traffic: `compare-tui gateway down`, then `gateway up` again"
        )
    goldset = load_set_or_fail(args.set)
    if goldset.manifest.workload_id != args.workload:
        raise CommandError(
            f"{args.set} is the golden set of workload {goldset.manifest.workload_id}, not {args.workload}"
        )
    catalogue = load_catalogue_or_fail(args.models)
    try:
        steps = canary_pkg.parse_steps(args.steps)
        with open_store(args.store, create=True) as store:
            baseline = args.baseline or _current_baseline(store, args.workload)
            margin = args.margin_pp if args.margin_pp is not None else _set_margin(goldset)
            started = canary_pkg.start(
                store, catalogue, workload_id=args.workload, alias=args.alias or args.workload, baseline=baseline,
                candidate=args.model, set_path=Path(args.set).resolve(), steps=steps, shadow=args.shadow,
                margin_pp=margin, min_pairs=args.min_pairs, auto_advance=args.auto_advance,
                max_usd_per_day=args.max_usd_per_day, config_path=Path(record.config), traffic_log=record.traffic_log,
                restart=_restart, decided_by=reviewer_name(), judge=args.judge,
                judge_structured=args.judge_structured,
                judge_rubric=CanaryJudgeRubric(args.judge_rubric or CanaryJudgeRubric.PAIRWISE),
            )  # fmt: skip
    except canary_pkg.CanaryError as exc:
        raise CommandError(str(exc)) from None
    where = "as a shadow (mirrored copies; no user sees its answers)" if args.shadow else f"at {started.weight:g}%"
    say(
        f"canary {started.id} started: {started.alias!r} keeps {started.baseline} and lets {started.candidate} in {where}; "
        f"steps {', '.join(f'{s:g}%' for s in started.steps)}; margin {started.margin_pp:g} points; "
        f"{started.min_pairs} new pairs before each step"
    )
    if started.judge:
        say(_judged_by(started.judge, started.judge_structured, started.judge_rubric))
    say(f"next: `compare-tui canary watch {args.workload}`")
    return 0


def _judged_by(judge: str, structured: bool, rubric: CanaryJudgeRubric) -> str:
    if rubric is CanaryJudgeRubric.SIMILARITY:
        how = "B's answer graded 1–5 for similarity to A's"
    else:
        how = "pairwise, both orders asked"
    how += ", replies constrained to a JSON verdict" if structured else ""
    return f"requests matching no task of the golden set are judged by {judge} ({how})"


def _current_baseline(store: Store, workload: str) -> str:
    current = store.current_baseline(workload)
    if current is None:
        raise CommandError(
            f"workload {workload} has no baseline: promote one first (`compare-tui promote … --initial`) or give --baseline NAME"
        )
    return current.model


def _set_margin(goldset: GoldenSet) -> float:
    decision = goldset.manifest.decision
    return decision.margin_pp if decision is not None else 5.0


def _status(args: argparse.Namespace) -> int:
    from compare_tui.canary.status import status_document

    with open_store(args.store) as store:
        if args.json and store.latest_canary(args.workload) is None:
            # A rollout controller reads stdout as JSON whatever the answer: say "none" in JSON.
            reason = (
                f"workload {args.workload} has no canary: start one with `compare-tui canary start {args.workload} …`"
            )
            print(
                json.dumps(
                    {"workload_id": args.workload, "canary_id": None, "reason": reason, "exit_code": 2}, indent=2
                )
            )
            say(f"compare-tui: {reason}", file=sys.stderr)
            return 2
        document = status_document(store, _canary(store, args.workload))
    if args.json:
        print(json.dumps(document, indent=2))
    else:
        for line in _status_lines(document):
            print(line)
    return int(document["exit_code"])


def _status_lines(d: dict[str, Any]) -> list[str]:
    from compare_tui.canary.policy import bounds_words, graders_words, verdict_words
    from compare_tui.canary.status import where_words

    e = d["evidence"]
    where = where_words(d)
    lines = [
        f"canary {d['canary_id']} of {d['workload_id']}: {d['state']} ({where}); alias {d['alias']!r}, baseline {d['baseline']}",
        f"verdict {verdict_words(d['verdict'])}: B − A in {bounds_words(e['low_pp'], e['high_pp'])} "
        f"points on {e['pairs']} pairs ({e['new_pairs_at_step']} at this step)"
        + (f"; skipped {', '.join(f'{k} {v}' for k, v in e['skipped'].items())}" if e["skipped"] else ""),
        f"{d['move']}: {d['reason']}",
    ]
    lines.append(f"evidence: {graders_words(e['graders'])}")
    lines.extend(f"note: {note}" for note in d["judge_notes"])
    if d["hand_edit"]:
        lines.append(f"refusing any change: {d['hand_edit']}")
    if d["last_change"]:
        c = d["last_change"]
        lines.append(
            f"last change {c['at']}: {c['change']} ({c['from_weight']:g}% → {c['to_weight']:g}%) by {c['decided_by'] or '?'}"
        )
    return lines


def _watch(args: argparse.Namespace) -> int:
    from compare_tui.canary import HandEditRefused, watch_once
    from compare_tui.canary.status import EXIT_HAND_EDIT, status_document

    catalogue = load_catalogue_or_fail(args.models)
    with open_store(args.store) as store:
        canary = _canary(store, args.workload)
        if not canary.active:
            say(f"the canary of {args.workload} has ended ({canary.state.value}); nothing to watch")
            return int(status_document(store, canary)["exit_code"])
        judge = args.judge or canary.judge
        # The same judge keeps its reply form; another starts with the written one unless asked.
        structured = args.judge_structured or (canary.judge_structured and judge == canary.judge)
        rubric = CanaryJudgeRubric(args.judge_rubric or canary.judge_rubric)
        if judge and (judge, structured, rubric) != (canary.judge, canary.judge_structured, canary.judge_rubric):
            catalogue.get(judge)  # an unknown judge is refused before anything is written
            update = {"judge": judge, "judge_structured": structured, "judge_rubric": rubric}
            canary = store.update_canary(canary.model_copy(update=update))
            say(_judged_by(judge, structured, rubric) + " from now on")
        while True:
            try:
                done = watch_once(
                    store, catalogue, canary, restart=_restart, by="canary watch", environ=os.environ,
                    replays_per_s=args.replays_per_s, budget=daily_budget(),
                )  # fmt: skip
            except HandEditRefused as exc:
                say(str(exc), file=sys.stderr)
                return EXIT_HAND_EDIT
            canary = done.canary
            _say_pass(done)
            document = status_document(store, canary)
            if args.once or not canary.active:
                return int(document["exit_code"])
            time.sleep(args.interval)


def _say_pass(done: Any) -> None:
    from compare_tui.canary.policy import JUDGED
    from compare_tui.vocabulary import CanaryChange, PairSkip

    pairs = [p for p in done.new_pairs if p.paired is not None]
    if not done.lines:
        say("no new requests in the gateway's traffic log: nothing to grade (is traffic reaching the gateway?)")
    elif not done.candidate_requests:
        say(f"{done.lines} new requests logged, none served by {done.canary.candidate}: nothing to grade yet")
    else:
        judged = sum(1 for p in pairs if p.grader in JUDGED)
        asked = [p for p in done.new_pairs if p.grader in JUDGED]
        by = (
            f" ({len(pairs) - judged} by the golden set's checks, {judged} by judge {done.canary.judge})"
            if asked
            else ""
        )
        say(
            f"{done.candidate_requests} requests of {done.canary.candidate} replayed to {done.canary.baseline}: "
            f"{len(pairs)} paired{by}"
        )
        no_evidence = [
            f"{n} {what}"
            for n, what in (
                (
                    sum(1 for p in asked if p.skipped is PairSkip.JUDGE_INCONSISTENT),
                    "inconsistent (its two orders disagreed)",
                ),
                (sum(1 for p in asked if p.skipped is PairSkip.JUDGE_FAILED), "without a verdict"),
            )
            if n
        ]
        if no_evidence:
            say(f"no evidence from the judge on {' and '.join(no_evidence)}")
        no_check = sum(1 for p in done.new_pairs if p.skipped is PairSkip.NO_CHECK)
        if no_check and not done.canary.judge:
            say(
                f"{no_check} of them matched no task of the golden set: not graded (add a judge with "
                f"`--judge MODEL` to grade them pairwise)"
            )
    if done.budget_stop:
        say(done.budget_stop)
    say(f"{done.assessment.move.value}: {done.assessment.reason}")
    if done.change is CanaryChange.ROLLED_BACK:
        say(
            f"rolled back: {done.canary.candidate} weight 0%, alias {done.canary.alias!r} restored to {done.canary.baseline}"
        )
    elif done.change is not None:
        say(f"{done.change.value}: {done.canary.candidate} now at {done.canary.weight:g}%")


def _advance(args: argparse.Namespace) -> int:
    from compare_tui import canary as canary_pkg
    from compare_tui.canary.status import EXIT_HAND_EDIT, EXIT_HOLD

    catalogue = load_catalogue_or_fail(args.models)
    with open_store(args.store) as store:
        canary = _canary(store, args.workload)
        if not canary.active:
            raise CommandError(f"the canary of {args.workload} has ended ({canary.state.value})")
        try:
            moved = canary_pkg.advance(store, catalogue, canary, restart=_restart, by=reviewer_name())
        except canary_pkg.HandEditRefused as exc:
            raise CommandError(str(exc), exit_code=EXIT_HAND_EDIT) from None
        except canary_pkg.CanaryError as exc:
            raise CommandError(str(exc), exit_code=EXIT_HOLD) from None
    if moved.active:
        say(
            f"advanced: {moved.candidate} now takes {moved.weight:g}% of {moved.alias!r} (step {moved.step + 1} of {len(moved.steps)})"
        )
    else:
        say(f"promoted: {moved.candidate} takes all of {moved.alias!r} and is the baseline of {moved.workload_id}")
    return 0


def _stop(args: argparse.Namespace) -> int:
    from compare_tui import canary as canary_pkg
    from compare_tui.canary.status import EXIT_HAND_EDIT

    catalogue = load_catalogue_or_fail(args.models)
    with open_store(args.store) as store:
        canary = _canary(store, args.workload)
        try:
            stopped = canary_pkg.stop(
                store, catalogue, canary, restart=_restart, by=reviewer_name(), reason=args.reason
            )
        except canary_pkg.HandEditRefused as exc:
            raise CommandError(str(exc), exit_code=EXIT_HAND_EDIT) from None
        except canary_pkg.CanaryError as exc:
            raise CommandError(str(exc)) from None
    say(f"stopped: alias {stopped.alias!r} routes {stopped.baseline} alone again")
    return 0

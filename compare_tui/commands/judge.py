"""`compare-tui judge BASELINE_RUN CANDIDATE_RUN --judge MODEL`: an opt-in pairwise LLM judge.

Also home of what `evaluator-compare` shares with it: the judge options, the rubric, the
judge's catalogue entry, and running a judging with progress and Ctrl-C handling.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from typing import TYPE_CHECKING, Any

from compare_tui.commands.common import (
    CommandError,
    add_catalogue_option,
    add_store_option,
    daily_budget,
    load_catalogue_or_fail,
    open_store,
    say,
)

if TYPE_CHECKING:
    from compare_tui.catalogue import ModelEntry
    from compare_tui.judge.prompt.rubric import Rubric
    from compare_tui.judge.run.call import JudgeSettings
    from compare_tui.judge.run.runner import JudgingPlan
    from compare_tui.store import RunRecord, Store
    from compare_tui.store.judgements import JudgementRecord

EPILOG = """\
examples:
  compare-tui judge 3f9a 8c21 --judge gemma3-270m --rubric rubric.txt
  compare-tui judge 3f9a 8c21 --judge smollm2-135m --mode reference --json
  compare-tui judge --list

Every pair is judged twice with the answers swapped; a model wins a pair only when it wins
both orderings, anything else is a tie (inconsistent orderings are counted and shown).
Win rate = (wins + ½ ties) / judged pairs with a 95% score interval that accounts for ties (Wilson's when there are none); inconclusive when the
interval includes 50%. Verdicts are stored as they arrive: run the same command again after
an interruption and only missing or failed calls are made.

exit codes:
  0  every pair with answers on both sides was judged (the report is printed)
  1  some judge calls failed (recorded, shown in the table, left out of the win rate);
     run the same command again to retry only those
  2  bad input or a refusal: unknown run or model, different golden sets, a moved or
     changed golden set, an unpinned judge, a provider API key, or a judging over
     today's eval budget ([budget] in the user's config) (nothing was sent)
  130 interrupted (every finished judge call is stored)
"""


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "judge",
        help="judge a candidate run against a baseline run with an LLM judge (opt-in)",
        description="Compare two runs of the same golden set task by task with a judge model from the catalogue "
        "and a rubric you write, with position-bias control (both orderings).",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("baseline", nargs="?", metavar="BASELINE_RUN", help="the baseline run (id or unique prefix)")
    p.add_argument("candidate", nargs="?", metavar="CANDIDATE_RUN", help="the candidate run (id or unique prefix)")
    p.add_argument("--judge", metavar="MODEL", help="the judge: a model in the catalogue")
    add_judge_options(p)
    p.add_argument("--list", action="store_true", help="list the stored judgings and exit")
    p.set_defaults(handler=handle)


def add_judge_options(p: argparse.ArgumentParser) -> None:
    """Options every judging command takes."""
    p.add_argument("--rubric", metavar="FILE", help="plain-words rubric (required for --mode direct)")
    p.add_argument(
        "--mode",
        choices=("direct", "reference"),
        help="direct: which answer better satisfies the rubric; reference: which is closer to the "
        "expected outcome (default: direct with --rubric, else reference)",
    )
    p.add_argument(
        "--structured",
        action="store_true",
        help="ask the server to constrain the judge's reply to a JSON verdict (response_format json_schema; "
        "llama.cpp, vLLM, SGLang and OpenAI support it): for small judges that ignore the reply form",
    )
    p.add_argument("--set", metavar="DIR", help="the golden set folder, when it moved since the run")
    p.add_argument("--concurrency", type=int, default=4, metavar="N", help="judge calls at once (default 4)")
    p.add_argument(
        "--timeout", type=float, default=120.0, metavar="S", help="per-call timeout in seconds (default 120)"
    )
    p.add_argument("--max-tokens", type=int, default=256, metavar="N", help="judge reply cap (default 256)")
    p.add_argument("--json", action="store_true", help="print JSON instead of text")
    add_catalogue_option(p)
    add_store_option(p)


def rubric_from(args: argparse.Namespace, path: str | None = None) -> Rubric:
    from compare_tui.judge import RubricError, load_rubric

    path = args.rubric if path is None else path
    mode = args.mode or ("direct" if path else "reference")
    try:
        return load_rubric(path, mode, structured=args.structured)
    except RubricError as exc:
        raise CommandError(str(exc)) from None


def judge_entry(args: argparse.Namespace, name: str | None) -> ModelEntry:
    from compare_tui.catalogue import UnknownModel

    if not name:
        raise CommandError("name the judge model (a catalogue entry); see --help")
    catalogue = load_catalogue_or_fail(args.models)
    try:
        return catalogue.get(name)
    except UnknownModel as exc:
        raise CommandError(str(exc)) from None


def settings_from(args: argparse.Namespace) -> JudgeSettings:
    from compare_tui.judge import JudgeSettings

    if args.concurrency < 1 or args.max_tokens < 1 or args.timeout <= 0:
        raise CommandError("--concurrency and --max-tokens must be at least 1, --timeout above 0")
    return JudgeSettings(max_tokens=args.max_tokens, timeout_s=args.timeout, concurrency=args.concurrency)


def get_run(store: Store, ref: str) -> RunRecord:
    from compare_tui.store import StoreError

    try:
        return store.get_run(ref)
    except StoreError as exc:
        raise CommandError(str(exc)) from None


def refuse_over_budget(args: argparse.Namespace, store: Store, plans: list[JudgingPlan]) -> None:
    """Refuse, before any judge call, judgings whose spend estimate would exceed today's eval
    budget (`[budget]` in the user's config: the daily limit, and each judged run's workload's)."""
    from datetime import UTC, datetime

    from compare_tui.engine.budget import limit_exceeded
    from compare_tui.judge import judging_estimate
    from compare_tui.vocabulary import money

    budget = daily_budget()
    if not budget.set:
        return
    by_workload: dict[str, float] = {}
    explained = []
    for plan in plans:
        estimate = judging_estimate(store, plan)
        if estimate.usd is not None:  # no cost basis: nothing to hold against the limit
            workload = store.get_run(plan.judging.run_id).goldset_id
            by_workload[workload] = by_workload.get(workload, 0.0) + estimate.usd
            explained.append(f"{estimate.explanation}, ")
    if not any(by_workload.values()):
        return  # nothing to spend (every call stored already, or a free judge): nothing to refuse
    catalogue = load_catalogue_or_fail(args.models)
    over = limit_exceeded(by_workload, budget=budget, store=store, catalogue=catalogue, now=datetime.now(UTC))
    if over:
        whose, what = ("the judging's", explained[0]) if len(explained) == 1 else (f"{len(explained)} judgings'", "")
        raise CommandError(
            f"refused: {whose} estimated spend ≤ {money(sum(by_workload.values()))} ({what}judge "
            f"{plans[0].entry.name}) would exceed {over}; nothing was sent"
        )


def execute(store: Store, plan: JudgingPlan, *, quiet: bool) -> None:
    """Run a prepared judging with a progress line per call on stderr (none when `quiet`)."""
    from compare_tui.judge import execute_judging

    decided = len(store.decided_judgement_ids(plan.judging.id))
    if not quiet:
        say(
            f"judging {plan.judging.id}: {len(plan.jobs)} judge calls, {decided} already stored; judge "
            f"{plan.entry.name} ({plan.judging.provenance})",
            file=sys.stderr,
        )

    def progress(record: JudgementRecord, done: int, total: int) -> None:
        if not quiet:
            what = (
                f"failed: {record.error_class}"
                if record.failed
                else f"grade {record.grade}"
                if record.grade is not None
                else f"{record.verdict} → {record.preferred}"
            )
            say(f"  [{done}/{total}] {record.task_id} {record.ordering}: {what}", file=sys.stderr)

    try:
        asyncio.run(execute_judging(store, plan, progress=progress))
    except KeyboardInterrupt:
        raise CommandError(
            "interrupted; every finished judge call is stored: run the same command again to continue", exit_code=130
        ) from None


def handle(args: argparse.Namespace) -> int:
    from compare_tui.judge import JudgingRefused, load_pair_report, pair_json, prepare_pair_judging, render_pair_text

    if args.list:
        with open_store(args.store) as store:
            return _list(store, as_json=args.json)
    if not args.baseline or not args.candidate:
        raise CommandError("give a baseline run and a candidate run (or --list); see --help")
    rubric = rubric_from(args)
    settings = settings_from(args)
    entry = judge_entry(args, args.judge)
    with open_store(args.store) as store:
        baseline, candidate = get_run(store, args.baseline), get_run(store, args.candidate)
        try:
            plan = prepare_pair_judging(store, baseline, candidate, entry, rubric, set_path=args.set, settings=settings)
        except JudgingRefused as exc:
            raise CommandError(f"refused: {exc}") from None
        refuse_over_budget(args, store, [plan])
        execute(store, plan, quiet=args.json)
        report = load_pair_report(store, plan.judging.id)
    if args.json:
        print(json.dumps(pair_json(report), indent=2, ensure_ascii=False))
    else:
        sys.stdout.write(render_pair_text(report))
    return 1 if report.figures.failed else 0


def _list(store: Store, *, as_json: bool) -> int:
    judgings = store.list_judgings()
    rows: list[dict[str, Any]] = [
        {
            "id": j.id,
            "kind": j.kind,
            "judge": j.judge_model,
            "run": j.run_id,
            "other_run": j.other_run_id,
            "mode": j.mode,
            "reply_form": j.reply_form,
            "rubric_digest": j.rubric_digest,
            "created_at": j.created_at,
            "calls": len(store.judgements_for(j.id)),
        }
        for j in judgings
    ]
    if as_json:
        print(json.dumps(rows, indent=2))
        return 0
    if not rows:
        print("no judgings stored yet: run `compare-tui judge BASELINE_RUN CANDIDATE_RUN --judge MODEL`")
    for r in rows:
        runs = f"{r['run']} vs {r['other_run']}" if r["other_run"] else r["run"]
        print(
            f"{r['id']}  {r['kind']:5}  {r['judge']:16} {runs}  {r['mode']:9} {r['reply_form']:10} {r['calls']:4} calls  "
            f"{r['created_at'][:19]}"
        )
    return 0

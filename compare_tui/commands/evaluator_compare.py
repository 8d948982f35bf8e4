"""`compare-tui evaluator-compare --run RUN --current scorer|JUDGE --candidate JUDGE`: try a
candidate judge on already stored answers (only the candidate is called) and compare it with
the current evaluator and with people's labels."""

from __future__ import annotations

import argparse
import json
import sys

from compare_tui.commands.common import CommandError, open_store, say
from compare_tui.commands.judge import add_judge_options, execute, get_run, judge_entry, rubric_from, settings_from

EPILOG = """\
examples:
  compare-tui evaluator-compare --run 3f9a --current scorer --candidate gemma3-270m --mode reference
  compare-tui evaluator-compare --run 3f9a --current smollm2-135m --candidate gemma3-270m --rubric rubric.txt
  compare-tui evaluator-compare --run 3f9a --current scorer --candidate gemma3-270m --require-safe --json
  compare-tui evaluator-compare --run 3f9a --current scorer --candidate qwen2.5-coder-0.5b --grader quality
  compare-tui evaluator-compare --run 3f9a --current qwen2.5-coder-0.5b --candidate gemma3-270m --pass-at 5

--current is `scorer` (the executable scorer's stored outcome) or a stored judge that graded
this run before (its model name, or its judging id from `compare-tui judge --list`).
--grader quality|similarity|FILE makes the candidate a 1–5 grader (as `compare-tui grade` asks;
similarity is against the expected outcome) instead of a pass/fail judge; a grader (the
candidate, or a stored one named by --current) counts as pass from --pass-at up (default 4:
correct, perhaps with a minor flaw; 3 and below fail).
People's labels are the run's reviews (the review and triage screens). The badge:
  Looks safe       enough labelled rows (--min-labelled, default 20), the candidate correct on
                   at least as many of them as the current evaluator, no failed candidate call,
                   and every changed decision labelled
  Review first     failed candidate calls, a less correct candidate, unread changed decisions,
                   or a candidate that decides the same for every answer where the current
                   evaluator or people tell answers apart (a grader that always answers 5)
  Not enough data  fewer labelled rows than --min-labelled
Agreement with the current evaluator is shown as a map of where they differ; alone it never
makes the badge Looks safe.

exit codes:
  0  compared (whatever the badge)
  1  some candidate judge calls failed (kept in the table; the badge is not Looks safe)
  2  bad input or a refusal (nothing was sent)
  3  --require-safe was given and the badge is not Looks safe
  130 interrupted (every finished judge call is stored)
"""


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "evaluator-compare",
        help="compare a candidate judge with the current evaluator and people's labels",
        description="Re-judge a run's stored answers with a candidate judge and compare its decisions with the "
        "current evaluator's (the executable scorer or a stored judge) and with people's labels.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--run", required=True, metavar="RUN_ID", help="the run whose stored answers are evaluated")
    p.add_argument("--current", required=True, metavar="scorer|JUDGE", help="the current evaluator")
    p.add_argument("--candidate", required=True, metavar="JUDGE", help="the candidate judge (a catalogue model)")
    p.add_argument("--current-rubric", metavar="FILE", help="the rubric the current judge used (default: --rubric)")
    p.add_argument("--min-labelled", type=int, metavar="N", help="labelled rows the badge needs (default 20)")
    p.add_argument(
        "--grader",
        metavar="quality|similarity|FILE",
        help="the candidate grades each answer 1–5 with this rubric (see --pass-at) instead of pass/fail",
    )
    p.add_argument("--pass-at", type=int, metavar="N", help="a 1–5 grade counts as pass from N up (default 4)")
    p.add_argument("--require-safe", action="store_true", help="gate: exit 3 unless the badge is Looks safe")
    add_judge_options(p)
    p.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    from compare_tui.judge import (
        DEFAULT_MIN_LABELLED,
        DEFAULT_PASS_AT,
        LOOKS_SAFE,
        SCORER,
        EvaluatorNotFound,
        JudgingRefused,
        RubricError,
        evaluator_json,
        load_comparison,
        load_scale_rubric,
        prepare_grade_judging,
        prepare_scale_grading,
        render_evaluator_text,
        resolve_current,
    )
    from compare_tui.judge.calibration.load import load_calibration

    min_labelled = DEFAULT_MIN_LABELLED if args.min_labelled is None else args.min_labelled
    if min_labelled < 1:
        raise CommandError("--min-labelled must be at least 1")
    pass_at = DEFAULT_PASS_AT if args.pass_at is None else args.pass_at
    if not 1 <= pass_at <= 5:
        raise CommandError("--pass-at must be a grade from 1 to 5")
    if args.grader:
        try:
            rubric = load_scale_rubric(args.grader, structured=args.structured)
        except RubricError as exc:
            raise CommandError(str(exc)) from None
    else:
        rubric = rubric_from(args)
    current_digest = rubric_from(args, args.current_rubric).digest if args.current_rubric else rubric.digest
    settings = settings_from(args)
    entry = judge_entry(args, args.candidate)
    with open_store(args.store) as store:
        run = get_run(store, args.run)
        try:
            current = resolve_current(store, run.id, args.current, current_digest)
        except EvaluatorNotFound as exc:
            raise CommandError(str(exc)) from None
        if current is not None and (current.judge_model, current.rubric_digest) == (entry.name, rubric.digest):
            raise CommandError(
                f"the candidate ({entry.name} with this rubric) is the current evaluator; "
                "choose another candidate judge or rubric"
            )
        try:
            if args.grader:
                plan = prepare_scale_grading(store, run, entry, rubric, set_path=args.set, settings=settings)
            else:
                plan = prepare_grade_judging(store, run, entry, rubric, set_path=args.set, settings=settings)
        except JudgingRefused as exc:
            raise CommandError(f"refused: {exc}") from None
        execute(store, plan, quiet=args.json)
        store.set_judging_current(plan.judging.id, SCORER if current is None else current.id)
        loaded = load_comparison(store, plan.judging.id, current, min_labelled=min_labelled, pass_at=pass_at)
        calibration = load_calibration(
            store, loaded.candidate.judge_model, loaded.candidate.rubric_digest, run.goldset_id, pass_at=pass_at
        )
    if args.json:
        print(json.dumps(evaluator_json(loaded, calibration), indent=2, ensure_ascii=False))
    else:
        sys.stdout.write(render_evaluator_text(loaded, calibration))
    if args.require_safe and loaded.comparison.badge.name != LOOKS_SAFE:
        say(f"compare-tui: gate failed: the badge is {loaded.comparison.badge.name}, not {LOOKS_SAFE}", file=sys.stderr)
        return 3
    return 1 if loaded.comparison.failed_calls else 0

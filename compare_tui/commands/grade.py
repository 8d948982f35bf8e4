"""`compare-tui grade RUN… --judge MODEL [--rubric quality|similarity|FILE] [--reference RUN]`:
every answer of each run graded alone on a fixed 1–5 scale by a judge from the catalogue."""

from __future__ import annotations

import argparse
import json
import sys

from compare_tui.commands.common import CommandError, add_catalogue_option, add_store_option, open_store, say
from compare_tui.commands.judge import execute, get_run, judge_entry, refuse_over_budget, settings_from

EPILOG = """\
examples:
  compare-tui grade 3f9a 8c21 --judge qwen2.5-coder-0.5b
  compare-tui grade 8c21 --judge gemma3-270m --rubric similarity \\
      --reference 3f9a
  compare-tui grade 8c21 --judge gemma3-270m --rubric rubric.txt --format json

Rubrics (the scale is always 1 = wrong ... 5 = fully right):
  quality     how well the answer does what the request asks (default)
  similarity  how close the answer is to the reference run's answer to the
              same task (--reference RUN, default the comparison's baseline
              when the runs share one), else to the task's expected outcome
  FILE        a plain-text rubric of your own, graded like quality

Each answer is shown to the judge alone, never beside another (no position or
incumbent bias). Grades are stored as they arrive under ids made of run, task,
attempt, judge and rubric digest: the same command again asks only for what is
missing or failed. Under quality the baseline (--reference, else the
comparison's) is graded too, for Δ vs the baseline.

exit codes:
  0  every answer was graded
  1  some judge calls failed or gave no readable grade (kept in the table,
     left out of the mean)
  2  bad input or a refusal (nothing was sent)
  130 interrupted (every finished grade is stored)
"""


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "grade",
        help="grade every answer of runs alone on a 1–5 rubric with an LLM judge (opt-in)",
        description="Grade each stored answer of each run alone, on a fixed 1–5 scale with a short\n"
        "rationale, by a judge model from the catalogue; report the mean grade, the\n"
        "distribution and Δ vs the baseline.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("runs", nargs="+", metavar="RUN", help="runs to grade (id or unique prefix)")
    p.add_argument("--judge", required=True, metavar="MODEL", help="the judge: a model in the catalogue")
    p.add_argument(
        "--rubric",
        default="quality",
        metavar="quality|similarity|FILE",
        help="what the grade measures (default quality)",
    )
    p.add_argument(
        "--reference",
        metavar="RUN",
        help="the baseline run: the reference answers of a similarity "
        "grade, and what Δ is measured against (default: the comparison's baseline)",
    )
    p.add_argument(
        "--structured",
        action="store_true",
        help="ask the server to constrain the reply to a JSON grade (response_format json_schema)",
    )
    p.add_argument("--set", metavar="DIR", help="the golden set folder, when it moved since the runs")
    p.add_argument("--concurrency", type=int, default=4, metavar="N", help="judge calls at once (default 4)")
    p.add_argument(
        "--timeout", type=float, default=120.0, metavar="S", help="per-call timeout in seconds (default 120)"
    )
    p.add_argument("--max-tokens", type=int, default=256, metavar="N", help="judge reply cap (default 256)")
    p.add_argument("--format", choices=("text", "json"), default="text", help="output format (default text)")
    p.add_argument("--rationales", action="store_true", help="print each grade's rationale (text format)")
    add_catalogue_option(p)
    add_store_option(p)
    p.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    from compare_tui.judge import (
        JudgingRefused,
        RubricError,
        RubricMode,
        build_grade_report,
        comparison_baseline,
        grade_json,
        load_run_grades,
        load_scale_rubric,
        prepare_scale_grading,
        render_grade_text,
        with_calibration,
    )

    try:
        rubric = load_scale_rubric(args.rubric, structured=args.structured)
    except RubricError as exc:
        raise CommandError(str(exc)) from None
    settings = settings_from(args)
    entry = judge_entry(args, args.judge)
    quiet = args.format == "json"
    with open_store(args.store) as store:
        runs = list({run.id: run for run in (get_run(store, ref) for ref in args.runs)}.values())
        baseline = get_run(store, args.reference) if args.reference else comparison_baseline(store, runs)
        graded = list(runs)
        if rubric.mode == RubricMode.SIMILARITY and baseline is not None:
            graded = [run for run in runs if run.id != baseline.id]
            if not graded:
                raise CommandError(f"run {baseline.id} is the reference itself: give the runs to compare with it")
        elif baseline is not None and baseline.id not in {run.id for run in runs}:
            graded.insert(0, baseline)  # graded too, so Δ vs the baseline has both sides
        if not quiet and baseline is not None:
            say(f"baseline: {baseline.model_name} (run {baseline.id})", file=sys.stderr)
        plans = []
        for run in graded:
            try:
                plans.append(
                    prepare_scale_grading(
                        store, run, entry, rubric, reference=baseline, set_path=args.set, settings=settings
                    )
                )
            except JudgingRefused as exc:
                raise CommandError(f"refused: {exc}") from None
        refuse_over_budget(args, store, plans)  # every run's grading weighed before any is sent
        results = []
        for run, plan in zip(graded, plans, strict=True):
            if not quiet:
                say(f"grading {run.model_name} (run {run.id}) with {entry.name}, rubric {rubric.mode}", file=sys.stderr)
            execute(store, plan, quiet=quiet)
            results.append(load_run_grades(store, plan.judging, plan.not_judged))
        reference = baseline if rubric.mode == RubricMode.SIMILARITY else None
        report = with_calibration(
            store,
            build_grade_report(
                results, baseline=baseline if rubric.mode == RubricMode.QUALITY else None, reference=reference
            ),
        )
    if quiet:
        print(json.dumps(grade_json(report), indent=2, ensure_ascii=False))
    else:
        sys.stdout.write(render_grade_text(report, rationales=args.rationales))
    return 1 if any(g.figures.failed for g in report.runs) else 0

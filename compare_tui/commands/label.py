"""`compare-tui label next|set|import`: people's labels, the ground truth a judge is calibrated on."""

from __future__ import annotations

import argparse
import csv
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from compare_tui.commands.common import CommandError, add_store_option, open_store, say

if TYPE_CHECKING:
    from compare_tui.store import Store
    from compare_tui.store.records import Verdict

EPILOG = """\
examples:
  compare-tui label next latest                 # every judge that graded the workload's runs
  compare-tui label next 3f9a --judge gemma3-270m --count 5
  compare-tui label set 3f9a t07 pass --note "right label, odd wording"
  compare-tui label import labels.csv          # columns: run, task, verdict (pass/fail/skip), note

A label is a person's verdict on one answer: the same review the TUI's review queue and
triage store (the latest per run and task counts). A judge that decided answers of the
workload (`grade`, `evaluator-compare`) is calibrated on them:
sensitivity (right answers it passes) and specificity (wrong answers it fails), and every
pass rate it decides is shown raw and corrected ("human-calibrated") once 10 right and 10
wrong answers are labelled. `label next` proposes which answers to label so the labels stay
a fair sample (by candidate and by the judge's verdict, in a fixed shuffled order), and how
many more labels a ±5-point corrected rate needs.

exit codes:
  0  done
  2  bad input: no such run or task, a bad verdict, a file that cannot be read, no judge
"""


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "label",
        help="people's labels: which answers to label next, label one, import a labelled file",
        description="People's labels on answers, which calibrate every judge of the workload.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    actions = parser.add_subparsers(dest="label_action", metavar="ACTION", required=True)
    nxt = actions.add_parser(
        "next",
        help="the answers to label next for each judge of a run's workload, and the labels ±5 points need",
        description="For each judge that decided answers of the run's workload: its agreement with your "
        "labels, each run's judge pass rate raw and corrected, the labels needed for ±5 points, and "
        "the answers to label next.",
    )
    add_store_option(nxt)
    nxt.add_argument("run", metavar="RUN", help="a run of the workload (id, unique prefix, or `latest`)")
    nxt.add_argument("--judge", metavar="MODEL", help="only this judge (default: every judge of the workload)")
    nxt.add_argument("--pass-at", type=int, default=4, metavar="N", help="a 1–5 grade passes from N up (default 4)")
    nxt.add_argument("--count", type=int, default=10, metavar="N", help="answers to propose (default 10)")
    nxt.add_argument("--format", choices=("text", "json"), default="text", help="output format (default text)")
    nxt.set_defaults(handler=_next)

    one = actions.add_parser("set", help="label one answer pass, fail or skip", description="Store a person's label.")
    add_store_option(one)
    one.add_argument("run", metavar="RUN", help="the run (id or unique prefix)")
    one.add_argument("task", metavar="TASK", help="the task id")
    one.add_argument("verdict", choices=("pass", "fail", "skip"), help="pass (right), fail (wrong) or skip")
    one.add_argument("--note", default="", help="why (kept with the label)")
    one.add_argument("--reviewer", help="who labels (default $COMPARE_TUI_REVIEWER, else the login name)")
    one.set_defaults(handler=_set)

    imp = actions.add_parser(
        "import",
        help="store the labels of a CSV file (run, task, verdict[, note])",
        description="Store every row of a CSV file with a header `run,task,verdict` (and optionally "
        "`note`, `reviewer`) as a label; nothing is stored when any row is wrong.",
    )
    add_store_option(imp)
    imp.add_argument("file", metavar="FILE", help="the CSV file")
    imp.add_argument("--reviewer", help="who labelled, for rows without a reviewer (default as for `set`)")
    imp.set_defaults(handler=_import)


def _next(args: argparse.Namespace) -> int:
    from compare_tui.judge.calibration.load import load_calibration, workload_judges
    from compare_tui.judge.calibration.render import calibration_sentence, judge_calibration_json, rate_sentence
    from compare_tui.store import StoreError

    with open_store(args.store) as store:
        try:
            newest = store.list_runs(limit=1) if args.run == "latest" else [store.get_run(args.run)]
        except StoreError as exc:
            raise CommandError(str(exc)) from None
        if not newest:
            raise CommandError("no run in the store yet: `compare-tui run` makes one")
        run = newest[0]
        judges = [(j, d) for j, d in workload_judges(store, run.goldset_id) if args.judge in (None, j)]
        if not judges:
            raise CommandError(
                f"no judge decided answers of workload {run.goldset_id}"
                + (f" as {args.judge}" if args.judge else "")
                + ": grade its runs first (`compare-tui grade RUN --judge MODEL`)"
            )
        found = [load_calibration(store, j, d, run.goldset_id, pass_at=args.pass_at) for j, d in judges]
    if args.format == "json":
        document: list[dict[str, Any]] = []
        for jc in found:
            needed = jc.labels_needed()
            document.append(
                judge_calibration_json(jc)
                | {
                    "labels_needed_for_5_points": needed.more,
                    "labels_needed": needed.sentence,
                    "next": [
                        {"run": p.run_id, "model": p.model, "task": p.task_id, "judge_passed": p.passed, "why": p.why}
                        for p in jc.next_labels(args.count)
                    ],
                }
            )
        print(json.dumps(document, indent=2, ensure_ascii=False))
        return 0
    for jc in found:
        say(
            f"Judge {jc.judge} · rubric {jc.rubric_digest[:19]}… · pass at grade ≥ {jc.pass_at} · workload {jc.workload}"
        )
        say(calibration_sentence(jc))
        models = {v.run_id: v.model for v in jc.verdicts}
        for run_id, rate in jc.rates.items():
            say("  " + rate_sentence(f"{models.get(run_id, run_id)} (run {run_id[:8]})", rate))
        say(jc.labels_needed().sentence)
        if jc.drift:
            say(jc.drift)
        proposals = jc.next_labels(args.count)
        if not proposals:
            say("Every answer the judge decided is labelled.\n")
            continue
        say("Label next (a fair sample: by candidate and by the judge's verdict, in a fixed shuffled order):")
        for n, p in enumerate(proposals, 1):
            print(f"{n:>3}  compare-tui label set {p.run_id[:8]} {p.task_id} pass|fail")
            say(f"     {p.why}")
        print()
    return 0


def _set(args: argparse.Namespace) -> int:
    from compare_tui.reviewer import reviewer_name
    from compare_tui.store import ReviewRecord, StoreError

    with open_store(args.store) as store:
        try:
            run = store.get_run(args.run)
        except StoreError as exc:
            raise CommandError(str(exc)) from None
        if args.task not in {a.task_id for a in store.attempts_for_run(run.id)}:
            raise CommandError(
                f"run {run.id} has no answer to task {args.task!r}: `compare-tui report {run.id}` lists them"
            )
        review = store.add_review(
            ReviewRecord(
                run_id=run.id,
                task_id=args.task,
                verdict=args.verdict,
                note=args.note,
                reviewer=reviewer_name(args.reviewer),
            )
        )
        overriding = _overriding(store, [(run.id, review.task_id, review.verdict)])
    say(f"labelled {review.task_id} of run {run.id} ({run.model_name}) {review.verdict} by {review.reviewer}")
    if overriding:
        say(_override_note(overriding))
    return 0


def _import(args: argparse.Namespace) -> int:
    from compare_tui.reviewer import reviewer_name
    from compare_tui.store import ReviewRecord, StoreError
    from compare_tui.vocabulary import ReviewVerdict

    path = Path(args.file)
    try:
        with path.open(newline="", encoding="utf-8") as handle:
            rows = list(csv.DictReader(handle))
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise CommandError(f"cannot read {path}: {exc}") from None
    missing = {"run", "task", "verdict"} - set(rows[0] if rows else {})
    if missing:
        raise CommandError(
            f"{path}: the header must name run, task and verdict (missing: {', '.join(sorted(missing))})"
        )
    reviews = []
    with open_store(args.store) as store:
        answered: dict[str, set[str]] = {}
        for line, row in enumerate(rows, 2):
            try:
                run = store.get_run(row["run"])
            except StoreError as exc:
                raise CommandError(f"{path}:{line}: {exc}") from None
            if run.id not in answered:
                answered[run.id] = {a.task_id for a in store.attempts_for_run(run.id)}
            if row["task"] not in answered[run.id]:
                raise CommandError(f"{path}:{line}: run {run.id} has no answer to task {row['task']!r}")
            verdict = (row["verdict"] or "").strip().lower()
            if verdict not in set(ReviewVerdict):
                raise CommandError(f"{path}:{line}: verdict {row['verdict']!r} is not pass, fail or skip")
            reviewer = (row.get("reviewer") or "").strip() or reviewer_name(args.reviewer)
            reviews.append(
                ReviewRecord(
                    run_id=run.id,
                    task_id=row["task"],
                    verdict=cast("Verdict", verdict),
                    note=row.get("note") or "",
                    reviewer=reviewer,
                )
            )
        for review in reviews:
            store.add_review(review)
        overriding = _overriding(store, [(r.run_id, r.task_id, r.verdict) for r in reviews])
    say(f"imported {len(reviews)} label(s) from {path}")
    if overriding:
        say(_override_note(overriding))
    return 0


def _overriding(store: Store, labels: list[tuple[str, str, str]]) -> int:
    """How many of `labels` (run, task, verdict) are a pass or fail other than the outcome the
    scorer gave that task: a person's verdict replaces it in every report (`task_outcome`)."""
    from compare_tui.vocabulary import Outcome, ReviewVerdict, task_outcome

    scored: dict[str, dict[str, list[str]]] = {}
    count = 0
    for run_id, task_id, verdict in labels:
        if verdict not in (ReviewVerdict.PASS, ReviewVerdict.FAIL):
            continue
        if run_id not in scored:
            scored[run_id] = {}
            for a in store.attempts_for_run(run_id):
                scored[run_id].setdefault(a.task_id, []).append(a.outcome)
        scorer = task_outcome(scored[run_id].get(task_id, []))
        count += scorer in (Outcome.PASS, Outcome.FAIL) and scorer != verdict
    return count


def _override_note(count: int) -> str:
    return (
        f"note: {count} of these label(s) disagree with the scorer's outcome of a task it scored: a person's "
        "verdict replaces the scorer's in every report (its caveat lists them), as a review does"
    )

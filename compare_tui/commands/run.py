"""`compare-tui run SET --model A --model B`: one run per model, combined into a comparison."""

from __future__ import annotations

import argparse
import asyncio
import json
import signal
import sys
from datetime import UTC, datetime

from compare_tui.commands.common import (
    CommandError,
    add_catalogue_option,
    add_store_option,
    load_catalogue_or_fail,
    load_set_or_fail,
    open_store,
)

EPILOG = """\
examples:
  compare-tui run sample_sets/support-triage --model smollm2-135m --model gemma3-270m
  compare-tui run sample_sets/support-triage --baseline gemma3-270m --model smollm2-135m
  compare-tui run sample_sets/order-extraction --model smollm2-135m --attempts 2 --max-cost 0.05 --json
  compare-tui run --resume 20261202-101500-ab12cd

exit codes: 0 every run completed; 1 a run did not complete (interrupted, failed, or incomplete:
            some tasks measured nothing because the endpoint failed; `--resume` retries them);
            2 bad input or a refusal, e.g. an endpoint that does not answer (nothing was sent);
            130 interrupted by Ctrl-C

--baseline A runs A too (first) and judges every --model against it in the report. Without
it, the workload's promoted baseline (`compare-tui promote`) is the baseline when it is one
of the models run.
"""


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "run",
        help="run a golden set against one or more models",
        description="Run a golden set against pinned models (one run per model), score every answer, "
        "keep every attempt in the store, and combine the runs into a comparison.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("set", nargs="?", help="the golden set folder")
    p.add_argument("--model", action="append", default=[], metavar="NAME", help="a catalogue model (repeat for several)")
    p.add_argument("--baseline", metavar="NAME",
                   help="the model you run today: run it too and judge every --model against it")
    add_catalogue_option(p)
    add_store_option(p)
    p.add_argument("--concurrency", type=int, default=4, metavar="N", help="requests at once per model (default 4)")
    p.add_argument("--attempts", type=int, metavar="N", help="attempts per task (default: the manifest's, else 1)")
    p.add_argument("--temperature", type=float, metavar="T", help="sampling temperature (default: the manifest's, else 0)")
    p.add_argument("--max-tokens", type=int, metavar="N", help="answer length cap (default: the manifest's, else 256)")
    p.add_argument("--timeout", type=float, default=120.0, metavar="S", help="per-request timeout in seconds (default 120)")
    p.add_argument("--max-cost", type=float, metavar="USD", help="refuse to start when the estimated spend exceeds this")
    p.add_argument("--name", help="the comparison's name (default: set and date)")
    p.add_argument("--resume", metavar="RUN_ID", help="finish an interrupted run (nothing repeated, nothing lost)")
    p.add_argument("--json", action="store_true", help="print a JSON summary instead of progress and a table")
    p.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    from compare_tui.store import StoreError

    try:
        return _handle(args)
    except StoreError as exc:  # e.g. a read-only store, met before any request was sent
        raise CommandError(str(exc)) from None


def _handle(args: argparse.Namespace) -> int:
    from compare_tui.engine import RunOverrides, RunRefusedError, prepare_resume, prepare_run, refuse_unreachable
    from compare_tui.store import ComparisonRecord

    store = open_store(args.store)
    catalogue = load_catalogue_or_fail(args.models)
    with store:
        if args.resume:
            run = _get_run(store, args.resume)
            goldset = load_set_or_fail(args.set or run.goldset_path)
            entry = _entry(catalogue, run.model_name)
            try:
                refuse_unreachable([entry])
                prepared = [prepare_resume(store, run.id, goldset, entry)]
            except RunRefusedError as exc:
                raise CommandError(str(exc)) from None
            comparison_id = run.comparison_id
        else:
            if not args.set or not args.model:
                raise CommandError("give a golden set and at least one --model (or --resume RUN_ID); see --help")
            goldset = load_set_or_fail(args.set)
            names = list(dict.fromkeys(([args.baseline] if args.baseline else []) + args.model))
            entries = [_entry(catalogue, name) for name in names]
            baseline = _baseline(store, goldset.manifest.workload_id, args.baseline, names, quiet=args.json)
            try:
                refuse_unreachable(entries)  # before hashing weights or writing anything
            except RunRefusedError as exc:
                raise CommandError(f"refused: {exc}") from None
            name = args.name or f"{goldset.manifest.workload_id} {datetime.now(UTC):%Y-%m-%d %H:%M}"
            comparison_id = store.create_comparison(ComparisonRecord(name=name, baseline=baseline)).id
            overrides = RunOverrides(args.attempts, args.temperature, args.max_tokens, args.concurrency, args.timeout)
            prepared = []
            try:
                for entry in entries:
                    prepared.append(prepare_run(store, goldset, entry, overrides, max_cost=args.max_cost, comparison_id=comparison_id))
            except RunRefusedError as exc:
                for p in prepared:  # refuse the whole command before any request is sent
                    store.delete_run(p.run.id)
                store.delete_comparison(comparison_id)
                raise CommandError(f"refused: {exc}") from None
            store.set_comparison_runs(comparison_id, [p.run.id for p in prepared])
        statuses = _execute_all(store, prepared, quiet=args.json)
        if args.json:
            print(json.dumps(_summary(store, comparison_id, prepared, statuses), indent=2))
        else:
            _print_outcome(store, comparison_id, prepared, statuses)
    return 0 if all(s == "completed" for s in statuses) else 1


def _baseline(store, workload_id: str, named: str | None, names: list[str], *, quiet: bool) -> str | None:
    """The comparison's baseline: the one named, else the workload's promoted baseline when it
    is among the models run (said on stderr either way)."""
    if named:
        return named
    current = store.current_baseline(workload_id)
    if current is None:
        return None
    if current.model in names:
        if not quiet:
            print(f"baseline: {current.model} (the promoted baseline of workload {workload_id})", file=sys.stderr)
        return current.model
    print(f"note: workload {workload_id}'s promoted baseline {current.model} is not in this run, so no "
          f"candidate is judged against it (add --baseline {current.model})", file=sys.stderr)
    return None


def _execute_all(store, prepared, *, quiet: bool) -> list[str]:
    from compare_tui.commands.progress import make_observer
    from compare_tui.engine import RunExecutor
    from compare_tui.store import StoreError

    observer = make_observer(quiet=quiet, total=sum(len(p.goldset.tasks) for p in prepared))
    statuses: list[str] = []

    async def main() -> None:
        loop = asyncio.get_running_loop()
        current = asyncio.current_task()
        loop.add_signal_handler(signal.SIGTERM, current.cancel)
        with observer:
            for p in prepared:  # one model at a time, so runs never compete for the machine
                statuses.append(await RunExecutor(store, p, observer=observer).execute())

    try:
        asyncio.run(main())
    except (KeyboardInterrupt, asyncio.CancelledError):
        ids = ", ".join(p.run.id for p in prepared[len(statuses):])
        print(f"interrupted; every finished attempt is stored. Resume with: compare-tui run --resume <id> ({ids})", file=sys.stderr)
        statuses.extend("interrupted" for _ in prepared[len(statuses):])
    except StoreError as exc:
        # The store failed mid-run (disk full, read-only): one clear line, not a traceback.
        stopped = prepared[len(statuses)].run.id
        raise CommandError(f"run {stopped} stopped: {exc}; every attempt finished before this is stored "
                           f"(resume with `compare-tui run --resume {stopped}`)", exit_code=1) from None
    return statuses


def _summary(store, comparison_id, prepared, statuses) -> dict:
    out = {"comparison": comparison_id, "runs": [],
           "decision": _decision_summary(store, comparison_id) if comparison_id else None}
    for p, status in zip(prepared, statuses):
        tally = store.pass_rate_summary(p.run.id)
        out["runs"].append(
            {"id": p.run.id, "model": p.run.model_name, "status": status, "provenance": p.run.provenance,
             "reason": store.get_run_exact(p.run.id).error}
            | _tally_dict(tally)
        )
    return out


def _print_outcome(store, comparison_id, prepared, statuses) -> None:
    for p, status in zip(prepared, statuses):
        tally = _tally_text(store.pass_rate_summary(p.run.id))
        print(f"{p.run.model_name}: run {p.run.id} {status}: {tally} ({p.run.provenance})")
        if status == "incomplete":
            print(f"  {store.get_run_exact(p.run.id).error}")
    summary = _decision_summary(store, comparison_id) if comparison_id else None
    if summary:
        print(f"decision: {summary}")
    print(f"comparison {comparison_id}: see `compare-tui report {comparison_id}`")


def _decision_summary(store, comparison_id: str) -> str | None:
    """The report's one-line decision, when the comparison has a baseline."""
    from compare_tui.report import build_report, load_report_inputs

    report = build_report(load_report_inputs(store, comparison_id))
    if report.decision is None:
        return report.decision_note
    return report.decision.summary


def _tally_dict(t) -> dict:
    return {"pass": t.passed, "fail": t.failed, "review": t.review, "error": t.errored, "not_done": t.not_done,
            "tasks": t.tasks_planned}


def _tally_text(t) -> str:
    not_done = f", {t.not_done} not done" if t.not_done else ""
    return f"{t.passed} pass, {t.failed} fail, {t.review} review, {t.errored} error{not_done} of {t.tasks_planned} tasks"


def _entry(catalogue, name: str):
    try:
        return catalogue.get(name)
    except KeyError as exc:
        raise CommandError(str(exc.args[0]) if exc.args else f"unknown model {name}") from None


def _get_run(store, run_id: str):
    try:
        return store.get_run(run_id)
    except KeyError as exc:
        raise CommandError(str(exc.args[0]) if exc.args else f"no run {run_id}") from None

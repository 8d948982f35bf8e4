"""`compare-tui run SET --model A --model B`: one run per model, combined into a comparison."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypedDict

from compare_tui.commands.common import (
    CommandError,
    add_catalogue_option,
    add_prompt_cache_option,
    add_store_option,
    daily_budget,
    load_catalogue_or_fail,
    load_set_or_fail,
    margin_points,
    open_store,
    run_overrides,
    say,
)
from compare_tui.commands.execution import CommandObserver as _CommandObserver
from compare_tui.commands.execution import execute as _execute
from compare_tui.scoring.placement import SCORERS_HELP
from compare_tui.vocabulary import RunStatus

if TYPE_CHECKING:
    from collections.abc import Sequence

    from compare_tui.engine import (
        PreparedRun,
    )
    from compare_tui.report import DecisionAction
    from compare_tui.store import Store
    from compare_tui.store.summary import RunSummary

EPILOG = """\
examples:
  compare-tui run sample_sets/support-triage --model smollm2-135m --model gemma3-270m
  compare-tui run sample_sets/support-triage --baseline gemma3-270m --model smollm2-135m
  compare-tui run sample_sets/order-extraction --model smollm2-135m --attempts 2 --max-cost 0.05 --json
  compare-tui run sets/code-tasks --model smollm2-135m --scorers ray=ray://ray-head:10001
  compare-tui run sample_sets/ticket-labels --baseline smollm2-135m --model qwen2.5-coder-0.5b --stop-when-settled
  compare-tui run --resume 9835f652e14fb5b2

exit codes: 0 every run completed (or settled: --stop-when-settled); 1 a run did not complete
            (interrupted, failed, or incomplete: some tasks measured nothing because the
            endpoint failed; `--resume` retries them);
            2 bad input or a refusal, e.g. an endpoint that does not answer (nothing was sent);
            130 interrupted by Ctrl-C (143 by SIGTERM); every finished attempt is stored

--baseline A runs A too (first) and judges every --model against it in the report. Without
it, the workload's promoted baseline (`compare-tui promote`) is the baseline when it is one
of the models run. The verdict's margin (--margin, else the manifest's [decision] margin_pp,
else 5) is recorded on the comparison before the first answer; `report --margin` may ask for
another, labelled as chosen after the data.

--stop-when-settled sends the tasks in a random order recorded on the comparison, to every
model interleaved, and stops sending a candidate's tasks once its anytime-valid verdict has
settled (the baseline's once every candidate's has): the runs end `settled`, the tasks not sent
are counted, never failed. `--resume RUN` resumes the whole schedule; `--resume RUN --full-set`
sends the tasks not sent, so the fixed-N figures stand beside the sequential verdict.
"""


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "run",
        help="run a golden set against one or more models",
        description="Run a golden set against pinned models (one run per model), score every answer, "
        "keep every attempt in the store, and combine the runs into a comparison.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("set", nargs="?", help="the golden set folder")
    p.add_argument(
        "--model", action="append", default=[], metavar="NAME", help="a catalogue model (repeat for several)"
    )
    p.add_argument(
        "--baseline", metavar="NAME", help="the model you run today: run it too and judge every --model against it"
    )
    p.add_argument(
        "--margin",
        metavar="POINTS",
        type=margin_points,
        help="the verdict's non-inferiority margin in points, recorded before the data (default: the manifest's, else 5)",
    )
    add_catalogue_option(p)
    add_store_option(p)
    p.add_argument("--concurrency", type=int, default=4, metavar="N", help="requests at once per model (default 4)")
    p.add_argument("--attempts", type=int, metavar="N", help="attempts per task (default: the manifest's, else 1)")
    p.add_argument(
        "--temperature", type=float, metavar="T", help="sampling temperature (default: the manifest's, else 0)"
    )
    p.add_argument("--max-tokens", type=int, metavar="N", help="answer length cap (default: the manifest's, else 256)")
    p.add_argument(
        "--timeout", type=float, default=120.0, metavar="S", help="per-request timeout in seconds (default 120)"
    )
    p.add_argument(
        "--max-cost", type=float, metavar="USD", help="refuse to start when the estimated spend exceeds this"
    )
    add_prompt_cache_option(p)
    p.add_argument("--name", help="the comparison's name (default: set and date)")
    p.add_argument("--resume", metavar="RUN_ID", help="finish an interrupted run (nothing repeated, nothing lost)")
    p.add_argument(
        "--stop-when-settled",
        action="store_true",
        help="decide as soon as each verdict is settled: tasks in a seeded random order sent to every model "
        "interleaved, anytime-valid verdicts (a confidence sequence), and no more requests for a candidate "
        "once its verdict has settled (needs --baseline; the manifest's [decision] sequential = true makes it "
        "the default)",
    )
    p.add_argument(
        "--full-set",
        action="store_true",
        help="with --resume on a --stop-when-settled comparison: send its runs the tasks they were not sent, "
        "so the fixed-N figures stand beside the sequential verdict",
    )
    p.add_argument(
        "--strict-serving",
        action="store_true",
        help="refuse a model whose server reports other settings (context, slots, template mode, build, "
        "quantisation) than its catalogue entry's [model.serving] (default: run with a caveat listing "
        "each difference; the manifest's [run] strict_serving = true makes it the default)",
    )
    p.add_argument(
        "--scorer-jobs",
        type=int,
        metavar="N",
        help="command scorers at once (default: this machine's cores for --scorers local, the "
        "cluster's CPUs for ray); other scorers run at once in the run's process",
    )
    p.add_argument("--scorers", metavar="WHERE", help=SCORERS_HELP)
    p.add_argument(
        "--gpu-telemetry",
        metavar="dcgm=HOST:PORT",
        help="read GPU memory from the DCGM exporter of the host serving the model(s) instead of NVML on "
        "this machine (default: each entry's [model.serving] gpu_telemetry, else NVML here)",
    )
    p.add_argument("--json", action="store_true", help="print a JSON summary instead of progress and a table")
    p.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    from compare_tui.store import StoreError

    try:
        return _handle(args)
    except StoreError as exc:  # e.g. a read-only store, met before any request was sent
        raise CommandError(str(exc)) from None


def _handle(args: argparse.Namespace) -> int:
    from compare_tui.commands.progress import make_observer
    from compare_tui.engine import (
        EngineSession,
        NewRunPlan,
        ResumePlan,
        RunRefusedError,
    )
    from compare_tui.report.sequential import look_at
    from compare_tui.scoring.placement import scorer_executor, where_scorers_run

    telemetry = _gpu_telemetry(args.gpu_telemetry)
    store = open_store(args.store, create=True)
    catalogue = load_catalogue_or_fail(args.models)
    with store:
        if args.resume:
            if args.stop_when_settled:
                raise CommandError(
                    "--stop-when-settled starts a new comparison; a resume keeps its comparison's own "
                    "schedule (a --stop-when-settled one resumes interleaved, stopping as before)"
                )
            run = store.get_run(args.resume)  # an unknown id is a StoreError: one line, exit 2
            goldset = load_set_or_fail(args.set or run.goldset_path)
            plan: NewRunPlan | ResumePlan = ResumePlan(
                (run.id,), strict_serving=args.strict_serving, gpu_telemetry=telemetry, full_set=args.full_set
            )
        else:
            if not args.set or not args.model:
                raise CommandError("give a golden set and at least one --model (or --resume RUN_ID); see --help")
            if args.baseline and set(args.model) == {args.baseline}:
                raise CommandError(
                    f"--baseline {args.baseline} is also the only --model: there is no candidate to "
                    "compare with it; add one with --model NAME, or drop --baseline to run it alone"
                )
            if args.full_set:
                raise CommandError("--full-set goes with --resume RUN_ID (a --stop-when-settled comparison's run)")
            goldset = load_set_or_fail(args.set)
            sequential = args.stop_when_settled or bool(
                goldset.manifest.decision and goldset.manifest.decision.sequential and args.baseline
            )
            if sequential and not args.baseline:
                raise CommandError(
                    "--stop-when-settled judges candidates against a baseline: name it with --baseline A"
                )
            names = tuple(dict.fromkeys(([args.baseline] if args.baseline else []) + args.model))
            overrides = run_overrides(args)
            plan = NewRunPlan(
                goldset.root,
                names,
                overrides,
                args.max_cost,
                args.baseline,
                args.name,
                args.strict_serving,
                margin_pp=args.margin,
                gpu_telemetry=telemetry,
                budget=daily_budget(),
                sequential=sequential,
            )
        observer = _CommandObserver(make_observer(quiet=args.json), quiet=args.json)
        # Before anything is prepared or sent: a scorer cluster that cannot be used refuses the run
        # (only where the set has a command scorer to send it).
        has_command = any(goldset.scorer_for(t).kind == "command" for t in goldset.tasks)
        scorers = scorer_executor(args.scorers, args.scorer_jobs, needed=has_command)
        try:
            session = EngineSession(
                store, plan, catalogue, observer, goldset=goldset, scorers=scorers, stop_rule=look_at
            )
            try:
                prepared = session.prepare()
            except RunRefusedError as exc:
                raise CommandError(str(exc) if args.resume else f"refused: {exc}") from None
            _serving_notes(prepared)
            if not args.json and has_command:
                say(f"scorers: {where_scorers_run(scorers.describe())}", file=sys.stderr)
            statuses = _execute(session, observer)
        finally:
            scorers.close()
        comparison_id = session.comparison_id
        if args.json:
            summary = _summary(store, comparison_id, prepared, statuses) | {"scorers": scorers.describe()}
            print(json.dumps(summary, indent=2))
        else:
            _print_outcome(store, comparison_id, prepared, statuses)
    if observer.interrupted is not None:
        return observer.interrupted
    return 0 if all(s in (RunStatus.COMPLETED, RunStatus.SETTLED) for s in statuses) else 1


def _serving_notes(prepared: list[PreparedRun]) -> None:
    """Say, before the first request, which servers run with other settings than the catalogue's."""
    from compare_tui.engine.serving import differences_note

    for p in prepared:
        note = differences_note(p.entry, p.run.serving[-1]) if p.run.serving else None
        if note:
            print(note, file=sys.stderr)


def _summary(
    store: Store, comparison_id: str | None, prepared: Sequence[PreparedRun], statuses: Sequence[str]
) -> dict[str, Any]:
    decision = _decision(store, comparison_id) if comparison_id else None
    out: dict[str, Any] = {
        "comparison": comparison_id,
        "runs": [],
        "decision": decision.summary if decision else None,
        # As the report's JSON has them (`decision.action`, `decision.chosen`): values, not prose.
        "decision_action": decision.action if decision else None,
        "decision_chosen": decision.chosen if decision else None,
        "sequential": decision.sequential if decision else None,
    }
    for p, status in zip(prepared, statuses):
        tally = store.pass_rate_summary(p.run.id)
        out["runs"].append(
            {
                "id": p.run.id,
                "model": p.run.model_name,
                "status": status,
                "provenance": p.run.provenance,
                "reason": store.get_run_exact(p.run.id).error,
            }
            | _tally_dict(tally, status)
        )
    return out


def _print_outcome(
    store: Store, comparison_id: str | None, prepared: Sequence[PreparedRun], statuses: Sequence[str]
) -> None:
    for p, status in zip(prepared, statuses):
        tally = _tally_text(store.pass_rate_summary(p.run.id), status)
        say(f"{p.run.model_name}: run {p.run.id} {status}: {tally} ({p.run.provenance})")
        if status == RunStatus.INCOMPLETE:
            say(f"  {store.get_run_exact(p.run.id).error}")
    decision = _decision(store, comparison_id) if comparison_id else None
    if decision and decision.summary:
        say(f"decision: {decision.summary}")
    if decision and decision.sequential:
        say(f"sequential: {decision.sequential}")
    say(f"comparison {comparison_id}: see `compare-tui report {comparison_id}`")


@dataclass(frozen=True, slots=True)
class _Decision:
    """The end of a run's view of its comparison's report: its one-line decision (or the note
    saying why there is none), the decision's action and chosen model when it has one, and a
    sequential comparison's `settled after … of … tasks; … requests not sent; … not spent`."""

    summary: str | None
    action: DecisionAction | None = None
    chosen: str | None = None
    sequential: str | None = None


def _decision(store: Store, comparison_id: str) -> _Decision:
    """The comparison's report, assembled once (no grades: the summary shows none)."""
    from compare_tui.assembly import assemble_report

    report = assemble_report(store, comparison_id, grades=False).report
    sequential = None if report.sequential is None else report.sequential.words
    if report.decision is None:
        return _Decision(report.decision_note, sequential=sequential)
    return _Decision(report.decision.summary, report.decision.action, report.decision.chosen, sequential)


# A run's tasks by outcome, as `run --json` and `runs list --json` print them (the functional
# form, because `pass` is a keyword).
RunTally = TypedDict(
    "RunTally", {"pass": int, "fail": int, "review": int, "error": int, "not_done": int, "not_sent": int, "tasks": int}
)


def _tally_dict(t: RunSummary, status: str) -> RunTally:
    # A settled run's tasks not sent are not sent, never failures nor "not done".
    settled = status == RunStatus.SETTLED
    return {
        "pass": t.passed,
        "fail": t.failed,
        "review": t.review,
        "error": t.errored,
        "not_done": 0 if settled else t.not_done,
        "not_sent": t.not_done if settled else 0,
        "tasks": t.tasks_planned,
    }


def _tally_text(t: RunSummary, status: str) -> str:
    if status == RunStatus.SETTLED and t.not_done:
        not_done = f", {t.not_done} not sent (settled)"
    else:
        not_done = f", {t.not_done} not done" if t.not_done else ""
    return (
        f"{t.passed} pass, {t.failed} fail, {t.review} review, {t.errored} error{not_done} of {t.tasks_planned} tasks"
    )


def _gpu_telemetry(given: str | None) -> str | None:
    """`--gpu-telemetry` as the engine takes it (`dcgm=HOST:PORT`), or a one-line refusal."""
    if given is None:
        return None
    from compare_tui.endpoint.dcgm import parse_gpu_telemetry

    try:
        return parse_gpu_telemetry(given).spec
    except ValueError as exc:
        raise CommandError(f"--gpu-telemetry: {exc}") from None

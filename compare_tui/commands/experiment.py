"""`compare-tui experiment new|show|run|list|delete`: named experiments of arms × N repeats."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any

from compare_tui.commands.common import (
    CommandError,
    add_catalogue_option,
    add_prompt_cache_option,
    add_store_option,
    daily_budget,
    load_catalogue_or_fail,
    load_set_or_fail,
    open_store,
    run_overrides,
    say,
)
from compare_tui.vocabulary import RunStatus

if TYPE_CHECKING:
    from compare_tui.experiment.figures import ExperimentFigures
    from compare_tui.store import Store

EPILOG = """\
examples:
  compare-tui experiment new triage-small sample_sets/support-triage --arm smollm2-135m --arm gemma3-270m --repeats 3
  compare-tui experiment new temp-sweep sample_sets/support-triage --arm "smollm2-135m temperature=0" \\
      --arm "smollm2-135m temperature=0.8" --repeats 5
  compare-tui experiment run triage-small            # launches only the runs each arm lacks
  compare-tui experiment run triage-small --repeats 5
  compare-tui experiment new ab sample_sets/support-triage --arm smollm2-135m --arm gemma3-270m --repeats 1
  compare-tui experiment run ab --stop-when-settled  # each arm stops once settled against the first
  compare-tui experiment show triage-small --json
  compare-tui experiment list
  compare-tui experiment delete triage-small         # the configuration only; runs stay

An arm's runs are the first N completed runs of its cell (golden set digest + model +
endpoint and serving notes + attempts/temperature/max_tokens), whoever started them: a plain
`compare-tui run` of the same cell counts too. Figures are computed from those runs each time.

--stop-when-settled (saved on the experiment): where the question is arm-vs-arm (N = 1, each arm
its own model), the arms run paired and interleaved in a seeded order recorded on a comparison,
and each arm is sent nothing more once its anytime-valid verdict against the reference arm (the
first --arm) has settled; the figures say where each settled and how many requests were not
sent. Elsewhere (N > 1: the question is run-to-run variation) every run covers the full set, and
that is said. An interrupted sequence resumes where it stopped on the next `experiment run`.

exit codes:
  0  done (`run`: nothing left to launch and every launched run completed, or settled)
  1  `run`: a launched run did not complete (interrupted or failed)
  2  bad input or a refusal: unknown experiment, model or set, N outside 1-50, fewer than two
     arms, two identical arms, a changed catalogue entry or golden set (nothing was sent)
  130 interrupted by Ctrl-C (every finished attempt is stored)
"""


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    group = subparsers.add_parser(
        "experiment",
        help="named experiments: arms × N repeated runs, with intervals and flaky tasks",
        description="Experiments hold controls (golden set, settings) constant across two or more arms "
        "(a model and its serving configuration), each run N times.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    group.set_defaults(group_parser=group)
    sub = group.add_subparsers(dest="experiment_command", metavar="SUBCOMMAND")

    new = sub.add_parser(
        "new",
        help="save a new experiment (nothing is run)",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    new.add_argument("name", help="the experiment's name (letters, digits, . _ -)")
    new.add_argument("set", help="the golden set folder")
    new.add_argument(
        "--arm",
        action="append",
        default=[],
        metavar="SPEC",
        required=True,
        help='a catalogue model, optionally with per-arm settings: "NAME [temperature=0.7 …]" (repeat: two or more)',
    )
    new.add_argument("--repeats", type=int, default=3, metavar="N", help="completed runs per arm, 1-50 (default 3)")
    add_stop_when_settled_option(new)
    new.add_argument("--attempts", type=int, metavar="N", help="attempts per task (default: the manifest's, else 1)")
    new.add_argument("--temperature", type=float, metavar="T", help="sampling temperature (default: the manifest's)")
    new.add_argument(
        "--max-tokens", type=int, metavar="N", help="answer length cap (default: the manifest's, else 256)"
    )
    new.add_argument("--concurrency", type=int, default=4, metavar="N", help="requests at once (default 4)")
    new.add_argument("--timeout", type=float, default=120.0, metavar="S", help="per-request timeout (default 120)")
    add_prompt_cache_option(new)
    add_catalogue_option(new)
    add_store_option(new)
    new.set_defaults(handler=_new)

    show = sub.add_parser("show", help="an experiment's figures, computed from its runs now")
    show.add_argument("name")
    show.add_argument("--json", action="store_true", help="print a JSON document")
    add_store_option(show)
    show.set_defaults(handler=_show)

    run = sub.add_parser("run", help="launch only the runs each arm lacks, then show the figures")
    run.add_argument("name")
    run.add_argument("--repeats", type=int, metavar="N", help="first change N (saved), then launch")
    run.add_argument("--json", action="store_true", help="no progress; print a JSON document at the end")
    add_stop_when_settled_option(run, saved=True)
    run.add_argument(
        "--same-host-at-once",
        action="store_true",
        help="also run arms whose servers share a machine at the same time (default: arms on different "
        "machines only). Faster, but each run's latency and hardware cost then include the other's load",
    )
    add_catalogue_option(run)
    add_store_option(run)
    run.set_defaults(handler=_run)

    listing = sub.add_parser("list", help="every experiment with its arms and run counts")
    listing.add_argument("--json", action="store_true", help="print JSON")
    add_store_option(listing)
    listing.set_defaults(handler=_list)

    delete = sub.add_parser("delete", help="delete an experiment's configuration (its runs stay)")
    delete.add_argument("name")
    add_store_option(delete)
    delete.set_defaults(handler=_delete)


def add_stop_when_settled_option(parser: argparse.ArgumentParser, *, saved: bool = False) -> None:
    parser.add_argument(
        "--stop-when-settled",
        action="store_true",
        help=("first turn it on for the experiment (saved), then launch: " if saved else "")
        + "where the question is arm-vs-arm (--repeats 1, each arm its own model), run the arms paired and "
        "interleaved and stop sending an arm's requests once its anytime-valid verdict against the first "
        "arm has settled; elsewhere every run covers the full set (and it says why)",
    )


def _validation_text(exc: Exception) -> str:
    from pydantic import ValidationError

    if isinstance(exc, ValidationError):
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ()))
        message = str(first.get("msg", "")).removeprefix("Value error, ")
        return f"{where}: {message}" if where else message
    return str(exc)


def _new(args: argparse.Namespace) -> int:
    from pydantic import ValidationError

    from compare_tui.catalogue import CatalogueError
    from compare_tui.engine.settings import resolve_settings
    from compare_tui.experiment import (
        MAX_REPEATS,
        check_name,
        define_experiment,
        parse_arm_spec,
    )
    from compare_tui.store import ExperimentRecord, StoreError

    try:
        check_name(args.name)
        if not 1 <= args.repeats <= MAX_REPEATS:
            raise ValueError(f"--repeats must be within 1..{MAX_REPEATS}, got {args.repeats}")
        if len(args.arm) < 2:
            raise ValueError("an experiment needs at least two arms: repeat --arm")
        specs = [parse_arm_spec(spec) for spec in args.arm]
    except ValueError as exc:
        raise CommandError(str(exc)) from None
    goldset = load_set_or_fail(args.set)
    catalogue = load_catalogue_or_fail(args.models)
    try:
        arms = [(catalogue.get(name), overrides) for name, overrides in specs]
        settings = resolve_settings(
            goldset,
            run_overrides(args),
        ).as_dict()
        config = define_experiment(goldset, arms, settings, args.repeats, sequential=args.stop_when_settled)
    except (CatalogueError, ValidationError, ValueError) as exc:
        raise CommandError(f"experiment {args.name}: {_validation_text(exc)}") from None
    with open_store(args.store, create=True) as store:
        try:
            store.create_experiment(ExperimentRecord(name=args.name, config=config.model_dump(mode="json")))
        except StoreError as exc:
            raise CommandError(str(exc)) from None
        figures = _figures(store, args.name)
    say(
        f"experiment {args.name} saved: {len(config.arms)} arms × {config.repeats} runs on "
        f"{config.goldset.workload_id} {config.goldset.version}"
    )
    for arm in figures.arms:
        say(
            f"  {arm.label}: {arm.observed} of {arm.desired} runs already held ({arm.cell}), "
            f"{len(arm.in_flight)} in flight, {arm.to_launch} to launch"
        )
    if figures.sequence is not None:
        say(figures.sequence.words)
    if figures.to_launch:
        say(f"launch the missing runs with `compare-tui experiment run {args.name}`")
    else:
        say(f"nothing to launch: see the figures with `compare-tui experiment show {args.name}`")
    return 0


def _figures(store: Store, name: str) -> ExperimentFigures:
    from compare_tui.experiment import (
        ExperimentConfigError,
        experiment_figures,
        load_experiment,
    )
    from compare_tui.store import StoreError

    try:
        return experiment_figures(load_experiment(store, name))
    except (StoreError, ExperimentConfigError) as exc:
        raise CommandError(str(exc)) from None


def _print_figures(figures: ExperimentFigures, as_json: bool) -> None:
    from compare_tui.experiment import experiment_document, render_text

    sys.stdout.write(json.dumps(experiment_document(figures), indent=2) + "\n" if as_json else render_text(figures))


def _show(args: argparse.Namespace) -> int:
    with open_store(args.store) as store:
        figures = _figures(store, args.name)
    _print_figures(figures, args.json)
    return 0


def _run(args: argparse.Namespace) -> int:
    from compare_tui.commands.execution import execute_prepared, resume_sequence
    from compare_tui.experiment import (
        ExperimentConfigError,
        LaunchRefused,
        arm_entries,
        being_executed,
        check_goldset,
        launch_missing,
        parse_config,
        unfinished_sequence,
    )
    from compare_tui.store import StoreError

    with open_store(args.store, create=True) as store:
        try:
            config = parse_config(store.get_experiment(args.name))
            if args.repeats is not None:
                config = config.with_repeats(args.repeats)
            if args.stop_when_settled:
                config = config.with_sequential()
            if args.repeats is not None or args.stop_when_settled:
                store.update_experiment(args.name, config.model_dump(mode="json"))
        except (StoreError, ExperimentConfigError, ValueError) as exc:
            raise CommandError(_validation_text(exc)) from None
        unfinished = unfinished_sequence(store, config)
        if unfinished is not None:
            # The arms' sequence an earlier launch left unfinished: go on with it (same order,
            # same looks, no task sent twice) rather than starting another.
            say(f"experiment {args.name}: resuming the arms' sequence (run {unfinished[:8]})", file=sys.stderr)
            statuses = resume_sequence(store, unfinished, load_catalogue_or_fail(args.models), quiet=args.json)
            if any(status in (RunStatus.INTERRUPTED, RunStatus.INCOMPLETE) for status in statuses):
                _print_figures(_figures(store, args.name), args.json)
                return 130 if RunStatus.INTERRUPTED in statuses else 1
        before = _figures(store, args.name)
        if before.to_launch == 0:
            for sentence in being_executed(store, config):
                print(f"experiment {args.name}: {sentence}", file=sys.stderr)
            waiting = sum(len(a.in_flight) for a in before.arms)
            say(
                f"experiment {args.name} is complete: every arm holds its {config.repeats} runs; nothing launched"
                if before.complete
                else f"experiment {args.name}: nothing to launch; {waiting} run(s) in flight elsewhere "
                "(finish an abandoned one with `compare-tui run --resume RUN_ID`)",
                file=sys.stderr,
            )
            _print_figures(before, args.json)
            return 0
        goldset = load_set_or_fail(config.goldset.path)
        catalogue = load_catalogue_or_fail(args.models)
        try:
            check_goldset(config, goldset)
            entries = arm_entries(config, catalogue)
            result = launch_missing(
                store,
                config,
                goldset,
                entries,
                lambda prepared: execute_prepared(store, prepared, quiet=args.json, together=True),
                same_host_at_once=args.same_host_at_once,
                budget=daily_budget(),
                catalogue=catalogue,
                name=args.name,
            )
        except LaunchRefused as exc:
            raise CommandError(f"experiment {args.name}: {exc}") from None
        after = _figures(store, args.name)
    for sentence in result.skipped:
        print(f"experiment {args.name}: {sentence}", file=sys.stderr)
    if result.full_set is not None:
        say(
            f"experiment {args.name}: --stop-when-settled: the runs cover the full set: {result.full_set}",
            file=sys.stderr,
        )
    launched = ", ".join(f"{label} {run_id[:8]} {status}" for label, run_id, status in result.launched)
    say(
        f"experiment {args.name}: launched {len(result.launched)} run(s){': ' + launched if launched else ''}",
        file=sys.stderr,
    )
    _print_figures(after, args.json)
    if result.stopped:
        return 130
    ended = (RunStatus.COMPLETED, RunStatus.SETTLED)  # settled: stopped once its verdict settled
    return 0 if all(status in ended for _, _, status in result.launched) else 1


def _list(args: argparse.Namespace) -> int:
    from compare_tui.experiment import (
        ExperimentConfigError,
        arm_selections,
        candidate_runs,
        check_arm,
        parse_config,
    )

    rows: list[dict[str, Any]] = []
    with open_store(args.store) as store:
        for record in store.list_experiments():
            try:
                config = parse_config(record)
            except ExperimentConfigError as exc:
                rows.append({"name": record.name, "created_at": record.created_at, "error": str(exc)})
                continue
            selections = arm_selections(config, candidate_runs(store, config))
            # Confounds need only the run records (no attempts), so the listing shows them too.
            confounds = [
                c.sentence()
                for arm, sel in zip(config.arms, selections, strict=True)
                for c in check_arm(arm.label, sel.held, arm.model, config.arm_settings(arm)).confounds
            ]
            rows.append(
                {
                    "name": record.name,
                    "created_at": record.created_at,
                    "set": config.goldset.workload_id,
                    "set_version": config.goldset.version,
                    "repeats": config.repeats,
                    "arms": [
                        {"label": arm.label, "observed": len(sel.held), "in_flight": len(sel.in_flight)}
                        for arm, sel in zip(config.arms, selections, strict=True)
                    ],
                    "confounds": confounds,
                }
            )
    if args.json:
        print(json.dumps(rows, indent=2))
    elif not rows:
        print("no experiments yet: make one with `compare-tui experiment new NAME SET --arm A --arm B`")
    for row in [] if args.json else rows:
        if "error" in row:
            print(f"{row['name']}: {row['error']}")
            continue
        arms = "; ".join(
            f"{a['label']} {a['observed']}/{row['repeats']}"
            + (f" (+{a['in_flight']} in flight)" if a["in_flight"] else "")
            for a in row["arms"]
        )
        flag = f"  ⚠ {len(row['confounds'])} confound(s)" if row["confounds"] else ""
        print(
            f"{row['name']}  {row['created_at'][:16].replace('T', ' ')}  {row['set']} {row['set_version']}  {arms}{flag}"
        )
        for sentence in row["confounds"]:
            print(f"    ⚠ CONFOUND — {sentence}")
    return 0


def _delete(args: argparse.Namespace) -> int:
    from compare_tui.store import StoreError

    with open_store(args.store) as store:
        try:
            store.delete_experiment(args.name)
        except StoreError as exc:
            raise CommandError(str(exc)) from None
    print(f"experiment {args.name} deleted (its runs stay in the store)")
    return 0

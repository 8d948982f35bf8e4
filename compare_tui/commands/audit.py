"""`compare-tui audit`: the audit ledger (one row per request sent to a model endpoint) counted
by state, per model and per run, and the requests whose answer was never stored."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING, Any

from compare_tui.commands.common import CommandError, add_store_option, open_store, say
from compare_tui.vocabulary import AuditState

if TYPE_CHECKING:
    from compare_tui.store.audit_ledger import AuditLedger, AuditOwner, LedgerCounts, RunLedger

STATE_WORDS = {
    AuditState.SENT: "written before the request went out, never completed",
    AuditState.DONE: "answered (or failed) and stored with its measure",
    AuditState.UNKNOWN: "its sender died before reading the answer: the server may have had it",
    AuditState.CANCELLED: "its sender stopped reading (Ctrl-C, SIGTERM, the run stopped)",
}
"""What each state means, in the words `audit` prints under its counts."""


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "audit",
        help="the audit ledger: every request sent, by state, per model and per run",
        description="Every request compare-tui sent to a model endpoint is a row of the audit ledger, "
        "written before it goes out: `sent`, then `done` once its answer is stored; `unknown` when its "
        "process died before the answer (the next holder of the run marks it so), `cancelled` when it "
        "stopped reading. This counts the rows by state, per model and per run, and lists the rows that "
        "are not done. With no RUN_OR_COMPARISON, the whole ledger (judge calls and gateway checks too).",
        epilog="examples:\n"
        "  compare-tui audit                      # the whole ledger\n"
        "  compare-tui audit 3f2a9c1d             # one run, comparison or tool-call run (an id prefix)\n"
        "  compare-tui audit --since 2h --json    # the last two hours, as JSON",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "ref", nargs="?", metavar="RUN_OR_COMPARISON", help="a run, comparison or tool-call run id (or its start)"
    )
    p.add_argument(
        "--since",
        metavar="WHEN",
        help="only requests recorded since WHEN: a duration back from now (30m, 2h, 3d, 1w), "
        "a date (2026-12-07) or a time (2026-12-07T13:05, UTC unless it names its zone)",
    )
    p.add_argument("--rows", type=int, default=50, metavar="N", help="list at most N rows not done (default 50)")
    p.add_argument("--json", action="store_true", help="print JSON")
    add_store_option(p)
    p.set_defaults(handler=_audit)


def _audit(args: argparse.Namespace) -> int:
    from compare_tui.store import AmbiguousIdError, RunNotFoundError
    from compare_tui.store.audit_ledger import AuditScope, since_timestamp
    from compare_tui.store.holders import live_lease

    try:
        since = since_timestamp(args.since) if args.since else None
    except ValueError as exc:
        raise CommandError(str(exc)) from None
    if args.rows < 0:
        raise CommandError(f"--rows takes a count of 0 or more (got {args.rows})")
    with open_store(args.store) as store:
        owner = None
        if args.ref:
            try:
                owner = store.audit_owner(args.ref.strip())
            except (RunNotFoundError, AmbiguousIdError) as exc:
                raise CommandError(str(exc)) from None
        scope = AuditScope(
            run_ids=owner.run_ids if owner else (),
            toolcall_run_ids=owner.toolcall_run_ids if owner else (),
            since=since,
        )
        ledger = store.audit_ledger(scope, rows_limit=args.rows)
        # Whether a run whose rows are still `sent` has a live executor: in flight, or killed.
        live = {
            run.run_id: live_lease(store, run.run_id) is not None
            for run in ledger.per_run
            if run.run_id is not None and run.counts.by_state[AuditState.SENT]
        }
    what = f" of {owner.noun} {owner.id}" if owner else ""
    if args.json:
        print(json.dumps(_document(ledger, owner, live), indent=2))
        return 0
    for line in _lines(ledger, what, live):
        say(line)
    return 0


def _document(ledger: AuditLedger, owner: AuditOwner | None, live: dict[str, bool]) -> dict[str, Any]:
    return {
        "scope": {
            "of": owner.noun if owner else "ledger",
            "id": owner.id if owner else None,
            "run_ids": list(ledger.scope.run_ids),
            "toolcall_run_ids": list(ledger.scope.toolcall_run_ids),
            "since": ledger.scope.since,
        },
        "states": ledger.counts.as_json(),
        "per_model": [{"model": model, "states": counts.as_json()} for model, counts in ledger.per_model.items()],
        "per_run": [
            {
                "run_id": run.run_id,
                "kind": run.kind,
                "models": list(run.models),
                "states": run.counts.as_json(),
                **({"executing": live[run.run_id]} if run.run_id in live else {}),
            }
            for run in ledger.per_run
        ],
        "not_done": [row.model_dump(mode="json") for row in ledger.unsettled],
    }


def _table(title: str, rows: list[tuple[str, LedgerCounts]]) -> list[str]:
    """A title column, then one count column per state and the total, right-aligned."""
    heads = [state.value for state in AuditState] + ["total"]
    cells = [[str(counts.by_state[state]) for state in AuditState] + [str(counts.total)] for _, counts in rows]
    first = max([len(title), *(len(name) for name, _ in rows)])
    widths = [max([len(head), *(len(row[i]) for row in cells)]) for i, head in enumerate(heads)]
    lines = [f"{title:<{first}}  " + "  ".join(f"{h:>{w}}" for h, w in zip(heads, widths, strict=True))]
    for (name, _), row in zip(rows, cells, strict=True):
        lines.append(f"{name:<{first}}  " + "  ".join(f"{c:>{w}}" for c, w in zip(row, widths, strict=True)))
    return lines


def _run_name(run: RunLedger) -> str:
    if run.run_id is None:
        return "(no run: judge calls, checks)"
    kind = "tool-call run " if run.kind == "toolcall" else ""
    return f"{kind}{run.run_id} {', '.join(run.models)}"


def _lines(ledger: AuditLedger, what: str, live: dict[str, bool]) -> list[str]:
    since = f" since {ledger.scope.since[:19].replace('T', ' ')} UTC" if ledger.scope.since else ""
    counts = ledger.counts
    if not counts.total:
        return [f"audit ledger{what}{since}: no requests"]
    lines = [
        f"audit ledger{what}{since}: {counts.total} request(s)",
        "  " + " · ".join(f"{state.value} {counts.by_state[state]}" for state in AuditState),
        "",
    ]
    lines += _table("per model", list(ledger.per_model.items())) + [""]
    lines += _table("per run", [(_run_name(run), run.counts) for run in ledger.per_run]) + [""]
    not_done = counts.total - counts.by_state[AuditState.DONE]
    if not_done:
        shown = len(ledger.unsettled)
        lines.append(f"not done ({not_done}" + (f", first {shown} shown" if shown < not_done else "") + "):")
        for row in ledger.unsettled:
            owner = row.run_id or (f"tool-call run {row.toolcall_run_id}" if row.toolcall_run_id else "no run")
            # As a run's progress lines name an attempt: task, then `#attempt`.
            task = f" {row.task_id}" + (f" #{row.attempt}" if row.attempt is not None else "") if row.task_id else ""
            lines.append(f"  #{row.id} {row.at[:19].replace('T', ' ')} {row.state.value:<9} {owner}{task} {row.model}")
        lines.append("")
    lines += [f"{state.value}: {STATE_WORDS[state]}" for state in AuditState if counts.by_state[state]]
    for run in ledger.per_run:
        if run.run_id not in live:
            continue
        if live[run.run_id]:
            lines.append(f"run {run.run_id}: its `sent` requests are in flight (the run is executing now)")
        elif run.kind == "run":
            lines.append(
                f"run {run.run_id}: no live process holds it (killed?); its `sent` requests become `unknown` "
                f"when it is taken over: `compare-tui run --resume {run.run_id}`"
            )
        else:
            lines.append(f"tool-call run {run.run_id}: no live process holds it (killed?)")
    return lines

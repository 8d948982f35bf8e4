"""The audit ledger read back (`compare-tui audit`): its rows counted by state, per model and per
run, and the rows not `done` one by one.

Every request that left the process is a row (`engine/audit.py`): written `sent` before it went
out, completed `done` with its measure; a process killed meanwhile leaves it `sent` until the
run's next holder marks it `unknown`, and one that stopped reading marks it `cancelled`
(`vocabulary.AuditState`). The counts are SQL aggregates, so a ledger of millions of rows is
read in one pass without building a record per row.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from compare_tui.store.base import StoreBase
from compare_tui.store.errors import AmbiguousIdError, RunNotFoundError
from compare_tui.store.records import AuditRow
from compare_tui.vocabulary import AuditState

UNSETTLED = (AuditState.SENT, AuditState.UNKNOWN, AuditState.CANCELLED)
"""The states of a request whose answer was never stored (each may still have reached the server)."""

_AGO = re.compile(r"(\d+)\s*([smhdw])")
_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days", "w": "weeks"}


def since_timestamp(when: str, now: datetime | None = None) -> str:
    """`--since WHEN` in the store's timestamp form: a duration back from now (`30m`, `2h`,
    `3d`, `1w`), a date (`2026-12-07`, midnight UTC) or an ISO 8601 time (UTC unless it names
    its zone). `ValueError` says what forms it takes."""
    text = when.strip()
    ago = _AGO.fullmatch(text)
    if ago:
        moment = (now or datetime.now(UTC)) - timedelta(**{_UNITS[ago.group(2)]: int(ago.group(1))})
    else:
        try:
            moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
        except ValueError:
            raise ValueError(
                f"--since {when!r} is neither a duration back from now (30m, 2h, 3d, 1w) "
                "nor a date or time (2026-12-07, 2026-12-07T13:05, UTC unless it names its zone)"
            ) from None
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


@dataclass(frozen=True, slots=True)
class AuditScope:
    """Which rows to read: those of some runs (golden-set and tool-call runs), or every row
    (judge calls and gateway checks, which belong to no run, included); since a time or not."""

    run_ids: tuple[str, ...] = ()
    toolcall_run_ids: tuple[str, ...] = ()
    since: str | None = None
    """A store timestamp: rows recorded at or after it."""

    @property
    def whole(self) -> bool:
        """No run named: the whole ledger (or all of it since `since`)."""
        return not self.run_ids and not self.toolcall_run_ids

    def where(self) -> tuple[str, list[Any]]:
        """The SQL condition and its parameters."""
        clauses: list[str] = []
        params: list[Any] = []
        if not self.whole:
            owned = []
            if self.run_ids:
                owned.append(f"run_id IN ({', '.join('?' * len(self.run_ids))})")
                params += self.run_ids
            if self.toolcall_run_ids:
                owned.append(f"toolcall_run_id IN ({', '.join('?' * len(self.toolcall_run_ids))})")
                params += self.toolcall_run_ids
            clauses.append(f"({' OR '.join(owned)})")
        if self.since is not None:
            clauses.append("at >= ?")
            params.append(self.since)
        return (" WHERE " + " AND ".join(clauses) if clauses else ""), params


def _zero() -> dict[AuditState, int]:
    return dict.fromkeys(AuditState, 0)


@dataclass(frozen=True, slots=True)
class LedgerCounts:
    """Requests by state for one model, one run, or the whole scope."""

    by_state: dict[AuditState, int] = field(default_factory=_zero)

    @property
    def total(self) -> int:
        return sum(self.by_state.values())

    def as_json(self) -> dict[str, int]:
        return {state.value: self.by_state[state] for state in AuditState} | {"total": self.total}


@dataclass(frozen=True, slots=True)
class RunLedger:
    """One run's requests. `kind` is `run` (a golden-set run), `toolcall` (a tool-call run) or
    `none` (requests of no run: judge calls, a gateway's check), whose `run_id` is None."""

    run_id: str | None
    kind: str
    models: tuple[str, ...]
    counts: LedgerCounts


@dataclass(frozen=True, slots=True)
class AuditLedger:
    """What `compare-tui audit` shows for a scope."""

    scope: AuditScope
    counts: LedgerCounts
    per_model: dict[str, LedgerCounts]
    """Model (as the request named it) → its requests, by name."""
    per_run: tuple[RunLedger, ...]
    """In the order each run's first request was recorded; requests of no run last."""
    unsettled: tuple[AuditRow, ...]
    """The rows not `done`, oldest first (at most the limit asked for)."""


@dataclass(frozen=True, slots=True)
class PricedRequest:
    """One ledger row with what prices it (`priced_requests`)."""

    at: str
    """When it was sent (a store timestamp)."""
    run_id: str | None
    model: str
    """The model id the request named."""
    prompt_tokens: int | None
    completion_tokens: int | None
    duration_ms: float | None
    cost_basis: dict[str, Any] | None
    """Its run's recorded cost basis; None for a request of no run."""


@dataclass(frozen=True, slots=True)
class AuditOwner:
    """What a reference given to `compare-tui audit` names: a comparison (its runs), a
    golden-set run or a tool-call run."""

    noun: str
    """`comparison`, `run` or `tool-call run`."""
    id: str
    run_ids: tuple[str, ...] = ()
    toolcall_run_ids: tuple[str, ...] = ()


class AuditLedgerAccessors(StoreBase):
    """The audit ledger read back, counted (`compare-tui audit`)."""

    def audit_owner(self, ref: str) -> AuditOwner:
        """The comparison, run or tool-call run whose id is, or uniquely starts with, `ref`
        (an exact id wins). `RunNotFoundError` when none, `AmbiguousIdError` when several."""
        found: list[AuditOwner] = []
        for table, noun in (("comparisons", "comparison"), ("runs", "run"), ("toolcall_runs", "tool-call run")):
            try:
                row = self._resolve(table, ref, noun)
            except RunNotFoundError:
                continue
            if noun == "comparison":
                # Its linked runs, and those prepared for it but not linked yet (a session
                # links them once every model is prepared).
                linked = self._read(
                    "SELECT run_id AS id FROM comparison_runs WHERE comparison_id = ? ORDER BY position", [row["id"]]
                ) + self._read("SELECT id FROM runs WHERE comparison_id = ? ORDER BY created_at", [row["id"]])
                runs = tuple(dict.fromkeys(r["id"] for r in linked))
                found.append(AuditOwner(noun, row["id"], run_ids=runs))
            elif noun == "run":
                found.append(AuditOwner(noun, row["id"], run_ids=(row["id"],)))
            else:
                found.append(AuditOwner(noun, row["id"], toolcall_run_ids=(row["id"],)))
        exact = [owner for owner in found if owner.id == ref]
        if exact:
            return exact[0]
        if len(found) == 1:
            return found[0]
        if found:
            raise AmbiguousIdError(
                f"{ref!r} starts the ids of a {' and a '.join(o.noun for o in found)} "
                f"({', '.join(o.id for o in found)}); type more of it"
            )
        raise RunNotFoundError(
            f"no comparison, run or tool-call run with id {ref!r} in the store at {self._path}: "
            "`compare-tui runs list` shows the runs"
        )

    def audit_ledger(self, scope: AuditScope, *, rows_limit: int = 50) -> AuditLedger:
        """The requests in `scope` counted by state, per model and per run, and the first
        `rows_limit` rows that are not `done`."""
        where, params = scope.where()
        grouped = self._read(
            "SELECT state, model, run_id, toolcall_run_id, COUNT(*) AS n, MIN(id) AS first "
            f"FROM audit{where} GROUP BY state, model, run_id, toolcall_run_id",
            params,
        )
        total = _zero()
        per_model: dict[str, dict[AuditState, int]] = defaultdict(_zero)
        per_run: dict[tuple[str | None, str], dict[AuditState, int]] = defaultdict(_zero)
        run_models: dict[tuple[str | None, str], set[str]] = defaultdict(set)
        first: dict[tuple[str | None, str], int] = {}
        for row in grouped:
            state, n = AuditState(row["state"]), int(row["n"])
            run = (
                (row["run_id"], "run")
                if row["run_id"] is not None
                else (row["toolcall_run_id"], "toolcall")
                if row["toolcall_run_id"] is not None
                else (None, "none")
            )
            total[state] += n
            per_model[row["model"]][state] += n
            per_run[run][state] += n
            run_models[run].add(row["model"])
            first[run] = min(first.get(run, row["first"]), row["first"])
        order = sorted(per_run, key=lambda run: (run[1] == "none", first[run]))
        unsettled = self._read(
            f"SELECT * FROM audit{where}{' AND' if where else ' WHERE'} state IN "
            f"({', '.join('?' * len(UNSETTLED))}) ORDER BY id LIMIT ?",
            [*params, *(state.value for state in UNSETTLED), rows_limit],
        )
        return AuditLedger(
            scope=scope,
            counts=LedgerCounts(total),
            per_model={model: LedgerCounts(per_model[model]) for model in sorted(per_model)},
            per_run=tuple(
                RunLedger(run[0], run[1], tuple(sorted(run_models[run])), LedgerCounts(per_run[run])) for run in order
            ),
            unsettled=tuple(AuditRow.model_validate(row) for row in unsettled),
        )

    def priced_requests(self, since: str, workload_id: str | None = None) -> list[PricedRequest]:
        """Every request recorded at or after `since` (a store timestamp) with what prices it: its
        tokens, its duration and its run's recorded cost basis (None for a request of no run:
        judge calls, gateway checks, canary replays); with `workload_id`, only that workload's
        runs' requests."""
        sql = (
            "SELECT audit.at AS at, audit.run_id AS run_id, audit.model AS model, audit.prompt_tokens AS prompt, "
            "audit.completion_tokens AS completion, audit.duration_ms AS duration_ms, runs.cost_basis AS basis FROM audit "
            "LEFT JOIN runs ON runs.id = audit.run_id WHERE audit.at >= ?"
        )
        params: list[Any] = [since]
        if workload_id is not None:
            sql += " AND runs.goldset_id = ?"
            params.append(workload_id)
        return [
            PricedRequest(
                row["at"],
                row["run_id"],
                row["model"],
                row["prompt"],
                row["completion"],
                row["duration_ms"],
                json.loads(row["basis"]) if row["basis"] else None,
            )
            for row in self._read(sql, params)
        ]

"""Tool-call runs in the run store, in tables of their own.

The tables are created by the store's migrations (`store/schema.py`, v6) like every other
table; this module reads and writes them through the store's connection, lock and write-retry
(`Store.write_transaction`, `Store.query`). A user's own runs (`toolcall_runs`) and runs marked
`--publishable` (`toolcall_published_runs`, official suite only) live in separate tables, so
nothing of a user's runs is ever read out of the published ones by accident. Argument values
and answer text are removed before a result is written unless the run keeps arguments. Each
request a run sends is one row of the store's audit ledger (`record_audit`), like a golden-set
attempt's.
"""

from __future__ import annotations

import json
from typing import Any

from compare_tui.store import AuditRow, RunNotFoundError, Store
from compare_tui.store.errors import AmbiguousIdError
from compare_tui.toolcall.results.model import ScenarioResult, ToolcallRun, ToolcallRunStatus

_TABLES = {
    False: ("toolcall_runs", "toolcall_results"),
    True: ("toolcall_published_runs", "toolcall_published_results"),
}


class ToolcallStore:
    """Tool-call runs over an open `Store` (which the caller owns and closes)."""

    def __init__(self, store: Store) -> None:
        self._store = store

    @property
    def store(self) -> Store:
        """The run store underneath (a tool-call run's lease and request rows live there)."""
        return self._store

    def begin(self, run: ToolcallRun) -> None:
        """Record a run's header before its first request (status as given, results none)."""
        runs, _ = _TABLES[run.publishable]
        header = json.dumps(run.header_dict(), ensure_ascii=False)
        self._store.write_transaction(
            lambda conn: conn.execute(
                f"INSERT INTO {runs} (id, created_at, status, model_name, endpoint, suite_version, suite_digest, header) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    run.id,
                    run.created_at,
                    run.status,
                    run.model_name,
                    run.endpoint,
                    run.suite_version,
                    run.suite_digest,
                    header,
                ),
            )
        )

    def add_result(self, run: ToolcallRun, position: int, result: ScenarioResult) -> None:
        """Write one scenario's result as soon as it is known (values removed unless kept)."""
        _, results = _TABLES[run.publishable]
        kept = result if run.keep_arguments else result.without_values()
        data = json.dumps(kept.to_dict(), ensure_ascii=False, default=str)
        self._store.write_transaction(
            lambda conn: conn.execute(
                f"INSERT OR REPLACE INTO {results} (run_id, position, scenario_id, outcome, result) VALUES (?, ?, ?, ?, ?)",
                (run.id, position, result.scenario_id, result.outcome.value, data),
            )
        )

    def record_audit(self, row: AuditRow) -> None:
        """Append one request of a tool-call run (`row.toolcall_run_id` set) to the audit ledger."""
        self._store.record_audit(row)

    def audit(self, run_id: str) -> list[AuditRow]:
        """The audit rows of a tool-call run, in the order the requests were recorded."""
        return self._store.audit_for_toolcall_run(run_id)

    def finish(self, run: ToolcallRun, status: ToolcallRunStatus) -> None:
        runs, _ = _TABLES[run.publishable]
        header = json.dumps({**run.header_dict(), "status": status}, ensure_ascii=False)
        self._store.write_transaction(
            lambda conn: conn.execute(
                f"UPDATE {runs} SET status = ?, header = ? WHERE id = ?", (status, header, run.id)
            )
        )

    def list_runs(self, *, publishable: bool = False, limit: int = 50) -> list[ToolcallRun]:
        """Run headers (without results), newest first."""
        runs, _ = _TABLES[publishable]
        rows = self._store.query(f"SELECT header FROM {runs} ORDER BY created_at DESC LIMIT ?", [limit])
        return [_run(json.loads(r["header"]), ()) for r in rows]

    def get(self, id_or_prefix: str) -> ToolcallRun:
        """The run whose id is, or starts with, `id_or_prefix` (own or published), with results."""
        found: list[tuple[bool, dict[str, Any]]] = []
        for publishable, (runs, _) in _TABLES.items():
            rows = self._store.query(
                f"SELECT id, header FROM {runs} WHERE id = ?", [id_or_prefix]
            ) or self._store.query(
                f"SELECT id, header FROM {runs} WHERE substr(id, 1, ?) = ? ORDER BY created_at DESC LIMIT 6",
                [len(id_or_prefix), id_or_prefix],
            )
            found += [(publishable, r) for r in rows]
        if not id_or_prefix or not found:
            raise RunNotFoundError(f"no tool-call run with id {id_or_prefix!r} in the store at {self._store.path}")
        if len(found) > 1:
            shown = ", ".join(r["id"] for _, r in found[:5])
            raise AmbiguousIdError(
                f"tool-call run id prefix {id_or_prefix!r} matches several runs ({shown}); type more of it"
            )
        publishable, row = found[0]
        _, results = _TABLES[publishable]
        rows = self._store.query(f"SELECT result FROM {results} WHERE run_id = ? ORDER BY position", [row["id"]])
        return _run(json.loads(row["header"]), tuple(ScenarioResult.from_dict(json.loads(r["result"])) for r in rows))

    def latest(self, n: int = 1) -> list[ToolcallRun]:
        """The newest `n` runs of the user's own table, with results."""
        return [self.get(run.id) for run in self.list_runs(limit=n)]


def _run(header: dict[str, Any], results: tuple[ScenarioResult, ...]) -> ToolcallRun:
    fields = {k: v for k, v in header.items() if k in ToolcallRun.__dataclass_fields__}
    fields["server_notes"] = tuple(fields.get("server_notes", ()))
    if "status" in fields:
        fields["status"] = ToolcallRunStatus(fields["status"])
    return ToolcallRun(results=results, **fields)

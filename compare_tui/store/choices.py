"""The buyer's choices kept in the store: the models a comparison left out and why (the daily
eval budget), and the models last chosen for a workload (restored on the New run screen)."""

from __future__ import annotations

import json
import sqlite3

from compare_tui.store.base import StoreBase
from compare_tui.store.errors import RunNotFoundError
from compare_tui.store.records import utc_now


class ChoiceAccessors(StoreBase):
    """Skipped models of a comparison (read back on `ComparisonRecord.skipped`); a workload's saved selection."""

    def record_skips(self, comparison_id: str, reasons: dict[str, str]) -> None:
        """Record that the comparison left out each model of `reasons`, with the reason."""
        if not reasons:
            return
        at = utc_now()

        def work(conn: sqlite3.Connection) -> None:
            if conn.execute("SELECT 1 FROM comparisons WHERE id = ?", [comparison_id]).fetchone() is None:
                raise RunNotFoundError(f"no comparison with id {comparison_id!r} in {self.path}")
            conn.executemany(
                "INSERT OR REPLACE INTO comparison_skips (comparison_id, model, reason, at) VALUES (?, ?, ?, ?)",
                [(comparison_id, model, reason, at) for model, reason in reasons.items()],
            )

        self._write(work)

    def save_selection(self, workload_id: str, models: list[str] | tuple[str, ...]) -> None:
        """Remember `models` (in this order) as the workload's chosen candidates."""

        def work(conn: sqlite3.Connection) -> None:
            conn.execute(
                "INSERT OR REPLACE INTO workload_selections (workload_id, models, saved_at) VALUES (?, ?, ?)",
                [workload_id, json.dumps(list(models)), utc_now()],
            )

        self._write(work)

    def saved_selection(self, workload_id: str) -> tuple[str, ...] | None:
        """The models last saved for the workload, or None when none was saved."""
        found = self._read("SELECT models FROM workload_selections WHERE workload_id = ?", [workload_id])
        return tuple(json.loads(found[0]["models"])) if found else None

    def forget_selection(self, workload_id: str) -> None:
        """Forget the workload's saved selection (the recommended set applies again)."""

        def work(conn: sqlite3.Connection) -> None:
            conn.execute("DELETE FROM workload_selections WHERE workload_id = ?", [workload_id])

        self._write(work)

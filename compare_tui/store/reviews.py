"""Review accessors: a person's verdicts on tasks. Every verdict is kept; the latest wins."""

from __future__ import annotations

import sqlite3

from compare_tui.store import rows
from compare_tui.store.base import StoreBase
from compare_tui.store.errors import StoreError
from compare_tui.store.records import ReviewRecord

# "Latest" is by time, then by insertion order for verdicts given in the same microsecond.
_LATEST_PER_TASK = """
SELECT * FROM reviews AS r
WHERE r.run_id = ? AND r.id = (
    SELECT id FROM reviews WHERE run_id = r.run_id AND task_id = r.task_id
    ORDER BY at DESC, id DESC LIMIT 1
)
ORDER BY r.task_id
"""


class ReviewAccessors(StoreBase):
    """Human reviews of tasks that need a person."""

    def add_review(self, review: ReviewRecord) -> ReviewRecord:
        """Record a verdict; returns it with its assigned id. Earlier verdicts are kept."""
        data = rows.to_row(review, columns=rows.REVIEW_COLUMNS)

        def work(conn: sqlite3.Connection) -> int:
            try:
                return int(conn.execute(rows.INSERT_REVIEW, data).lastrowid or 0)
            except sqlite3.IntegrityError:
                raise StoreError(f"cannot review run {review.run_id}: no such run in {self.path}") from None

        return review.model_copy(update={"id": self._write(work)})

    def reviews_for_run(self, run_id: str) -> dict[str, ReviewRecord]:
        """The latest verdict per task of a run, keyed by task id (in task id order)."""
        return {row["task_id"]: ReviewRecord.model_validate(row) for row in self._read(_LATEST_PER_TASK, [run_id])}

    def review_history(self, run_id: str, task_id: str | None = None) -> list[ReviewRecord]:
        """Every verdict given on a run (or one of its tasks), oldest first."""
        sql, params = "SELECT * FROM reviews WHERE run_id = ?", [run_id]
        if task_id is not None:
            sql += " AND task_id = ?"
            params.append(task_id)
        found = self._read(sql + " ORDER BY at, id", params)
        return [ReviewRecord.model_validate(row) for row in found]

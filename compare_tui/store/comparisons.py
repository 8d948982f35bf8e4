"""Comparison accessors: named groups of runs reported together."""

from __future__ import annotations

import sqlite3
from typing import Any

from compare_tui.store.base import StoreBase
from compare_tui.store.errors import RunNotFoundError, StoreError
from compare_tui.store.records import ComparisonRecord, SequentialOrder


class ComparisonAccessors(StoreBase):
    """Comparisons: two or more runs (in the user's order) on one golden set version."""

    def create_comparison(self, comparison: ComparisonRecord) -> ComparisonRecord:
        """Store a comparison; `StoreError` for a duplicate id or a run id not in the store."""
        if len(set(comparison.run_ids)) != len(comparison.run_ids):
            raise StoreError(f"comparison {comparison.id} lists a run twice")

        def work(conn: sqlite3.Connection) -> None:
            try:
                conn.execute(
                    "INSERT INTO comparisons (id, name, created_at, baseline, margin_pp, sequential)"
                    " VALUES (?, ?, ?, ?, ?, ?)",
                    [
                        comparison.id,
                        comparison.name,
                        comparison.created_at,
                        comparison.baseline,
                        comparison.margin_pp,
                        None if comparison.sequential is None else comparison.sequential.model_dump_json(),
                    ],
                )
            except sqlite3.IntegrityError:
                raise StoreError(f"a comparison with id {comparison.id} already exists") from None
            self._insert_members(conn, comparison.id, comparison.run_ids)

        self._write(work)
        return comparison

    def set_comparison_runs(self, comparison_id: str, run_ids: list[str]) -> ComparisonRecord:
        """Replace a comparison's runs (in this order), e.g. once its runs have been prepared."""
        if len(set(run_ids)) != len(run_ids):
            raise StoreError(f"comparison {comparison_id} lists a run twice")

        def work(conn: sqlite3.Connection) -> None:
            if conn.execute("SELECT 1 FROM comparisons WHERE id = ?", [comparison_id]).fetchone() is None:
                raise RunNotFoundError(f"no comparison with id {comparison_id!r} in {self.path}")
            conn.execute("DELETE FROM comparison_runs WHERE comparison_id = ?", [comparison_id])
            self._insert_members(conn, comparison_id, run_ids)

        self._write(work)
        return self.get_comparison(comparison_id)

    def set_comparison_baseline(self, comparison_id: str, model: str | None) -> ComparisonRecord:
        """Name (or, with None, clear) the model a comparison's others are judged against."""

        def work(conn: sqlite3.Connection) -> int:
            return conn.execute("UPDATE comparisons SET baseline = ? WHERE id = ?", [model, comparison_id]).rowcount

        if not self._write(work):
            raise RunNotFoundError(f"no comparison with id {comparison_id!r} in {self.path}")
        return self.get_comparison(comparison_id)

    def delete_comparison(self, comparison_id: str) -> None:
        """Delete a comparison (exact id); its runs stay in the store."""

        def work(conn: sqlite3.Connection) -> int:
            return conn.execute("DELETE FROM comparisons WHERE id = ?", [comparison_id]).rowcount

        if not self._write(work):
            raise RunNotFoundError(f"no comparison with id {comparison_id!r} in {self.path}")

    def _insert_members(self, conn: sqlite3.Connection, comparison_id: str, run_ids: list[str]) -> None:
        try:
            conn.executemany(
                "INSERT INTO comparison_runs (comparison_id, run_id, position) VALUES (?, ?, ?)",
                [(comparison_id, run_id, i) for i, run_id in enumerate(run_ids)],
            )
        except sqlite3.IntegrityError:
            raise StoreError(f"comparison {comparison_id} names a run that is not in {self.path}") from None

    def get_comparison(self, comparison_id: str) -> ComparisonRecord:
        """The comparison with this id or unique id prefix (`RunNotFoundError` / `AmbiguousIdError`)."""
        return self._comparison_from(self._resolve("comparisons", comparison_id, "comparison"))

    def list_comparisons(self) -> list[ComparisonRecord]:
        """Every comparison, newest first."""
        found = self._read("SELECT * FROM comparisons ORDER BY created_at DESC, rowid DESC")
        return [self._comparison_from(row) for row in found]

    def _comparison_from(self, row: dict[str, Any]) -> ComparisonRecord:
        members = self._read(
            "SELECT run_id FROM comparison_runs WHERE comparison_id = ? ORDER BY position", [row["id"]]
        )
        return ComparisonRecord(
            id=row["id"],
            name=row["name"],
            created_at=row["created_at"],
            run_ids=[member["run_id"] for member in members],
            baseline=row.get("baseline"),
            margin_pp=row.get("margin_pp"),
            skipped={
                skip["model"]: skip["reason"]
                for skip in self._read(
                    "SELECT model, reason FROM comparison_skips WHERE comparison_id = ? ORDER BY rowid", [row["id"]]
                )
            },
            sequential=SequentialOrder.model_validate_json(row["sequential"]) if row.get("sequential") else None,
        )

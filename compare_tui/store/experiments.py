"""Experiment accessors: named configurations (arms × repeats) kept as JSON, nothing else.

An experiment row holds configuration only. Its runs are found by cell each time it is read
(`compare_tui.experiment`), so deleting an experiment never touches a run, and a run is
never "owned" by one experiment. The shape of `config` is validated by
`compare_tui.experiment.ExperimentConfig`; the store only keeps it (credentials refused).
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from compare_tui.store.base import StoreBase
from compare_tui.store.errors import RunNotFoundError, StoreError
from compare_tui.store.records import SafeDict, Timestamp, utc_now


class ExperimentNotFoundError(RunNotFoundError):
    """No experiment has the name that was given."""


class ExperimentRecord(BaseModel):
    """One saved experiment: its name, when it was made, and its configuration."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1)
    created_at: Timestamp = Field(default_factory=utc_now)
    config: SafeDict = {}
    """The experiment's controls and arms (see `compare_tui.experiment.ExperimentConfig`)."""


class ExperimentAccessors(StoreBase):
    """Experiments: create, read (by exact name), list, replace the config, delete."""

    def create_experiment(self, record: ExperimentRecord) -> ExperimentRecord:
        """Store a new experiment; `StoreError` when one with this name already exists."""

        def work(conn: sqlite3.Connection) -> None:
            try:
                conn.execute(
                    "INSERT INTO experiments (name, created_at, config) VALUES (?, ?, ?)",
                    [record.name, record.created_at, _dumps(record.config)],
                )
            except sqlite3.IntegrityError:
                raise StoreError(
                    f"an experiment named {record.name!r} already exists in {self.path}: pick another "
                    "name, or `compare-tui experiment delete` it first"
                ) from None

        self._write(work)
        return record

    def get_experiment(self, name: str) -> ExperimentRecord:
        """The experiment with exactly this name; `ExperimentNotFoundError` when there is none."""
        found = self._read("SELECT * FROM experiments WHERE name = ?", [name])
        if not found:
            raise ExperimentNotFoundError(
                f"no experiment named {name!r} in the store at {self.path}: `compare-tui experiment list` shows them"
            )
        return _record(found[0])

    def list_experiments(self) -> list[ExperimentRecord]:
        """Every experiment, newest first."""
        return [_record(row) for row in self._read("SELECT * FROM experiments ORDER BY created_at DESC, rowid DESC")]

    def update_experiment(self, name: str, config: dict[str, Any]) -> ExperimentRecord:
        """Replace an experiment's configuration (e.g. a new repeat count) and return it."""
        current = self.get_experiment(name)
        updated = ExperimentRecord(name=current.name, created_at=current.created_at, config=config)

        def work(conn: sqlite3.Connection) -> int:
            return conn.execute(
                "UPDATE experiments SET config = ? WHERE name = ?", [_dumps(updated.config), name]
            ).rowcount

        if not self._write(work):
            raise ExperimentNotFoundError(f"no experiment named {name!r} in the store at {self.path}")
        return updated

    def delete_experiment(self, name: str) -> None:
        """Delete an experiment's configuration. Its runs stay in the store."""

        def work(conn: sqlite3.Connection) -> int:
            return conn.execute("DELETE FROM experiments WHERE name = ?", [name]).rowcount

        if not self._write(work):
            raise ExperimentNotFoundError(f"no experiment named {name!r} in the store at {self.path}")


def _dumps(config: dict[str, Any]) -> str:
    # Sorted keys: the same configuration is always the same text in the file.
    return json.dumps(config, sort_keys=True, ensure_ascii=False)


def _record(row: dict[str, Any]) -> ExperimentRecord:
    return ExperimentRecord(name=row["name"], created_at=row["created_at"], config=json.loads(row["config"] or "{}"))

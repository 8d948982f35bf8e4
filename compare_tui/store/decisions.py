"""Decision accessors: promotions of a model to a workload's baseline, kept forever.

A workload's baseline is the model of its latest decision; going back is another decision,
so `baseline_history` is the whole story, newest first. Each decision keeps what it was made
on (the comparison, the golden set's digest, both models' pins, the figures and verdict at
that moment) so that it still reads right after the comparison or the catalogue changed.
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from compare_tui.store.base import StoreBase
from compare_tui.store.errors import StoreError
from compare_tui.store.records import SafeDict, Timestamp, new_run_id, utc_now

DecisionKind = Literal["promoted", "forced", "initial"]
"""`promoted`: the verdict allowed it; `forced`: `--force` over a refusing verdict (a reason is
required); `initial`: a workload's first baseline, set from a comparison without one."""


class DecisionRecord(BaseModel):
    """One promotion: `model` became `workload_id`'s baseline."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(default_factory=new_run_id, min_length=1)
    workload_id: str = Field(min_length=1)
    model: str = Field(min_length=1)
    previous_model: str | None = None
    """The baseline it replaced (None for a workload's first)."""
    comparison_id: str | None = None
    goldset_digest: str = ""
    kind: DecisionKind = "promoted"
    reason: str = ""
    decided_by: str = ""
    decided_at: Timestamp = Field(default_factory=utc_now)
    canary_percent: float | None = Field(default=None, gt=0, le=100)
    pins: SafeDict = {}
    """Each model's pin at that moment (by model name)."""
    figures: SafeDict = {}
    """The versus-baseline figures and verdict at that moment (the report's JSON shape)."""


_COLUMNS = (
    "id",
    "workload_id",
    "model",
    "previous_model",
    "comparison_id",
    "goldset_digest",
    "kind",
    "reason",
    "decided_by",
    "decided_at",
    "canary_percent",
    "pins",
    "figures",
)


class DecisionAccessors(StoreBase):
    """Decisions: record one, a workload's current baseline and history, who uses a model."""

    def record_decision(self, decision: DecisionRecord) -> DecisionRecord:
        """Store a decision; `StoreError` for a duplicate id or a forced one without a reason."""
        if decision.kind == "forced" and not decision.reason.strip():
            raise StoreError('a forced decision needs a reason: give --reason "…"')
        values = decision.model_dump()
        values["pins"] = json.dumps(values["pins"], sort_keys=True)
        values["figures"] = json.dumps(values["figures"], sort_keys=True)

        def work(conn: sqlite3.Connection) -> None:
            try:
                conn.execute(
                    f"INSERT INTO decisions ({', '.join(_COLUMNS)}) VALUES ({', '.join('?' for _ in _COLUMNS)})",
                    [values[c] for c in _COLUMNS],
                )
            except sqlite3.IntegrityError:
                raise StoreError(f"a decision with id {decision.id} already exists") from None

        self._write(work)
        return decision

    def baseline_history(self, workload_id: str) -> list[DecisionRecord]:
        """Every decision of a workload, newest first (empty when it never had a baseline)."""
        rows = self._read(
            "SELECT * FROM decisions WHERE workload_id = ? ORDER BY decided_at DESC, rowid DESC", [workload_id]
        )
        return [_decision_from(row) for row in rows]

    def current_baseline(self, workload_id: str) -> DecisionRecord | None:
        """The latest decision of a workload: its baseline is that decision's `model`."""
        history = self.baseline_history(workload_id)
        return history[0] if history else None

    def current_baselines(self) -> dict[str, DecisionRecord]:
        """Every workload that has a baseline, with its latest decision, by workload id."""
        rows = self._read("SELECT * FROM decisions ORDER BY decided_at DESC, rowid DESC")
        current: dict[str, DecisionRecord] = {}
        for row in rows:
            current.setdefault(row["workload_id"], _decision_from(row))
        return dict(sorted(current.items()))

    def workloads_with_baseline(self, model: str) -> list[str]:
        """The workloads whose current baseline is `model` (sorted)."""
        return [workload for workload, decision in self.current_baselines().items() if decision.model == model]


def _decision_from(row: dict[str, Any]) -> DecisionRecord:
    values = {c: row[c] for c in _COLUMNS}
    values["pins"] = json.loads(values["pins"] or "{}")
    values["figures"] = json.loads(values["figures"] or "{}")
    return DecisionRecord(**values)

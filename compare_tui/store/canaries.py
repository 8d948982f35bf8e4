"""Canary accessors: a quality-gated canary's state, its paired evidence and its changes.

A canary's pair and the traffic log's offset after it are written in one transaction, so a
watch killed at any moment resumes at the next line with exactly the evidence it had."""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from compare_tui.store.base import StoreBase
from compare_tui.store.errors import StoreError
from compare_tui.store.records import Timestamp, new_run_id, utc_now
from compare_tui.vocabulary import CanaryChange, CanaryJudgeRubric, CanaryState, PairGrader, PairSkip


class CanaryRecord(BaseModel):
    """One canary of a workload: B (`candidate`) against the baseline A behind `alias`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(default_factory=new_run_id)
    workload_id: str
    alias: str
    baseline: str
    candidate: str
    set_path: str
    steps: tuple[float, ...]
    step: int
    """Index into `steps`; −1 in shadow."""
    weight: float
    """B's weight in % as the canary last wrote it (0 in shadow and after a rollback)."""
    routes_digest: str
    """sha256 of the alias's routes as the canary last wrote them: the compare-and-set."""
    state: CanaryState
    margin_pp: float
    min_pairs: int
    auto_advance: bool = False
    max_usd_per_day: float | None = None
    gateway_config: str
    traffic_log: str
    log_offset: int = 0
    pairs_at_step: int = 0
    """Paired outcomes when the current step began: a step advances only on new ones."""
    judge: str | None = None
    """The catalogue model that judges pairs no golden-set check grades (None: they are counted `no check`)."""
    judge_structured: bool = False
    """Ask the judge's server to constrain its replies to a JSON verdict (`response_format`)."""
    judge_rubric: CanaryJudgeRubric = CanaryJudgeRubric.PAIRWISE
    started_at: Timestamp = Field(default_factory=utc_now)
    updated_at: Timestamp = Field(default_factory=utc_now)

    @property
    def active(self) -> bool:
        return self.state in (CanaryState.SHADOW, CanaryState.STEPPING)


class CanaryPair(BaseModel):
    """One logged request of B: its paired outcome, or why it has none."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    canary_id: str
    call_id: str
    seq: int
    task_id: str | None = None
    candidate_outcome: str | None = None
    baseline_outcome: str | None = None
    paired: int | None = None
    skipped: PairSkip | None = None
    replay_audit_id: int | None = None
    replay_usd: float = 0.0
    at: Timestamp = Field(default_factory=utc_now)
    grader: PairGrader | None = None
    """What decided `paired`: the golden set's check or the judge (None: nothing graded it)."""
    judge: str | None = None
    judge_result: str | None = None
    """The judge's pair result over both orders (`judge.pair.figures.PairResult`'s value); for a
    similarity grade, `tie` (as close as A's answer) or `baseline` (departed from it)."""
    judge_audit_ids: tuple[int, ...] = ()
    """The audit rows of the judge's requests (both orders, retries included)."""
    judge_usd: float = 0.0
    judge_detail: str = ""
    """Each order's verdict as the judge gave it, or why it gave none (`ab: A; ba: A`)."""


class CanaryChangeRecord(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: int | None = None
    canary_id: str
    workload_id: str
    at: Timestamp = Field(default_factory=utc_now)
    change: CanaryChange
    from_weight: float | None = None
    to_weight: float | None = None
    verdict: str | None = None
    evidence: dict[str, Any] = {}
    decided_by: str = ""
    reason: str = ""


_CANARY_COLUMNS = tuple(CanaryRecord.model_fields)
_PAIR_COLUMNS = tuple(CanaryPair.model_fields)
_CHANGE_COLUMNS = tuple(c for c in CanaryChangeRecord.model_fields if c != "id")


def _canary_values(canary: CanaryRecord) -> list[Any]:
    values = canary.model_dump(mode="json")
    values["steps"] = json.dumps(list(canary.steps))
    values["auto_advance"] = int(canary.auto_advance)
    values["judge_structured"] = int(canary.judge_structured)
    return [values[c] for c in _CANARY_COLUMNS]


def _canary_from(row: dict[str, Any]) -> CanaryRecord:
    values = dict(row)
    values["steps"] = tuple(json.loads(values["steps"]))
    values["auto_advance"] = bool(values["auto_advance"])
    values["judge_structured"] = bool(values["judge_structured"])
    return CanaryRecord(**values)


class CanaryAccessors(StoreBase):
    """Canaries: start one, read a workload's latest, add pairs, record changes."""

    def start_canary(self, canary: CanaryRecord, change: CanaryChangeRecord) -> CanaryRecord:
        """Store a new canary with its `started` change; `StoreError` while the workload has an
        active one."""

        def work(conn: sqlite3.Connection) -> None:
            active = conn.execute(
                "SELECT id FROM canaries WHERE workload_id = ? AND state IN (?, ?)",
                (canary.workload_id, CanaryState.SHADOW.value, CanaryState.STEPPING.value),
            ).fetchone()
            if active:
                raise StoreError(
                    f"workload {canary.workload_id} already has an active canary ({active[0]}): "
                    "see `compare-tui canary status`, or end it with `compare-tui canary stop`"
                )
            marks = ", ".join("?" for _ in _CANARY_COLUMNS)
            conn.execute(
                f"INSERT INTO canaries ({', '.join(_CANARY_COLUMNS)}) VALUES ({marks})", _canary_values(canary)
            )
            _insert_change(conn, change)

        self._write(work)
        return canary

    def latest_canary(self, workload_id: str) -> CanaryRecord | None:
        rows = self._read(
            "SELECT * FROM canaries WHERE workload_id = ? ORDER BY started_at DESC, rowid DESC LIMIT 1", [workload_id]
        )
        return _canary_from(rows[0]) if rows else None

    def latest_canaries(self) -> list[CanaryRecord]:
        """Each workload's latest canary, by workload id."""
        rows = self._read("SELECT * FROM canaries ORDER BY started_at DESC, rowid DESC")
        latest: dict[str, CanaryRecord] = {}
        for row in rows:
            latest.setdefault(row["workload_id"], _canary_from(row))
        return [latest[w] for w in sorted(latest)]

    def update_canary(self, canary: CanaryRecord, change: CanaryChangeRecord | None = None) -> CanaryRecord:
        """Write the canary's new state (and the change that led to it) in one transaction."""
        updated = canary.model_copy(update={"updated_at": utc_now()})

        def work(conn: sqlite3.Connection) -> None:
            sets = ", ".join(f"{c} = ?" for c in _CANARY_COLUMNS if c != "id")
            values = dict(zip(_CANARY_COLUMNS, _canary_values(updated), strict=True))
            conn.execute(
                f"UPDATE canaries SET {sets} WHERE id = ?",
                [values[c] for c in _CANARY_COLUMNS if c != "id"] + [canary.id],
            )
            if change is not None:
                _insert_change(conn, change)

        self._write(work)
        return updated

    def add_canary_pair(self, pair: CanaryPair, log_offset: int) -> None:
        """Store one pair and the traffic log's offset after its line, together."""
        values = pair.model_dump(mode="json")
        values["judge_audit_ids"] = json.dumps(values["judge_audit_ids"])

        def work(conn: sqlite3.Connection) -> None:
            marks = ", ".join("?" for _ in _PAIR_COLUMNS)
            conn.execute(
                f"INSERT OR REPLACE INTO canary_pairs ({', '.join(_PAIR_COLUMNS)}) VALUES ({marks})",
                [values[c] for c in _PAIR_COLUMNS],
            )
            conn.execute(
                "UPDATE canaries SET log_offset = ?, updated_at = ? WHERE id = ?",
                (log_offset, utc_now(), pair.canary_id),
            )

        self._write(work)

    def set_canary_offset(self, canary_id: str, log_offset: int) -> None:
        """Move past lines that were not B's (nothing to pair)."""
        self._write(
            lambda conn: conn.execute("UPDATE canaries SET log_offset = ? WHERE id = ?", (log_offset, canary_id))
        )

    def canary_pairs(self, canary_id: str) -> list[CanaryPair]:
        """Every pair of the canary, in the order they were logged."""
        rows = self._read("SELECT * FROM canary_pairs WHERE canary_id = ? ORDER BY seq", [canary_id])
        return [CanaryPair(**{**row, "judge_audit_ids": tuple(json.loads(row["judge_audit_ids"]))}) for row in rows]

    def canary_changes(self, workload_id: str) -> list[CanaryChangeRecord]:
        """Every canary change of a workload, newest first."""
        rows = self._read("SELECT * FROM canary_changes WHERE workload_id = ? ORDER BY at DESC, id DESC", [workload_id])
        return [CanaryChangeRecord(**{**row, "evidence": json.loads(row["evidence"] or "{}")}) for row in rows]

    def replay_usd_since(self, canary_id: str, since: str) -> float:
        """What the canary's replays and judge calls cost since `since` (USD)."""
        rows = self._read(
            "SELECT COALESCE(SUM(replay_usd + judge_usd), 0) AS usd FROM canary_pairs WHERE canary_id = ? AND at >= ?",
            [canary_id, since],
        )
        return float(rows[0]["usd"])


def _insert_change(conn: sqlite3.Connection, change: CanaryChangeRecord) -> None:
    values = change.model_dump(mode="json")
    values["evidence"] = json.dumps(values["evidence"], sort_keys=True)
    marks = ", ".join("?" for _ in _CHANGE_COLUMNS)
    conn.execute(
        f"INSERT INTO canary_changes ({', '.join(_CHANGE_COLUMNS)}) VALUES ({marks})",
        [values[c] for c in _CHANGE_COLUMNS],
    )

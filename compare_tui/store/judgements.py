"""Judge records and their accessors: judgings, per-task judgements and people's pair labels.

A *judging* is one judge model with one rubric over one run (`grade`: each answer pass/fail)
or over a baseline and a candidate run (`pair`: which answer is better). Its id, and the id of
each judgement in it, are deterministic over (baseline run, candidate run, task, ordering,
judge model, rubric digest), so an interrupted judging resumes without judging anything twice.
A failed judge call is a judgement row too (no verdict, an error), never a dropped row.

Human labels on single answers are the existing `reviews` (pass / fail / skip); labels on a
pair of answers (candidate better / baseline better / tie / skip) live in `pair_labels`.
"""

from __future__ import annotations

import hashlib
import sqlite3
from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from compare_tui.store import rows
from compare_tui.store.base import StoreBase
from compare_tui.store.errors import RunNotFoundError, StoreError
from compare_tui.store.records import SafeDict, Timestamp, utc_now
from compare_tui.vocabulary import JudgeErrorClass

JudgingKind = Literal["pair", "grade", "scale"]
"""`pair`: which of two answers is better; `grade`: each answer pass/fail; `scale`: each answer
graded alone on the fixed 1–5 scale (`compare-tui grade`)."""
Ordering = Literal["ab", "ba", "single"]
"""`ab`: the baseline's answer shown first (as A); `ba`: the candidate's first; `single`: a grade."""
PairLabel = Literal["candidate", "baseline", "tie", "skip"]


class RubricMode(StrEnum):
    """How a judge applies its rubric (part of the rubric digest). pair/grade: `direct` (quality
    against the rubric) or `reference` (closeness to the expected outcome); scale: `quality` or
    `similarity` (closeness to the reference run's answer, else to the expected outcome)."""

    DIRECT = "direct"
    REFERENCE = "reference"
    QUALITY = "quality"
    SIMILARITY = "similarity"


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def judging_id(kind: str, run_id: str, other_run_id: str | None, judge_model: str, rubric_digest: str) -> str:
    """The deterministic id of a judging: 16 hex digits of sha256 over its identity."""
    identity = "\n".join([kind, run_id, other_run_id or "", judge_model, rubric_digest])
    return hashlib.sha256(identity.encode("utf-8")).hexdigest()[:16]


def judgement_id(judging: str, task_id: str, ordering: str, attempt: int | None = None) -> str:
    """The deterministic id of one judge call: `judging:task:ordering`, and `:aN` when it graded
    attempt N (a `scale` grade: run, judge and rubric digest are in the judging id)."""
    base = f"{judging}:{task_id}:{ordering}"
    return base if attempt is None else f"{base}:a{attempt}"


class JudgingRecord(_Record):
    """One judge model + rubric over one run (grade) or a baseline/candidate pair of runs."""

    id: str = ""
    """Always `judging_id(...)` of the fields below: filled in when omitted, checked when given."""
    kind: JudgingKind
    run_id: str = Field(min_length=1)
    """pair: the baseline run; grade: the run whose answers are graded."""
    other_run_id: str | None = None
    """pair: the candidate run; grade: None; scale: the reference run of a similarity rubric (else None)."""
    judge_model: str = Field(min_length=1)
    rubric_digest: str = Field(min_length=1)
    mode: RubricMode
    """pair/grade: `direct` (quality against the rubric) or `reference` (closeness to the expected
    outcome); scale: `quality` or `similarity` (closeness to the reference run's answer, or to the
    expected outcome when there is no reference run)."""
    reply_form: Literal["text", "structured"] = "text"
    """`structured`: the server was asked to constrain replies to a JSON verdict (response_format)."""
    rubric: str = ""
    judge_entry: SafeDict = {}
    """The judge's catalogue pins as recorded (never a key)."""
    provenance: str | None = None
    current: str | None = None
    """grade: what `evaluator-compare` last compared this judge with (`scorer` or a judging id)."""
    created_at: Timestamp = Field(default_factory=utc_now)

    @model_validator(mode="before")
    @classmethod
    def _deterministic_id(cls, data: Any) -> Any:
        if isinstance(data, dict) and {"kind", "run_id", "judge_model", "rubric_digest"} <= data.keys():
            expected = judging_id(
                data["kind"], data["run_id"], data.get("other_run_id"), data["judge_model"], data["rubric_digest"]
            )
            if data.get("id") and data["id"] != expected:
                raise ValueError(f"judging id must be {expected!r}, got {data['id']!r}")
            data = {**data, "id": expected}
        return data


class JudgementRecord(_Record):
    """One judge call on one task (one ordering of a pair): a verdict, or a recorded failure."""

    id: str = ""
    """Always `judgement_id(judging_id, task_id, ordering)`."""
    judging_id: str = Field(min_length=1)
    task_id: str = Field(min_length=1)
    ordering: Ordering
    verdict: str | None = None
    """As the judge gave it: `A`/`B`/`TIE` (pair), `pass`/`fail` (grade), `1`…`5` (scale); None = failed call."""
    preferred: str | None = None
    """pair: `baseline`/`candidate`/`tie` (the verdict read through the ordering); grade: the verdict."""
    rationale: str = ""
    raw_text: str = ""
    """The judge's whole reply (reasoning traces removed), for audit."""
    error_class: JudgeErrorClass | None = None
    """`unparseable` when the reply had no verdict line, else the transport's error class."""
    error: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    e2e_ms: float | None = None
    retries: int = Field(default=0, ge=0)
    judged_at: Timestamp = Field(default_factory=utc_now)
    grade: int | None = Field(default=None, ge=1, le=5)
    """scale: the grade on the fixed 1–5 scale (None = failed call); other kinds: None."""
    attempt: int | None = None
    """scale: which attempt of the task was graded (its judged answer); other kinds: None."""

    @model_validator(mode="before")
    @classmethod
    def _deterministic_id(cls, data: Any) -> Any:
        if isinstance(data, dict) and {"judging_id", "task_id", "ordering"} <= data.keys():
            expected = judgement_id(data["judging_id"], data["task_id"], data["ordering"], data.get("attempt"))
            if data.get("id") and data["id"] != expected:
                raise ValueError(f"judgement id must be {expected!r}, got {data['id']!r}")
            data = {**data, "id": expected}
        return data

    @property
    def failed(self) -> bool:
        """True when the call produced no verdict (transport error or unparseable reply)."""
        return self.verdict is None


class PairLabelRecord(_Record):
    """A person's label on a pair of answers (baseline run × candidate run × task). Latest wins."""

    id: int | None = None
    run_id: str
    """The baseline run."""
    other_run_id: str
    """The candidate run."""
    task_id: str
    label: PairLabel
    note: str = ""
    reviewer: str = ""
    at: Timestamp = Field(default_factory=utc_now)


_JUDGING_JSON = frozenset({"judge_entry"})
_JUDGING_COLUMNS = tuple(JudgingRecord.model_fields)
_JUDGEMENT_COLUMNS = tuple(JudgementRecord.model_fields)
_LABEL_COLUMNS = tuple(name for name in PairLabelRecord.model_fields if name != "id")
# A judging's identity and birth date never change; re-preparing it refreshes the rest.
_UPSERT_JUDGING = (
    rows.insert_sql("judgings", _JUDGING_COLUMNS)
    + " ON CONFLICT(id) DO UPDATE SET "
    + ", ".join(f"{c} = excluded.{c}" for c in ("rubric", "judge_entry", "provenance"))
)
_UPSERT_JUDGEMENT = rows.insert_sql("judgements", _JUDGEMENT_COLUMNS, "INSERT OR REPLACE")
_INSERT_LABEL = rows.insert_sql("pair_labels", _LABEL_COLUMNS)
_LATEST_LABELS = """
SELECT * FROM pair_labels AS l
WHERE l.run_id = ? AND l.other_run_id = ? AND l.id = (
    SELECT id FROM pair_labels WHERE run_id = l.run_id AND other_run_id = l.other_run_id
    AND task_id = l.task_id ORDER BY at DESC, id DESC LIMIT 1
)
ORDER BY l.task_id
"""


class JudgementAccessors(StoreBase):
    """Judgings, judgements and pair labels."""

    def save_judging(self, judging: JudgingRecord) -> JudgingRecord:
        """Create a judging, or refresh its rubric text, judge pins and provenance; returns it as stored."""
        row = rows.to_row(judging, _JUDGING_JSON, _JUDGING_COLUMNS)

        def work(conn: sqlite3.Connection) -> None:
            try:
                conn.execute(_UPSERT_JUDGING, row)
            except sqlite3.IntegrityError:
                raise StoreError(
                    f"cannot record a judging of run {judging.run_id}: no such run in {self.path}"
                ) from None

        self._write(work)
        return self.get_judging(judging.id)

    def get_judging(self, ref: str) -> JudgingRecord:
        """The judging with this id or unique id prefix, or `latest`; `RunNotFoundError` if none."""
        if ref == "latest":
            found = self._read("SELECT * FROM judgings ORDER BY created_at DESC, rowid DESC LIMIT 1")
            if not found:
                raise RunNotFoundError(f"no judging in the store at {self.path}: run `compare-tui judge` first")
            return rows.from_row(JudgingRecord, found[0], _JUDGING_JSON)
        return rows.from_row(JudgingRecord, self._resolve("judgings", ref, "judging"), _JUDGING_JSON)

    def list_judgings(self, *, kind: str | None = None, run_id: str | None = None) -> list[JudgingRecord]:
        """Judgings, newest first; optionally one kind, or those touching one run."""
        sql, params = "SELECT * FROM judgings WHERE 1 = 1", []
        if kind is not None:
            sql += " AND kind = ?"
            params.append(kind)
        if run_id is not None:
            sql += " AND (run_id = ? OR other_run_id = ?)"
            params += [run_id, run_id]
        found = self._read(sql + " ORDER BY created_at DESC, rowid DESC", params)
        return [rows.from_row(JudgingRecord, row, _JUDGING_JSON) for row in found]

    def set_judging_current(self, judging: str, current: str) -> None:
        """Remember what a grade judging was last compared with (`scorer` or a judging id)."""
        self._write(lambda conn: conn.execute("UPDATE judgings SET current = ? WHERE id = ?", [current, judging]))

    def record_judgement(self, judgement: JudgementRecord) -> None:
        """Write one judge call in its own transaction; idempotent by its deterministic id."""
        row = rows.to_row(judgement, columns=_JUDGEMENT_COLUMNS)

        def work(conn: sqlite3.Connection) -> None:
            try:
                conn.execute(_UPSERT_JUDGEMENT, row)
            except sqlite3.IntegrityError:
                raise StoreError(
                    f"cannot record a judgement: no judging {judgement.judging_id} in {self.path}"
                ) from None

        self._write(work)

    def judgements_for(self, judging: str) -> list[JudgementRecord]:
        """Every judgement of a judging, by task id, then ordering (ab before ba)."""
        found = self._read("SELECT * FROM judgements WHERE judging_id = ? ORDER BY task_id, ordering", [judging])
        return [rows.from_row(JudgementRecord, row) for row in found]

    def decided_judgement_ids(self, judging: str) -> set[str]:
        """Ids of judgements that have a verdict: the calls a resumed judging skips."""
        found = self._read("SELECT id FROM judgements WHERE judging_id = ? AND verdict IS NOT NULL", [judging])
        return {row["id"] for row in found}

    def add_pair_label(self, label: PairLabelRecord) -> PairLabelRecord:
        """Record a person's label on a pair; returns it with its id. Earlier labels are kept."""
        data = rows.to_row(label, columns=_LABEL_COLUMNS)

        def work(conn: sqlite3.Connection) -> int:
            try:
                return int(conn.execute(_INSERT_LABEL, data).lastrowid or 0)
            except sqlite3.IntegrityError:
                raise StoreError(f"cannot label runs {label.run_id}/{label.other_run_id}: not in {self.path}") from None

        return label.model_copy(update={"id": self._write(work)})

    def pair_labels(self, run_id: str, other_run_id: str) -> dict[str, PairLabelRecord]:
        """The latest label per task of a baseline/candidate pair of runs, keyed by task id."""
        found = self._read(_LATEST_LABELS, [run_id, other_run_id])
        return {row["task_id"]: PairLabelRecord.model_validate(row) for row in found}

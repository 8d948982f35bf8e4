"""Bundle accessors: every `publish` of a read-only HTML bundle, kept as a record of what was
shared (schema v8). The bundle's files live wherever the user wrote them; the store keeps
what was published, where, when and the page's sha256, so a copy can be checked later."""

from __future__ import annotations

import sqlite3
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from compare_tui.store.base import StoreBase
from compare_tui.store.records import Timestamp, new_run_id, utc_now

BundleKind = Literal["comparison", "run", "experiment"]

_COLUMNS = ("id", "kind", "ref", "title", "path", "sha256", "report_sha256", "answers", "size_bytes", "published_at")


class BundleRecord(BaseModel):
    """One published bundle: `index.html` (sha256 `sha256`) and `report.json` in `path`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(default_factory=new_run_id, min_length=1)
    kind: BundleKind
    ref: str = Field(min_length=1)
    """The comparison or run id, or the experiment's name."""
    title: str = ""
    path: str = Field(min_length=1)
    """The bundle's folder, absolute."""
    sha256: str = Field(pattern=r"^sha256:[0-9a-f]{64}$")
    """Of `index.html`."""
    report_sha256: str = Field(pattern=r"^sha256:[0-9a-f]{64}$")
    """Of `report.json`."""
    answers: bool
    """False when published with `--no-answers`."""
    size_bytes: int = Field(ge=0)
    """`index.html`'s size."""
    published_at: Timestamp = Field(default_factory=utc_now)


class BundleAccessors(StoreBase):
    """Bundles: record one, list them (newest first)."""

    def record_bundle(self, bundle: BundleRecord) -> BundleRecord:
        values = bundle.model_dump()
        values["answers"] = int(values["answers"])

        def work(conn: sqlite3.Connection) -> None:
            conn.execute(
                f"INSERT INTO bundles ({', '.join(_COLUMNS)}) VALUES ({', '.join('?' for _ in _COLUMNS)})",
                [values[c] for c in _COLUMNS],
            )

        self._write(work)
        return bundle

    def list_bundles(self, ref: str | None = None) -> list[BundleRecord]:
        """Every published bundle (of `ref` only, when given), newest first."""
        where, params = ("WHERE ref = ?", [ref]) if ref is not None else ("", [])
        rows = self._read(f"SELECT * FROM bundles {where} ORDER BY published_at DESC, rowid DESC", params)
        return [BundleRecord(**{**row, "answers": bool(row["answers"])}) for row in rows]

"""Writing a bundle: `DIR/index.html` + `DIR/report.json`, recorded in the store.

Re-publishing the same stored rows gives the same bytes: the page holds no clock time (only
stored timestamps), and every figure comes from the report (or the experiment's figures)
computed once; report.json is exactly `report --format json` (or `experiment show --json`).
"""

from __future__ import annotations

import gc
import hashlib
import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from compare_tui.errors import CompareTuiError
from compare_tui.publish.comparison_page import comparison_page
from compare_tui.publish.details import Masker, task_details
from compare_tui.publish.experiment_page import experiment_page
from compare_tui.publish.indented_json import indented_json
from compare_tui.store import BundleKind, BundleRecord, Store


class PublishError(CompareTuiError):
    """A bundle could not be written (the message says where and what to do)."""


@dataclass(frozen=True, slots=True)
class Published:
    """What was written and recorded."""

    record: BundleRecord
    index: Path
    report: Path


@contextmanager
def _no_collector_pauses() -> Iterator[None]:
    """Keep the cyclic garbage collector out of one publish. At 2 × 10,000 tasks a publish makes
    millions of short-lived objects (the golden set's task models, rows, page parts) and the
    collector's full passes over them took 0.3–0.5 s of a 2 s budget while freeing almost
    nothing (bench/RESULTS.md). Reference counting still frees everything as usual; the
    collector is switched back on (if it was on) when the publish ends, however it ends."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _sha(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def _write(out: Path, page: str, report_json: str) -> tuple[Path, Path, bytes, bytes]:
    page_bytes, json_bytes = page.encode("utf-8"), report_json.encode("utf-8")
    if out.exists() and not out.is_dir():
        raise PublishError(f"--out {out} is a file, not a folder: give a folder for index.html and report.json")
    try:
        out.mkdir(parents=True, exist_ok=True)
        index, report = out / "index.html", out / "report.json"
        for path, data in ((index, page_bytes), (report, json_bytes)):
            # Written beside and renamed, so a reader never sees half a page.
            partial = path.with_name(f".{path.name}.partial")
            partial.write_bytes(data)
            os.replace(partial, path)
    except OSError as exc:
        raise PublishError(
            f"cannot write the bundle to {out}: {exc.strerror or exc}; give another folder with --out"
        ) from None
    return index, report, page_bytes, json_bytes


def publish_report(
    store: Store, ref: str, out: Path, *, answers: bool = True, environ: dict[str, str] | None = None
) -> Published:
    """Publish the comparison or run `ref` (or `latest`). Raises `ReportNotFoundError`,
    `StoreError` or `PublishError`."""
    # The work's objects are freed (on return) before the collector is back on: were they still
    # alive then, its first pass would walk every one of them (~0.1 s at 2 × 10,000 tasks).
    with _no_collector_pauses():
        return _publish_report(store, ref, out, answers, environ)


def _publish_report(store: Store, ref: str, out: Path, answers: bool, environ: dict[str, str] | None) -> Published:
    from compare_tui.assembly import assemble_report
    from compare_tui.publish.insights_section import masked_document

    # The grades are read from the store: publishing asks no judge.
    view = assemble_report(store, ref, insights=True)
    report, grades = view.report, list(view.grades)
    runs = [r.run for r in view.inputs.runs]
    mask = Masker(runs, environ)
    details = task_details(store, runs, report.task_ids, mask, view.goldsets) if answers else None
    # As `report --format json` writes it: `grades` only when some are stored; `insights` always, masked.
    document = view.document(shown=lambda found: masked_document(found, mask))
    page = comparison_page(report, document, runs, details, mask, grades, view.insights)
    # Exactly `report --format json`'s document, from the one the page used.
    index, report_path, page_bytes, json_bytes = _write(out, page, indented_json(document) + "\n")
    kind: BundleKind = "comparison" if report.comparison_id else "run"
    record = store.record_bundle(
        BundleRecord(
            kind=kind,
            ref=report.comparison_id or report.run_ids[0],
            title=report.title,
            path=str(out.resolve()),
            sha256=_sha(page_bytes),
            report_sha256=_sha(json_bytes),
            answers=answers,
            size_bytes=len(page_bytes),
        )
    )
    return Published(record, index, report_path)


def publish_experiment(store: Store, name: str, out: Path) -> Published:
    """Publish the experiment `name`. Raises `StoreError`, `ExperimentConfigError` or `PublishError`."""
    with _no_collector_pauses():
        return _publish_experiment(store, name, out)


def _publish_experiment(store: Store, name: str, out: Path) -> Published:
    from compare_tui.experiment import (
        experiment_document,
        experiment_figures,
        load_experiment,
    )

    figures = experiment_figures(load_experiment(store, name))
    document = experiment_document(figures)
    page = experiment_page(figures, document)
    index, report_path, page_bytes, json_bytes = _write(out, page, json.dumps(document, indent=2) + "\n")
    record = store.record_bundle(
        BundleRecord(
            kind="experiment",
            ref=name,
            title=f"Experiment {name}",
            path=str(out.resolve()),
            sha256=_sha(page_bytes),
            report_sha256=_sha(json_bytes),
            answers=False,
            size_bytes=len(page_bytes),
        )
    )
    return Published(record, index, report_path)

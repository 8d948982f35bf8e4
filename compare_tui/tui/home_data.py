"""What the Home screen lists: golden sets, catalogue models and retained runs, as plain rows.

`read_home` does the IO (call it from a worker thread); `filter_runs` and `sort_runs` are pure.
Nothing here imports Textual, so the rows can be tested without an app.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from compare_tui.assembly import report_rows
from compare_tui.catalogue import HOST_ATTESTED, ModelEntry, check_entry
from compare_tui.catalogue.readiness import cost_summary
from compare_tui.goldset import GoldenSetError, discover_golden_sets
from compare_tui.report import ReportNotFoundError
from compare_tui.report import formatting as fmt
from compare_tui.store import DecisionRecord, RunRecord, RunStatus, RunSummary, Store, StoreError
from compare_tui.store.holders import live_lease
from compare_tui.tui.workspace import Workspace
from compare_tui.vocabulary import ModelKind

RUN_SORTS = ("newest", "pass rate", "model", "set", "status")
"""The orders the runs list cycles through (`s`)."""


@dataclass(frozen=True, slots=True)
class SetRow:
    folder: str
    path: Path
    name: str
    version: str
    tasks: int | None
    scorers: str
    """`exact×8, human×2`."""
    digest: str
    problems: tuple[str, ...]
    """Validation problems, each one line with the file named relative to the sets folder."""
    baseline: str | None = None
    """The workload's promoted baseline in words (`model-a (promoted 2026-12-04 by ana)`), if any."""


@dataclass(frozen=True, slots=True)
class ModelRow:
    name: str
    kind: str
    endpoint: str
    provenance: str
    """What provenance a run will get, or `refused` when the entry cannot be run."""
    refusals: tuple[str, ...]
    cost_basis: str
    has_key: bool = False
    """The entry names a `key_env`: a run asks the endpoint again with the key."""


@dataclass(frozen=True, slots=True)
class RunRow:
    run: RunRecord
    summary: RunSummary
    """The store's per-task tally (fast); the pass rate itself comes from the run's report."""
    running: str | None = None
    """"running since T, pid P on HOST" while a live process executes the run (its lease)."""

    def matches(self, text: str) -> bool:
        run = self.run
        haystack = f"{run.id} {run.goldset_id} {run.goldset_name} {run.model_name} {run.status}".lower()
        return all(word in haystack for word in text.lower().split())


@dataclass(frozen=True, slots=True)
class HomeData:
    sets: tuple[SetRow, ...]
    models: tuple[ModelRow, ...]
    catalogue_problem: str | None
    runs: tuple[RunRow, ...]


def read_home(workspace: Workspace) -> HomeData:
    """Everything the Home screen shows. Blocking (reads files and the store)."""
    workspace.forget_sets()
    baselines = workspace.store.current_baselines()
    sets = tuple(_set_row(workspace, path, baselines) for path in discover_golden_sets(workspace.sets_dir))
    read = workspace.read_catalogue()
    models = tuple(model_row(e) for e in read.catalogue.models) if read.catalogue else ()
    store = workspace.store
    runs = tuple(RunRow(run, store.pass_rate_summary(run.id), _running(store, run)) for run in store.list_runs())
    return HomeData(sets, models, read.problem, runs)


def _running(store: Store, run: RunRecord) -> str | None:
    if run.status == RunStatus.COMPLETED:
        return None
    lease = live_lease(store, run.id)
    return lease.running_note() if lease is not None else None


def _set_row(workspace: Workspace, path: Path, baselines: dict[str, DecisionRecord]) -> SetRow:
    try:
        goldset = workspace.golden_set(path)
    except GoldenSetError as exc:
        problems = tuple(_relative(str(p), workspace.sets_dir) for p in exc.problems)
        return SetRow(path.name, path, path.name, fmt.DASH, None, fmt.DASH, fmt.DASH, problems)
    except OSError as exc:
        return SetRow(
            path.name,
            path,
            path.name,
            fmt.DASH,
            None,
            fmt.DASH,
            fmt.DASH,
            (f"{path.name}: cannot be read ({exc.strerror or exc})",),
        )
    kinds = Counter(goldset.scorer_for(task).kind for task in goldset.tasks)
    scorers = ", ".join(f"{kind}×{n}" for kind, n in sorted(kinds.items()))
    m = goldset.manifest
    current = baselines.get(m.workload_id)
    baseline = (
        (
            f"{current.model} ({current.kind} {current.decided_at[:10]}"
            + (f" by {current.decided_by}" if current.decided_by else "")
            + ")"
        )
        if current
        else None
    )
    return SetRow(
        path.name, path, m.name, m.version, len(goldset.tasks), scorers, short_digest(goldset.digest), (), baseline
    )


def _relative(text: str, folder: Path) -> str:
    # Problems name files by their full path; under the sets folder the rest is noise.
    prefix = str(folder.absolute()).rstrip("/") + "/"
    return text.replace(prefix, "").replace(str(folder).rstrip("/") + "/", "")


def short_digest(digest: str) -> str:
    """`sha256:1a2b3c4d…`: enough to tell sets apart at a glance."""
    return digest[:15] + "…" if len(digest) > 15 else digest


def model_row(entry: ModelEntry) -> ModelRow:
    refusals = tuple(r.message for r in check_entry(entry))
    if refusals:
        provenance = "refused"
    elif entry.kind == ModelKind.HOSTED:
        provenance = HOST_ATTESTED
    else:
        provenance = "pinned: weights hashed at run start"
    return ModelRow(
        entry.name,
        entry.kind,
        entry.endpoint,
        provenance,
        refusals,
        cost_summary(entry),
        has_key=entry.key_env is not None,
    )


@dataclass(frozen=True, slots=True)
class RunRate:
    """A run's pass rate as its report gives it (errors count as not passed; human tasks are
    left out), so the list and the report never disagree."""

    run_id: str
    text: str
    rate: float | None


def report_pass_rate(store: Store, run_id: str) -> RunRate:
    """Builds the run's report rows (blocking, `assembly.report_rows`: the grid without the
    decision or caveats): its cost grows with the run's tasks, so call it off the UI thread."""
    try:
        report = report_rows(store, run_id)
    except (ReportNotFoundError, StoreError) as exc:
        return RunRate(run_id, f"✗ {exc}", None)
    if not report.models:
        return RunRate(run_id, "not shown (refused)", None)
    row = report.models[0].pass_rate
    return RunRate(run_id, fmt.pass_rate(row), row.rate)


def filter_runs(rows: tuple[RunRow, ...], text: str) -> list[RunRow]:
    return [row for row in rows if row.matches(text)] if text.strip() else list(rows)


def sort_runs(rows: list[RunRow], order: str, rates: Mapping[str, RunRate] | None = None) -> list[RunRow]:
    """Rows in one of `RUN_SORTS` (the store already lists newest first; sorts are stable).
    Sorting by pass rate uses the reports' rates known so far; runs without one go last."""
    if order == "pass rate":

        def rate(row: RunRow) -> float:
            known = (rates or {}).get(row.run.id)
            return -1.0 if known is None or known.rate is None else known.rate

        return sorted(rows, key=rate, reverse=True)
    if order == "model":
        return sorted(rows, key=lambda r: r.run.model_name)
    if order == "set":
        return sorted(rows, key=lambda r: (r.run.goldset_id, r.run.goldset_version))
    if order == "status":
        return sorted(rows, key=lambda r: str(r.run.status))
    return list(rows)


def run_date(iso: str) -> str:
    """`2026-01-05 10:00` (UTC) from a stored timestamp."""
    return iso[:16].replace("T", " ") if iso else fmt.DASH

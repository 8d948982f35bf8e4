"""Messages the app's workers post to its screens, named for what already happened.

Workers run in threads; `post_message` is the one thread-safe way back into the UI. Engine
progress is *not* sent one message per attempt: the Live screen reads a `LiveTally` on a
timer, and only the session's milestones arrive here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from textual.message import Message

if TYPE_CHECKING:  # the payloads' types, named without importing their modules at runtime
    from pathlib import Path

    from compare_tui.catalogue.readiness import CatalogueRow, VerifyOutcome
    from compare_tui.diff.ab import RunPairDiff
    from compare_tui.engine.reachability import Health
    from compare_tui.insights import Insights
    from compare_tui.judge import GradeReport
    from compare_tui.judge.calibration.load import LabelPlan
    from compare_tui.report import Report, ReportRows
    from compare_tui.store import ReviewRecord
    from compare_tui.tui.home_data import HomeData, RunRate
    from compare_tui.tui.task_facts import TaskFacts
    from compare_tui.vocabulary import RunStatus


@dataclass
class HomeLoaded(Message):
    """The Home screen's sets, models and runs were read."""

    data: HomeData


@dataclass
class EndpointChecked(Message):
    """One model's endpoint answered (or did not) the health probe."""

    model_name: str
    health: Health


@dataclass
class ModelsRead(Message):
    """The Models screen's catalogue was read, each entry with its readiness."""

    rows: list[CatalogueRow]
    """The catalogue's entries in file order ([] when none)."""
    problem: str | None
    """Why there is no catalogue to show (missing or malformed file), else None."""


@dataclass
class ModelVerified(Message):
    """One model's weights were re-hashed against its pins (or verification was refused)."""

    outcome: VerifyOutcome


@dataclass
class RunRated(Message):
    """A retained run's pass rate, read from its report."""

    rate: RunRate


@dataclass
class RunsPrepared(Message):
    """Every model of a session passed its checks and has a run record; requests start now."""

    comparison_id: str | None
    run_ids: tuple[str, ...]
    interleaved: bool = False
    """A `--stop-when-settled` session: every run at once, each stopped once its verdicts settle."""


@dataclass
class RunEnded(Message):
    """One run of a session stopped: completed, interrupted (resumable) or failed."""

    model_name: str
    run_id: str
    status: RunStatus
    error: str | None


@dataclass
class SessionRefused(Message):
    """The engine refused to start (nothing was sent); `reason` says why and what to do."""

    model_name: str
    reason: str


@dataclass
class ModelsSkipped(Message):
    """Models left out before anything was sent: today's eval budget (the reasons are on the comparison)."""

    warning: str


@dataclass
class LeaseTakenOver(Message):
    """A run's lease was held by a process that is gone; the engine took it over."""

    sentence: str


@dataclass
class SessionEnded(Message):
    """The engine worker is done with every run of the session."""

    statuses: tuple[RunStatus, ...]
    cancelled: bool


@dataclass
class ReportBuilt(Message):
    """A report (and what the screen needs beside it) was built in a worker."""

    report: Report
    seconds: float
    grades: tuple[GradeReport, ...] = ()
    """The stored rubric grades of the report's runs (`compare-tui grade`), one per judge × rubric."""


@dataclass
class RowsBuilt(Message):
    """A report's grid alone (`assembly.report_rows`) was built in a worker: the review queue's."""

    rows: ReportRows


@dataclass
class InsightsBuilt(Message):
    """The insights of the report just built (`compare-tui insights`), read after it."""

    insights: Insights


@dataclass
class LabelPlanRead(Message):
    """The answers proposed for labelling to calibrate the judges of the reviewed runs."""

    plan: LabelPlan


@dataclass
class ReportFailed(Message):
    """A report could not be built; `reason` is for the user."""

    reason: str


@dataclass
class DiffBuilt(Message):
    """An A/B diff was built in a worker."""

    diff: RunPairDiff


@dataclass
class TaskDetailLoaded(Message):
    """The task's input, expected outcome and every run's attempts were read."""

    detail: TaskFacts


@dataclass
class ReviewSaved(Message):
    """A verdict was written to the store."""

    review: ReviewRecord


@dataclass
class BundlePublished(Message):
    """`publish` wrote a bundle from the report screen (its worker)."""

    index: Path
    """The page's `Path`."""
    sha256: str


@dataclass
class PublishFailed(Message):
    """A bundle could not be written; `reason` is for the user."""

    reason: str

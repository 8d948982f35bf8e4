"""Messages the app's workers post to its screens, named for what already happened.

Workers run in threads; `post_message` is the one thread-safe way back into the UI. Engine
progress is *not* sent one message per attempt: the Live screen reads a `LiveTally` on a
timer, and only the session's milestones arrive here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from textual.message import Message


@dataclass
class HomeLoaded(Message):
    """The Home screen's sets, models and runs were read."""

    data: Any
    """A `compare_tui.tui.home_data.HomeData`."""


@dataclass
class EndpointChecked(Message):
    """One model's endpoint answered (or did not) the health probe."""

    model_name: str
    health: str


@dataclass
class RunRated(Message):
    """A retained run's pass rate, read from its report."""

    rate: Any
    """A `compare_tui.tui.home_data.RunRate`."""


@dataclass
class RunsPrepared(Message):
    """Every model of a session passed its checks and has a run record; requests start now."""

    comparison_id: str | None
    run_ids: tuple[str, ...]


@dataclass
class RunEnded(Message):
    """One run of a session stopped: completed, interrupted (resumable) or failed."""

    model_name: str
    run_id: str
    status: str
    error: str | None


@dataclass
class SessionRefused(Message):
    """The engine refused to start (nothing was sent); `reason` says why and what to do."""

    model_name: str
    reason: str


@dataclass
class SessionEnded(Message):
    """The engine worker is done with every run of the session."""

    statuses: tuple[str, ...]
    cancelled: bool


@dataclass
class ReportBuilt(Message):
    """A report (and what the screen needs beside it) was built in a worker."""

    report: Any
    """A `compare_tui.report.Report`."""
    seconds: float


@dataclass
class ReportFailed(Message):
    """A report could not be built; `reason` is for the user."""

    reason: str


@dataclass
class DiffBuilt(Message):
    """An A/B diff was built in a worker."""

    diff: Any
    """A `compare_tui.tui.run_pair.RunPairDiff`."""


@dataclass
class TaskDetailLoaded(Message):
    """The task's input, expected outcome and every run's attempts were read."""

    detail: Any
    """A `compare_tui.tui.task_facts.TaskFacts`."""


@dataclass
class ReviewSaved(Message):
    """A verdict was written to the store."""

    review: Any
    """The stored `compare_tui.store.ReviewRecord` (with its id)."""


@dataclass
class BundlePublished(Message):
    """`publish` wrote a bundle from the report screen (its worker)."""

    index: Any
    """The page's `Path`."""
    sha256: str


@dataclass
class PublishFailed(Message):
    """A bundle could not be written; `reason` is for the user."""

    reason: str

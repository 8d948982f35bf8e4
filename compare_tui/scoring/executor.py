"""Where scorers run: one seam (`ScorerExecutor`) between the engine and the scorers.

The engine hands an executor a batch of `ScoreItem`s (task, attempt, answer, scorer) and gets
each `Scored` back as it finishes. Pure scorers (exact, regex, json, tool_call, human) always
run in-process, at once. `command` scorers are where executors differ:
- `LocalScorers` (the default) runs them on this machine, at most `jobs` at a time (default:
  the cores this process may use, `default_scorer_jobs()`), each in its own thread because a
  command scorer waits on a child process;
- `RayScorers` (`scoring/ray_cluster.py`, the optional `compare-tui[ray]` extra) sends them to
  a Ray cluster.

Whatever the executor, results come back to the run's process and the engine's one writer
stores them; an executor never writes to the store. An item no executor could score (the
cluster lost every node that could take it) comes back with `unavailable` set: nothing was
measured, and the engine leaves its task not done (resumable).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncGenerator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Protocol, TypedDict

from compare_tui.goldset.models import GoldenSet, Task
from compare_tui.scoring.dispatch import score
from compare_tui.scoring.result import Answer, ScoreResult


@dataclass(frozen=True, slots=True)
class ScoreItem:
    """One answer to score: attempt `attempt` of `task`, with the scorer `spec`."""

    task: Task
    attempt: int
    answer: Answer
    spec: Any


@dataclass(frozen=True, slots=True)
class Scored:
    """An item's result, or (`result` None) why no scorer could be run for it."""

    item: ScoreItem
    result: ScoreResult | None
    unavailable: str | None = None
    """Why nothing was measured (no node could run the scorer); None when `result` is set."""


class LocalPlacement(TypedDict):
    """`LocalScorers.describe`: command scorers on this machine, `jobs` at once."""

    kind: str
    jobs: int


class RayNode(TypedDict):
    """A live node of a Ray cluster, as `RayScorers.connect` lists it."""

    node_id: str
    address: str
    cpus: float


class RayPlacement(TypedDict):
    """`ray_cluster.RayScorers.describe`: the cluster, its live nodes and how scorers go there."""

    kind: str
    address: str
    gcs_address: str | None
    nodes: list[RayNode]
    jobs: int | None
    retries: int
    wait_s: float
    payload: str


class ScorerExecutor(Protocol):
    """Scores batches of answers; results come back as they finish, each exactly once."""

    def describe(self) -> LocalPlacement | RayPlacement:
        """Where the command scorers run, in JSON-ready form (stored with each run)."""
        ...

    def score_batch(self, goldset: GoldenSet, items: Sequence[ScoreItem]) -> AsyncGenerator[Scored, None]:
        """Score `items` (of `goldset`); yield each result as it finishes, in any order."""
        ...

    def close(self) -> None:
        """Release what the executor holds (threads, a cluster connection); idempotent."""
        ...


def default_scorer_jobs() -> int:
    """Command scorers at once by default: the cores this process may run on (at least 1)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # not Linux
        return max(1, os.cpu_count() or 1)


def is_command(item: ScoreItem) -> bool:
    return getattr(item.spec, "kind", None) == "command"


class LocalScorers:
    """The default executor: command scorers on this machine, at most `jobs` at once."""

    kind = "local"

    def __init__(self, jobs: int | None = None) -> None:
        if jobs is not None and jobs < 1:
            raise ValueError(f"scorer jobs must be at least 1, not {jobs}")
        self.jobs = jobs or default_scorer_jobs()
        self._pool: ThreadPoolExecutor | None = None

    def describe(self) -> LocalPlacement:
        return {"kind": self.kind, "jobs": self.jobs}

    async def score_batch(self, goldset: GoldenSet, items: Sequence[ScoreItem]) -> AsyncGenerator[Scored, None]:
        commands = [item for item in items if is_command(item)]
        for item in items:
            if not is_command(item):
                yield Scored(item, score(item.task, item.spec, item.answer, set_root=goldset.root))
        if not commands:
            return
        if self._pool is None:
            self._pool = ThreadPoolExecutor(self.jobs, thread_name_prefix="compare-tui-scorer")
        loop = asyncio.get_running_loop()

        async def one(item: ScoreItem) -> Scored:
            # The pool's size is the bound: items beyond `jobs` wait in its queue.
            result = await loop.run_in_executor(
                self._pool, lambda: score(item.task, item.spec, item.answer, set_root=goldset.root)
            )
            return Scored(item, result)

        for finished in asyncio.as_completed([one(item) for item in commands]):
            yield await finished

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None

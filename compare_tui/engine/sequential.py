"""The interleaved schedule of a `--stop-when-settled` comparison.

Every run of the comparison is sent the tasks in the order recorded on it
(`store.SequentialOrder`), and no run gets more than its concurrency ahead of the slowest open
run: each task goes to every open model before later tasks do, so each finished task adds one
paired outcome per candidate. After every task that ends, each open candidate's paired outcomes
(candidate − baseline, in the recorded order, up to the first task not yet paired) are handed to
the stop rule (`report.sequential.look_at`, given by the caller: the engine does not import the
report); a candidate whose verdict has settled is sent nothing more, and the baseline stops once
every candidate has. Tasks never sent are counted, never failed.

Everything here is a function of the stored outcomes and the recorded order: a resumed session
rebuilds the same looks from the store and goes on where the killed one stopped, sending no task
twice.
"""

from __future__ import annotations

import asyncio
import random
import secrets
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from compare_tui.engine.events import RunObserver, SequenceLooked
from compare_tui.engine.prepare import RunRefusedError
from compare_tui.goldset import GoldenSet
from compare_tui.goldset.models import Task
from compare_tui.store import SequentialOrder
from compare_tui.vocabulary import Outcome


class SequenceLook(Protocol):
    """One look of a candidate's confidence sequence (`report.sequential.Look` is one)."""

    @property
    def tasks(self) -> int: ...
    @property
    def low(self) -> float: ...
    @property
    def high(self) -> float: ...
    @property
    def verdict(self) -> str: ...
    @property
    def settled(self) -> bool: ...


class StopRule(Protocol):
    """The look after `outcomes` from a set of `total` paired tasks, for one of K `candidates`."""

    def __call__(self, outcomes: Sequence[int], total: int, *, margin_pp: float, candidates: int) -> SequenceLook: ...


def sequential_order(goldset: GoldenSet, model_names: Sequence[str], baseline: str | None) -> SequentialOrder:
    """A new sequential comparison's task order, drawn from a fresh seed before any request (a
    `run --stop-when-settled` session's models, or an experiment's arms with the reference arm's
    model as `baseline`); refused without a baseline and a candidate, or with tasks a person
    scores (they pair no outcome the sequence could take)."""
    if baseline is None or not any(name != baseline for name in model_names):
        raise RunRefusedError(
            "sequential", "--stop-when-settled needs a baseline and at least one candidate (--baseline A --model B)"
        )
    human = [t.id for t in goldset.tasks if goldset.scorer_for(t).kind == "human"]
    if human:
        raise RunRefusedError(
            "sequential",
            f"--stop-when-settled pairs automatically scored outcomes, and {len(human)} task(s) are scored "
            f"by a person (first: {human[0]}); run without it",
        )
    seed = secrets.randbits(63)
    order = [t.id for t in goldset.tasks]
    random.Random(seed).shuffle(order)
    return SequentialOrder(seed=seed, order=order)


PAIRED = frozenset({Outcome.PASS, Outcome.FAIL, Outcome.ERROR})
"""Task outcomes a pair is made of (automatically scored, as the report pairs them)."""


@dataclass
class _Model:
    run_id: str
    name: str
    window: int
    done: dict[str, str] = field(default_factory=dict)
    """task id → the task's outcome once it ended (an outcome, or `not_done`)."""
    stopped: bool = False
    """Its executor stopped (finished, an outage, cancelled): it counts no more for the pace."""
    look: SequenceLook | None = None


class SequentialSchedule:
    """The order, the pace and the stops of one sequential comparison's runs (one event loop)."""

    def __init__(
        self,
        order: Sequence[str],
        baseline: tuple[str, str, int],
        candidates: Sequence[tuple[str, str, int]],
        rule: StopRule,
        *,
        margin_pp: float,
        prior: Mapping[str, Mapping[str, str]] | None = None,
        observer: RunObserver | None = None,
    ) -> None:
        """`baseline` and each of `candidates`: (run id, model name, concurrency). `prior`: run
        id → task id → outcome of the tasks an earlier execution ended (a resume). `observer`
        is told each new look (`SequenceLooked`)."""
        self.observer = observer
        self.order = tuple(order)
        self.position = {task_id: i for i, task_id in enumerate(self.order)}
        self.rule, self.margin_pp = rule, margin_pp
        self.baseline = _Model(*baseline)
        self.candidates = [_Model(*c) for c in candidates]
        self.models = {m.run_id: m for m in (self.baseline, *self.candidates)}
        for run_id, ended in (prior or {}).items():
            if run_id in self.models:
                self.models[run_id].done.update(ended)
        self._waiting: list[asyncio.Future[None]] = []
        for candidate in self.candidates:
            self._look(candidate)

    # ------------------------------------------------------------------ what is settled

    def outcomes(self, candidate: _Model) -> list[int]:
        """Candidate − baseline per task, in the recorded order, up to the first task not paired."""
        paired = []
        for task_id in self.order:
            c, b = candidate.done.get(task_id), self.baseline.done.get(task_id)
            if c not in PAIRED or b not in PAIRED:
                break
            paired.append(int(c == Outcome.PASS) - int(b == Outcome.PASS))
        return paired

    def _look(self, candidate: _Model) -> None:
        if candidate.look is not None and candidate.look.settled:
            return  # settled stays settled: the verdict is the one at that look
        outcomes = self.outcomes(candidate)
        seen = 0 if candidate.look is None else candidate.look.tasks
        # Every look in turn, even when several pairs complete at once: the run stops at the
        # first settled look, the one the report's sequence settles at.
        for n in range(seen + 1, len(outcomes) + 1):
            look = candidate.look = self.rule(
                outcomes[:n], len(self.order), margin_pp=self.margin_pp, candidates=len(self.candidates)
            )
            if self.observer is not None:
                self.observer.on_event(
                    SequenceLooked(
                        candidate.name,
                        look.tasks,
                        len(self.order),
                        look.low,
                        look.high,
                        str(look.verdict),
                        look.settled,
                    )
                )
            if look.settled:
                return

    def settled(self, run_id: str) -> bool:
        """Whether the run is sent nothing more: a settled candidate, or the baseline once every
        candidate has settled."""
        model = self.models[run_id]
        if model is self.baseline:
            return all(self.settled(c.run_id) for c in self.candidates)
        return model.look is not None and model.look.settled

    def looks(self) -> dict[str, SequenceLook | None]:
        """Each candidate's latest look, by model name."""
        return {c.name: c.look for c in self.candidates}

    # ------------------------------------------------------------------ the pace

    def _open(self) -> list[_Model]:
        return [m for m in self.models.values() if not m.stopped and not self.settled(m.run_id)]

    def frontier(self) -> int:
        """The first position in the order that some open run has not ended yet."""
        open_models = self._open()
        for i, task_id in enumerate(self.order):
            if any(task_id not in m.done for m in open_models):
                return i
        return len(self.order)

    def task_ended(self, run_id: str, task_id: str, outcome: str) -> None:
        """A task of a run ended (its attempts are stored): look again, and wake the waiting."""
        self.models[run_id].done[task_id] = outcome
        for candidate in self.candidates:
            self._look(candidate)
        self._notify()

    def run_stopped(self, run_id: str) -> None:
        """A run's executor stopped: it holds back no other run any more."""
        self.models[run_id].stopped = True
        self._notify()

    def _notify(self) -> None:
        waiting, self._waiting = self._waiting, []
        for future in waiting:
            if not future.done():
                future.set_result(None)

    async def changed(self) -> None:
        """Return once a task ends or a run stops."""
        future = asyncio.get_running_loop().create_future()
        self._waiting.append(future)
        await future

    def source(self, run_id: str, pending: Iterable[Task]) -> TaskSource:
        """The run's pending tasks in the recorded order, each handed out when the pace allows."""
        ordered = sorted(pending, key=lambda t: self.position.get(t.id, len(self.order)))
        return TaskSource(self, run_id, ordered)

    def unsent(self, run_id: str, pending: int, tried: int) -> int:
        """Tasks of this execution the run was never sent because the verdicts settled."""
        return pending - tried if self.settled(run_id) else 0


class PlainSource:
    """A run's pending tasks in the set's order, as fast as its workers take them."""

    def __init__(self, tasks: Iterable[Task]) -> None:
        self._tasks = iter(tasks)

    async def next(self) -> Task | None:
        return next(self._tasks, None)


class TaskSource:
    """One run's tasks, handed to its workers one at a time (shared by them)."""

    def __init__(self, schedule: SequentialSchedule, run_id: str, tasks: list[Task]) -> None:
        self.schedule, self.run_id = schedule, run_id
        self._tasks = tasks
        self._next = 0

    async def next(self) -> Task | None:
        """The next task, once the run is within its concurrency of the slowest open run; None
        when its verdicts have settled or nothing is left."""
        schedule = self.schedule
        window = schedule.models[self.run_id].window
        while True:
            if schedule.settled(self.run_id) or self._next >= len(self._tasks):
                return None
            task = self._tasks[self._next]
            if schedule.position.get(task.id, 0) < schedule.frontier() + window:
                self._next += 1
                return task
            await schedule.changed()

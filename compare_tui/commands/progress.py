"""How `compare-tui run` shows progress: Rich bars on a terminal, plain lines otherwise."""

from __future__ import annotations

import sys
from collections import Counter
from typing import TYPE_CHECKING, Self, TextIO

from compare_tui.commands.common import say
from compare_tui.engine.events import AttemptFinished, EngineEvent, RunFinished, RunStarted, SequenceLooked
from compare_tui.vocabulary import NOT_DONE, Outcome

if TYPE_CHECKING:
    from rich.progress import TaskID


def evidence_words(event: SequenceLooked) -> str:
    """`qwen2.5-coder-0.5b: better, settled · Δ vs baseline +4.7…+76.6 pts after 14/64`."""
    from compare_tui.report.sequential_run import evidence_words as words

    return f"{event.model_name}: " + words(
        event.tasks, event.total, event.low, event.high, event.verdict, event.settled
    )


def evidence_cell(event: SequenceLooked) -> str:
    """`CS +4.7…+76.6 better ✓` (✓: settled), short enough for an 80-column progress row."""
    from compare_tui.report.formatting import bound

    settled = " ✓" if event.settled else ""
    return f"CS {bound(event.low * 100)}…{bound(event.high * 100)} {event.verdict}{settled}"


class PlainProgress:
    """One line per finished task and per run: readable in CI logs."""

    def __init__(self, stream: TextIO | None = None) -> None:
        # sys.stdout when called, not when this module was imported (a test's captured stream)
        self.stream = sys.stdout if stream is None else stream
        self.done: Counter[str] = Counter()
        self.resumed: dict[str, bool] = {}

    def __enter__(self) -> PlainProgress:
        return self

    def __exit__(self, *exc: object) -> None:
        pass

    def on_event(self, event: EngineEvent) -> None:
        if isinstance(event, RunStarted):
            self.done[event.run_id] = event.tasks_done
            self.resumed[event.run_id] = event.tasks_done > 0
            resumed = f", resuming after {event.tasks_done} done" if event.tasks_done else ""
            say(
                f"run {event.run_id}: {event.model_name} on {event.goldset_name}, {event.task_count} tasks{resumed}; "
                f"{event.provenance}; estimate {event.estimate}",
                file=self.stream,
            )
        elif isinstance(event, AttemptFinished) and event.task_done:
            self.done[event.run_id] += 1
            extra = f" ({event.error})" if event.error else ""
            say(
                f"  [{self.done[event.run_id]}] {event.model_name} {event.task_id} #{event.attempt}: {event.outcome}{extra}",
                file=self.stream,
            )
        elif isinstance(event, SequenceLooked):
            say(f"  {evidence_words(event)}", file=self.stream)
        elif isinstance(event, RunFinished):
            # The counts are of this session's attempts: after a resume, said so.
            counts = ", ".join(f"{k} {v}" for k, v in sorted(event.counts.items())) or "no task finished"
            scope = "this session: " if self.resumed.get(event.run_id) else ""
            say(
                f"run {event.run_id}: {event.status} ({scope}{counts}){'; ' + event.error if event.error else ''}",
                file=self.stream,
            )


class RichProgress:
    """A progress bar per model with pass/fail/review/error counters."""

    def __init__(self) -> None:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        self.progress = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[counts]}"),
            TimeElapsedColumn(),
        )
        self.bars: dict[str, TaskID] = {}
        self.counts: dict[str, Counter[str]] = {}
        self.evidence: dict[str, TaskID] = {}

    def __enter__(self) -> RichProgress:
        self.progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.progress.stop()

    def on_event(self, event: EngineEvent) -> None:
        if isinstance(event, RunStarted):
            self.counts[event.run_id] = Counter()
            self.bars[event.run_id] = self.progress.add_task(
                event.model_name, total=event.task_count, completed=event.tasks_done, counts=""
            )
        elif isinstance(event, AttemptFinished) and event.task_done and event.run_id in self.bars:
            counts = self.counts[event.run_id]
            counts[event.outcome] += 1
            text = " ".join(f"{k.replace('_', ' ')} {counts[k]}" for k in (*Outcome, NOT_DONE) if counts[k])
            self.progress.update(self.bars[event.run_id], advance=1, counts=text)
        elif isinstance(event, SequenceLooked):
            # One line per candidate: its confidence sequence after each look, until it settles.
            if event.model_name not in self.evidence:
                self.evidence[event.model_name] = self.progress.add_task(
                    f"  Δ {event.model_name}"[:20], total=event.total, counts=""
                )
            self.progress.update(self.evidence[event.model_name], completed=event.tasks, counts=evidence_cell(event))
        elif isinstance(event, RunFinished) and event.error:
            self.progress.console.print(f"[yellow]{event.model_name}: {event.status}: {event.error}[/]")


class _Silent:
    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        pass

    def on_event(self, event: EngineEvent) -> None:
        pass


ProgressObserver = PlainProgress | RichProgress | _Silent


def make_observer(*, quiet: bool) -> ProgressObserver:
    """Nothing when `quiet`, Rich bars on a terminal, plain lines otherwise."""
    if quiet:
        return _Silent()
    if sys.stdout.isatty():
        return RichProgress()
    return PlainProgress()

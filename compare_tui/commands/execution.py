"""Executing prepared runs with the command line's progress display: `run` and `experiment run`
share it (`execute_prepared`), so neither command imports the other."""

from __future__ import annotations

import asyncio
import signal
import sys
from typing import TYPE_CHECKING, Self

from compare_tui.commands.common import CommandError, say
from compare_tui.vocabulary import RunStatus

if TYPE_CHECKING:
    from compare_tui.catalogue import Catalogue
    from compare_tui.commands.progress import ProgressObserver
    from compare_tui.engine import BaselineChosen, EngineEvent, EngineSession, PreparedRun
    from compare_tui.store import Store


def execute_prepared(store: Store, prepared: list[PreparedRun], *, quiet: bool, together: bool = False) -> list[str]:
    """Execute runs prepared elsewhere (an experiment's) with this command's progress display;
    return their final statuses. `together`: all at the same time (they ask different endpoints)."""
    from compare_tui.commands.progress import make_observer
    from compare_tui.engine import EngineSession
    from compare_tui.report.sequential import look_at

    observer = CommandObserver(make_observer(quiet=quiet), quiet=quiet)
    # Runs prepared as one sequential comparison (an experiment's arms) go interleaved, each
    # stopped once its verdict has settled.
    session = EngineSession.of_prepared(store, prepared, observer, stop_rule=look_at)
    return execute(session, observer, together=together)


def resume_sequence(store: Store, run_id: str, catalogue: Catalogue, *, quiet: bool) -> list[str]:
    """Resume the sequential comparison `run_id` belongs to (every run of it, interleaved, no
    task sent twice) with this command's progress display; return the runs' final statuses."""
    from compare_tui.commands.progress import make_observer
    from compare_tui.engine import EngineSession, ResumePlan, RunRefusedError
    from compare_tui.report.sequential import look_at

    observer = CommandObserver(make_observer(quiet=quiet), quiet=quiet)
    session = EngineSession(store, ResumePlan((run_id,)), catalogue, observer, stop_rule=look_at)
    try:
        session.prepare()
    except RunRefusedError as exc:
        raise CommandError(str(exc)) from None
    return execute(session, observer)


class CommandObserver:
    """The progress display, plus the baseline lines this command prints on stderr."""

    def __init__(self, progress: ProgressObserver, *, quiet: bool) -> None:
        self.progress, self.quiet = progress, quiet
        self.interrupted: int | None = None
        """The exit code of an interruption: 130 for Ctrl-C, 143 for SIGTERM (None: not interrupted)."""

    def __enter__(self) -> Self:
        self.progress.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self.progress.__exit__(*exc)

    def on_event(self, event: EngineEvent) -> None:
        from compare_tui.engine import BaselineChosen, LeaseTakenOver, ModelsSkipped

        if isinstance(event, BaselineChosen):
            say_baseline(event, quiet=self.quiet)
        elif isinstance(event, ModelsSkipped):
            say(f"warning: {event.warning}", file=sys.stderr)
            for model, reason in event.skipped.items():
                say(f"  {model}: {reason}", file=sys.stderr)
        elif isinstance(event, LeaseTakenOver):
            print(f"note: {event.sentence}", file=sys.stderr)
        else:
            self.progress.on_event(event)


def say_baseline(event: BaselineChosen, *, quiet: bool) -> None:
    """Where a baseline not named on the command line came from (or why there is none)."""
    if event.named or event.promoted is None:
        return
    if event.baseline is not None:
        if not quiet:
            say(f"baseline: {event.baseline} (the promoted baseline of workload {event.workload_id})", file=sys.stderr)
        return
    say(
        f"note: workload {event.workload_id}'s promoted baseline {event.promoted} is not in this run, so no "
        f"candidate is judged against it (add --baseline {event.promoted})",
        file=sys.stderr,
    )


def execute(session: EngineSession, observer: CommandObserver, *, together: bool = False) -> list[str]:
    """Execute a prepared session with the display open; SIGTERM and Ctrl-C interrupt the
    current run (resumable), and the runs not started count as interrupted too."""
    from compare_tui.store import StoreError

    async def main() -> None:
        loop = asyncio.get_running_loop()
        current = asyncio.current_task()
        assert current is not None
        loop.add_signal_handler(signal.SIGTERM, current.cancel)
        with observer:
            await session.execute(together=together)

    prepared = session.prepared
    try:
        asyncio.run(main())
    except (KeyboardInterrupt, asyncio.CancelledError) as exc:
        observer.interrupted = 130 if isinstance(exc, KeyboardInterrupt) else 143
        ended = [s for s in session.statuses if s != RunStatus.INTERRUPTED]  # the interrupted one is resumable
        ids = ", ".join(p.run.id for p in prepared[len(ended) :])
        say(
            f"interrupted; every finished attempt is stored. Resume with: compare-tui run --resume <id> ({ids})",
            file=sys.stderr,
        )
    except StoreError as exc:
        # The store failed mid-run (disk full, read-only): one clear line, not a traceback.
        stopped = session.stopped_run_id
        raise CommandError(
            f"run {stopped} stopped: {exc}; every attempt finished before this is stored "
            f"(resume with `compare-tui run --resume {stopped}`)",
            exit_code=1,
        ) from None
    statuses = list(session.statuses)
    return statuses + [RunStatus.INTERRUPTED.value] * (len(prepared) - len(statuses))

"""Which runs an arm holds: the first N completed runs of its cell, whoever started them.

Pure: it takes the store's runs and returns a selection. "First" is by finish time, so a
run that completes later never displaces one already held: raising N takes in the next
runs, lowering N lets go of the latest. Interrupted, failed and cancelled runs take no place
(and deleted ones are simply gone); pending and running runs are *in flight*: they hold a
place without being complete, so a launcher starts only N − held − in flight. A rescored run
(`compare-tui rescore`) is its source's answers scored again, not a repeat: it takes no place
and is listed apart (`ArmRuns.rescored`), so neither its pass rate nor its source's latency
counts twice.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from compare_tui.experiment.cells import IN_FLIGHT, run_cell_key
from compare_tui.store import RunRecord
from compare_tui.vocabulary import RunStatus


@dataclass(frozen=True, slots=True)
class ArmRuns:
    """The runs of one arm's cell, as the experiment sees them."""

    cell: str
    repeats: int
    """N, the runs the arm wants."""
    held: tuple[RunRecord, ...]
    """The first `repeats` completed runs of the cell, in finish order."""
    in_flight: tuple[RunRecord, ...]
    """Runs of the cell still pending or running."""
    spare: int
    """Completed runs of the cell beyond the first `repeats` (taken in if N is raised)."""
    rescored: tuple[RunRecord, ...] = ()
    """Rescored runs of the cell: not repeats, never held."""

    @property
    def missing(self) -> int:
        """Runs to launch: N less the runs held and in flight (never negative)."""
        return max(0, self.repeats - len(self.held) - len(self.in_flight))

    @property
    def complete(self) -> bool:
        return len(self.held) >= self.repeats


def _finish_order(run: RunRecord) -> tuple[str, str, str]:
    return (run.finished_at or run.created_at, run.created_at, run.id)


def select_arm_runs(runs: Iterable[RunRecord], cell: str, repeats: int, *, settled: bool = False) -> ArmRuns:
    """The selection of `cell` among `runs` for an arm that wants `repeats` runs. `settled`: a
    `settled` run (stopped once its verdicts settled) counts as completed too, as it does in an
    experiment whose arms stop when settled; elsewhere it lacks tasks and takes no place."""
    cell_runs = [run for run in runs if run_cell_key(run) == cell]
    mine = [run for run in cell_runs if not is_rescored(run)]
    ended = {RunStatus.COMPLETED, RunStatus.SETTLED} if settled else {RunStatus.COMPLETED}
    completed = sorted((r for r in mine if r.status in ended), key=_finish_order)
    in_flight = sorted((r for r in mine if str(r.status) in IN_FLIGHT), key=lambda r: (r.created_at, r.id))
    return ArmRuns(
        cell=cell,
        repeats=repeats,
        held=tuple(completed[:repeats]),
        in_flight=tuple(in_flight),
        spare=max(0, len(completed) - repeats),
        rescored=tuple(sorted((r for r in cell_runs if is_rescored(r)), key=_finish_order)),
    )


def is_rescored(run: RunRecord) -> bool:
    """True for a run made by `compare-tui rescore` (another run's answers scored again)."""
    return bool(run.rescore and run.rescore.get("source_run"))

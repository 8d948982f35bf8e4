"""The figures of a comparison run with `--stop-when-settled`: each candidate's confidence
sequence look by look, where its verdict settled, and what was not sent.

The engine sent the tasks in the order recorded on the comparison and stopped a candidate once
its look (`report.sequential.look_at`) had settled; this rebuilds the same looks from the stored
outcomes in that order (candidate − baseline, up to the first task not paired), so every surface
shows the sequence the run stopped on. The verdict is the one at the settled look (else at the
last look: anytime-valid either way). Tasks never sent are counted per run, never failed; the
cost not spent is the run's measured cost per task sent times the tasks it was not sent.

Pure and deterministic.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from compare_tui.report import formatting as fmt
from compare_tui.report.decision import SequentialStanding
from compare_tui.report.figures import ModelFigures
from compare_tui.report.paired import both_scored
from compare_tui.report.sequential import Look, SequentialVerdict, sequence, side_alpha
from compare_tui.vocabulary import MISSING, Outcome, RunStatus

METHOD = (
    "anytime-valid confidence sequence for the paired mean (betting, without replacement), "
    "each side at 0.05/(2K) for K candidates; tasks in the seeded order recorded on the comparison"
)


@dataclass(frozen=True, slots=True)
class CandidateSequence:
    """One candidate's confidence sequence over its paired outcomes in the recorded order."""

    candidate: str
    """The candidate row's label."""
    sequence: SequentialVerdict | None
    """None before the first paired outcome."""

    @property
    def look(self) -> Look | None:
        """The settled look, else the last one (None: no paired outcome yet)."""
        if self.sequence is None:
            return None
        return self.sequence.settled_at or self.sequence.looks[-1]


@dataclass(frozen=True, slots=True)
class SequentialRun:
    """A sequential comparison's figures (`Report.sequential`)."""

    seed: int
    order: tuple[str, ...]
    total: int
    """N: the tasks of the set, the sequences' population."""
    level: float
    """Each sequence's two-sided level, 1 − 0.05/K."""
    candidates: tuple[CandidateSequence, ...]
    not_sent: tuple[tuple[str, int], ...]
    """Per row (label): tasks it was not sent because the verdicts it served had settled."""
    not_spent: float | None
    """The runs' measured cost per task sent × the tasks each was not sent (None: no cost known)."""
    currency: str = "USD"

    @property
    def settled(self) -> bool:
        return bool(self.candidates) and all(c.look is not None and c.look.settled for c in self.candidates)

    @property
    def settled_after(self) -> int | None:
        """The task at which the last verdict settled (None: not every verdict has)."""
        if not self.settled:
            return None
        return max(c.look.tasks for c in self.candidates if c.look is not None)

    @property
    def requests_not_sent(self) -> int:
        """Requests never sent: one first attempt for each task a run was not sent."""
        return sum(n for _, n in self.not_sent)

    @property
    def words(self) -> str:
        """`settled after 37 of 64 tasks; 54 requests not sent; $0.83 not spent`."""
        if self.settled_after is not None:
            head = f"settled after {self.settled_after} of {self.total} tasks"
        else:
            looked = max((c.look.tasks for c in self.candidates if c.look is not None), default=0)
            head = f"not settled yet after {looked} of {self.total} tasks"
        parts = [head, f"{self.requests_not_sent} requests not sent"]
        if self.not_spent is not None and self.requests_not_sent:
            parts.append(f"{fmt.money(self.not_spent, self.currency)} not spent")
        return "; ".join(parts)

    def for_candidate(self, label: str) -> CandidateSequence | None:
        return next((c for c in self.candidates if c.candidate == label), None)

    def standings(self) -> dict[str, SequentialStanding]:
        """Each candidate's verdict as the decision takes it (those with a paired outcome)."""
        return {
            c.candidate: SequentialStanding(
                c.look.verdict, c.look.low * 100, c.look.high * 100, c.look.tasks, self.total, c.look.settled
            )
            for c in self.candidates
            if c.look is not None
        }


def evidence_words(tasks: int, total: int, low: float, high: float, verdict: str, settled: bool) -> str:
    """A live look in one line: `better, settled · Δ vs baseline +6.2…+93.8 pts after 11/64`
    (the confidence sequence's bounds of Δ, given as shares; the Live screen and the run's
    progress show it after each look). The verdict comes first and the line stays within a Live
    panel at 80 columns (76 cells) up to 9,999 tasks, so nothing of it is pushed off."""
    state = "settled" if settled else "not settled"
    bounds = f"{fmt.bound(low * 100)}…{fmt.bound(high * 100)} pts"
    return f"{verdict}, {state} · Δ vs baseline {bounds} after {tasks}/{total}"


def candidate_words(c: CandidateSequence, total: int, level: float) -> str:
    """`better, settled at task 7 of 20 (confidence sequence at 95 %: +10.0 to +100.0 pts)`."""
    look = c.look
    if look is None:
        return "no paired outcome yet"
    bounds = (
        f"confidence sequence at {fmt.level(level)}: {fmt.bound(look.low * 100)} to {fmt.bound(look.high * 100)} pts"
    )
    if look.settled:
        how = ", curtailed: the remaining tasks could not change it" if look.curtailed else ""
        return f"{look.verdict}, settled at task {look.tasks} of {total} ({bounds}{how})"
    return f"{look.verdict}, not settled after {look.tasks} of {total} tasks ({bounds})"


def paired_in_order(
    candidate: ModelFigures, baseline: ModelFigures, task_ids: Sequence[str], order: Sequence[str]
) -> list[int]:
    """Candidate − baseline per task in `order`, up to the first task not paired (as the engine looks)."""
    index = {task_id: i for i, task_id in enumerate(task_ids)}
    outcomes = []
    for task_id in order:
        i = index.get(task_id)
        if i is None or not both_scored(candidate.blocks[i], baseline.blocks[i]):
            break
        c, b = candidate.blocks[i], baseline.blocks[i]
        outcomes.append(int(c.status == Outcome.PASS) - int(b.status == Outcome.PASS))
    return outcomes


def sequential_run(
    seed: int,
    order: Sequence[str],
    rows: Sequence[ModelFigures],
    baseline: ModelFigures,
    task_ids: Sequence[str],
    margin_pp: float,
    candidates: int,
) -> SequentialRun:
    """The sequential figures of the comparison whose rows are `rows` (the baseline among them),
    with α split over its `candidates` runs as the engine split it (a refused row still counts)."""
    others = [row for row in rows if row is not baseline]
    k = max(1, candidates)
    sequences = []
    for row in others:
        outcomes = paired_in_order(row, baseline, task_ids, order)
        seq = sequence(outcomes, len(order), margin_pp=margin_pp, candidates=k) if outcomes else None
        sequences.append(CandidateSequence(row.label, seq))
    not_sent = tuple(
        (row.label, sum(1 for b in row.blocks if b.status == MISSING))
        for row in rows
        if row.run_status == RunStatus.SETTLED
    )
    # Priced per task sent, not per task completed: a run that passed 1 of the 16 tasks it was
    # sent would otherwise price each unsent task at its whole spend.
    sent = {row.label: sum(1 for b in row.blocks if b.status != MISSING) for row in rows}
    costs = [
        row.cost.total / sent[row.label] * n
        for row in rows
        for label, n in not_sent
        if label == row.label and n and row.cost.total is not None and sent[row.label]
    ]
    currency = next((row.cost.currency for row in rows), "USD")
    return SequentialRun(
        seed,
        tuple(order),
        len(order),
        1 - 2 * side_alpha(k),
        tuple(sequences),
        not_sent,
        sum(costs) if costs else None,
        currency,
    )

"""Which answers to label next, and how many labels a ±5-point corrected figure needs (pure).

The proposals keep the labelled answers a fair sample of what the judge decided: the pool is
split by candidate and by the judge's verdict, and the next label comes from the group whose
share of the labels lags its share of the judged answers most; inside a group, the order is a
fixed shuffle (a digest of run and task), never the judge's or a person's choice. Choosing by
verdict alone (only the answers the judge passed, say) would narrow one interval faster but
bias the sensitivity and specificity the correction divides by.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from compare_tui.judge.calibration.figures import MIN_LABELS_EACH, LabelCounts, corrected_interval

TARGET_HALF_WIDTH = 0.05
"""±5 points."""
MAX_LABELS = 100_000


@dataclass(frozen=True, slots=True)
class Candidate:
    """An unlabelled judged answer (the pool), or a labelled one (`label` set)."""

    run_id: str
    model: str
    task_id: str
    passed: bool
    label: bool | None = None


@dataclass(frozen=True, slots=True)
class Proposal:
    run_id: str
    model: str
    task_id: str
    passed: bool
    why: str


def _order(item: Candidate) -> str:
    return hashlib.sha256(f"{item.run_id}:{item.task_id}".encode()).hexdigest()


def propose(pool: Sequence[Candidate], count: int = 10) -> list[Proposal]:
    """Up to `count` unlabelled answers to label next, in order (see the module's docstring)."""
    groups: dict[tuple[str, bool], list[Candidate]] = {}
    for item in pool:
        groups.setdefault((item.model, item.passed), []).append(item)
    total = len(pool)
    labelled = Counter((i.model, i.passed) for i in pool if i.label is not None)
    already = Counter(labelled)  # the labels people gave; `labelled` also counts those proposed above
    waiting = {key: sorted((i for i in items if i.label is None), key=_order) for key, items in groups.items()}
    done = sum(labelled.values())
    out: list[Proposal] = []
    while len(out) < count:
        open_groups = [key for key, items in waiting.items() if items]
        if not open_groups:
            break
        deficits = {k: (len(groups[k]) / total * (done + 1) - labelled[k], k[0], k[1]) for k in open_groups}
        key = max(open_groups, key=deficits.__getitem__)
        item = waiting[key].pop(0)
        share = len(groups[key]) / total
        out.append(
            Proposal(
                item.run_id,
                item.model,
                item.task_id,
                item.passed,
                f"judge {'passed' if item.passed else 'failed'} · {item.model}: {already[key]} of "
                f"{len(groups[key])} labelled; this group is {share:.0%} of the judged answers",
            )
        )
        labelled[key] += 1
        done += 1
    return out


def _scaled(counts: LabelCounts, total: int) -> LabelCounts:
    factor = total / counts.labelled
    return LabelCounts(
        round(counts.right_passed * factor),
        round(counts.right_failed * factor),
        round(counts.wrong_failed * factor),
        round(counts.wrong_passed * factor),
    )


def _narrow_enough(passed: int, judged: int, counts: LabelCounts) -> bool:
    if counts.right < MIN_LABELS_EACH or counts.wrong < MIN_LABELS_EACH:
        return False
    interval = corrected_interval(passed, judged, counts)
    return interval is not None and interval.half_width <= TARGET_HALF_WIDTH


@dataclass(frozen=True, slots=True)
class LabelsNeeded:
    more: int | None
    """Labels to add (at the agreement measured so far) for ±5 points; None when out of reach."""
    sentence: str


def labels_needed(counts: LabelCounts, rates: Sequence[tuple[str, int, int]]) -> LabelsNeeded:
    """How many more labels, drawn like those so far and agreeing as they do, bring every
    run's corrected interval (`rates`: model, judge passes, answers judged) to ±5 points."""
    if not rates:
        return LabelsNeeded(None, "nothing judged yet")
    if counts.right == 0 or counts.wrong == 0:
        return LabelsNeeded(
            None,
            f"labels needed for ±5 points: unknown until at least one right and one wrong answer are labelled "
            f"({MIN_LABELS_EACH} of each before any rate is corrected)",
        )
    worst = 0
    for model, passed, judged in rates:
        # Even a perfectly known judge leaves the run's own sampling: check that bound first.
        perfect = LabelCounts(MAX_LABELS, 0, MAX_LABELS, 0)
        if not _narrow_enough(passed, judged, perfect):
            return LabelsNeeded(
                None,
                f"labels needed for ±5 points: out of reach for {model}: its {judged} judged answers "
                "alone leave more than ±5 points; judge more tasks",
            )
        if _narrow_enough(passed, judged, counts):
            continue
        low, high = counts.labelled, counts.labelled
        while not _narrow_enough(passed, judged, _scaled(counts, high)):
            if high >= MAX_LABELS:
                return LabelsNeeded(
                    None, f"labels needed for ±5 points: more than {MAX_LABELS:,} at the agreement measured so far"
                )
            low, high = high, min(MAX_LABELS, high * 2)
        while high - low > 1:
            mid = (low + high) // 2
            low, high = (low, mid) if _narrow_enough(passed, judged, _scaled(counts, mid)) else (mid, high)
        worst = max(worst, high - counts.labelled)
    if worst == 0:
        return LabelsNeeded(0, "labels needed for ±5 points: none more; every corrected rate is within ±5 points")
    return LabelsNeeded(
        worst,
        f"labels needed for ±5 points: about {worst} more (at the agreement measured so far; "
        f"{counts.labelled} labelled)",
    )

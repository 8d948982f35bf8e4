"""The interleaved schedule of a `--stop-when-settled` comparison (`engine.sequential`), without
a server: the pace (no run more than its concurrency ahead of the slowest open run), a settled
candidate sent nothing more while another goes on, the baseline stopping once every candidate
has settled, and a resume rebuilding the same looks from what was stored."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from compare_tui.engine.sequential import SequentialSchedule
from compare_tui.goldset.models import Task

ORDER = [f"t{i}" for i in range(10)]


@dataclass(frozen=True)
class _Look:
    tasks: int
    low: float = 0.0
    high: float = 0.0
    verdict: str = "inconclusive"
    settled: bool = False


def settles_after(n: int):
    """A stop rule that settles once it has seen `n` paired outcomes (any outcomes)."""

    def rule(outcomes, total, *, margin_pp, candidates):
        assert total == len(ORDER) and candidates == 2
        return _Look(
            len(outcomes), verdict="better" if len(outcomes) >= n else "inconclusive", settled=len(outcomes) >= n
        )

    return rule


def _tasks() -> list[Task]:
    return [Task.model_validate({"id": t, "input": {"prompt": t}, "expected": {"text": "x"}}) for t in ORDER]


def _schedule(rule, prior=None) -> SequentialSchedule:
    return SequentialSchedule(
        ORDER, ("b", "base", 2), [("c1", "one", 2), ("c2", "two", 2)], rule, margin_pp=5, prior=prior
    )


async def _take(source) -> str | None:
    task = await asyncio.wait_for(source.next(), 0.2)
    return None if task is None else task.id


def test_no_run_gets_more_than_its_concurrency_ahead_of_the_slowest_open_run():
    async def main():
        schedule = _schedule(settles_after(99))
        fast = schedule.source("c1", reversed(_tasks()))  # handed out in the recorded order all the same
        assert [await _take(fast), await _take(fast)] == ["t0", "t1"]
        blocked = asyncio.ensure_future(fast.next())
        await asyncio.sleep(0.01)
        assert not blocked.done()  # t2 waits: the others have not ended t0
        for run in ("b", "c1", "c2"):
            schedule.task_ended(run, "t0", "pass")
        assert (await asyncio.wait_for(blocked, 0.2)).id == "t2"

    asyncio.run(main())


def test_a_settled_candidate_is_sent_nothing_more_and_the_baseline_stops_with_the_last():
    async def main():
        # c1's outcomes settle after 2 paired tasks; c2 after 4 (the rule counts its own pairs).
        def rule(outcomes, total, *, margin_pp, candidates):
            need = 2 if rule.who == "one" else 4
            return _Look(len(outcomes), settled=len(outcomes) >= need)

        schedule = _schedule(rule)
        original = schedule._look

        def look(candidate):
            rule.who = candidate.name
            original(candidate)

        schedule._look = look
        sources = {run: schedule.source(run, _tasks()) for run in ("b", "c1", "c2")}
        sent: dict[str, list[str]] = {run: [] for run in sources}
        for _ in range(len(ORDER)):
            for run, source in sources.items():
                task = await _take(source)
                if task is not None:
                    sent[run].append(task)
                    schedule.task_ended(run, task, "pass")
        assert sent["c1"] == ORDER[:2] and sent["c2"] == ORDER[:4] and sent["b"] == ORDER[:4]
        assert schedule.settled("b") and schedule.unsent("b", 10, 4) == 6
        assert [look.tasks for look in schedule.looks().values()] == [2, 4]

    asyncio.run(main())


def test_a_resumed_schedule_rebuilds_the_looks_from_what_was_stored():
    prior = {"b": {"t0": "fail", "t1": "pass"}, "c1": {"t0": "pass", "t1": "pass"}, "c2": {"t0": "pass"}}
    schedule = _schedule(settles_after(2), prior=prior)
    assert schedule.outcomes(schedule.candidates[0]) == [1, 0]
    assert schedule.settled("c1") and not schedule.settled("c2") and not schedule.settled("b")
    assert schedule.frontier() == 1  # c2 has not ended t1: it paces the others


def test_pairs_completing_at_once_are_looked_at_one_by_one_and_the_first_settled_look_stops_it():
    from compare_tui.engine.events import CollectingObserver, SequenceLooked

    seen = CollectingObserver()
    schedule = SequentialSchedule(
        ORDER, ("b", "base", 2), [("c1", "one", 2)], _one_candidate_rule(settle_at=2), margin_pp=5, observer=seen
    )
    for task in ("t1", "t0", "t2"):  # t1 ends first: nothing pairs until t0 does, then both at once
        schedule.task_ended("c1", task, "pass")
    for task in ("t1", "t2", "t0"):  # t0 last: three pairs complete at once, looked at 1, 2 (settled)
        schedule.task_ended("b", task, "fail")
    assert [e.tasks for e in seen.of(SequenceLooked)] == [1, 2]  # t0 then t1: two looks, in order
    assert schedule.settled("c1") and schedule.settled("b")


def _one_candidate_rule(settle_at: int):
    def rule(outcomes, total, *, margin_pp, candidates):
        return _Look(len(outcomes), settled=len(outcomes) >= settle_at)

    return rule

"""Checks on the `trace` field that need the whole set: a recorded agent run is whole.

Within one set, every task of a run (same `trace.run`) gives the same `of`, and each step
1..`of` is present exactly once. Old sets (no task with a `trace`) have nothing to check.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from .errors import Problem
from .models import Task


def trace_problems(entries: Sequence[tuple[Task, Path]]) -> list[Problem]:
    """Every way the traced tasks of `entries` (task, its file) fail to make whole runs."""
    runs: dict[str, list[tuple[Task, Path]]] = {}
    for task, file in entries:
        if task.trace is not None:
            runs.setdefault(task.trace.run, []).append((task, file))
    problems: list[Problem] = []
    for run, steps in runs.items():
        problems.extend(_run_problems(run, steps))
    return problems


def _run_problems(run: str, steps: list[tuple[Task, Path]]) -> list[Problem]:
    first_task, first_file = steps[0]
    assert first_task.trace is not None
    of = first_task.trace.of
    problems: list[Problem] = []
    seen: dict[int, str] = {}
    for task, file in steps:
        trace = task.trace
        assert trace is not None
        if trace.of != of:
            problems.append(
                Problem(
                    file,
                    "trace.of",
                    f"task `{task.id}` says run `{run}` has {trace.of} steps, but task `{first_task.id}` "
                    f"({first_file}) says {of}",
                    "give every task of one run the same `of`: the run's number of steps",
                )
            )
            continue
        if trace.step in seen:
            problems.append(
                Problem(
                    file,
                    "trace.step",
                    f"task `{task.id}` is step {trace.step} of run `{run}`, which task `{seen[trace.step]}` already is",
                    "give each step of a run to exactly one task",
                )
            )
            continue
        seen[trace.step] = task.id
    missing = [step for step in range(1, of + 1) if step not in seen]
    if missing:
        shown = ", ".join(str(s) for s in missing[:10]) + (" …" if len(missing) > 10 else "")
        problems.append(
            Problem(
                first_file,
                "trace",
                f"run `{run}` has {of} steps (`of`), but no task is step {shown}",
                "add a task for every step of the run, or correct `of`; a run is replayed whole",
            )
        )
    return problems

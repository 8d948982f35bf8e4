"""The scorer executor seam: the local executor bounds command scorers, yields every item once,
keeps pure scorers in-process, and `--scorers` is parsed (and refused) as documented."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from compare_tui.errors import CompareTuiError
from compare_tui.goldset import load_golden_set
from compare_tui.scoring import Answer, Outcome
from compare_tui.scoring.executor import LocalScorers, ScoreItem, default_scorer_jobs
from compare_tui.scoring.on_worker import write_set_files
from compare_tui.scoring.placement import parse_scorers, scorer_executor, where_scorers_run

# Records how many checks run at once: each makes a file in the folder it is given, looks how
# many are there, waits, then removes its own. The peak goes to a file per check.
CHECK = """\
import os, sys, time
folder = sys.argv[1]
mine = os.path.join(folder, str(os.getpid()) + ".running")
open(mine, "w").close()
peak = len([n for n in os.listdir(folder) if n.endswith(".running")])
time.sleep(0.3)
peak = max(peak, len([n for n in os.listdir(folder) if n.endswith(".running")]))
os.remove(mine)
open(os.path.join(folder, str(os.getpid()) + ".peak"), "w").write(str(peak))
answer = open(os.environ["COMPARE_TUI_ANSWER"]).read()
sys.exit(0 if answer.strip() == "yes" else 1)
"""


def _set(tmp_path: Path, n: int) -> Path:
    root = tmp_path / "set"
    (root / "tasks").mkdir(parents=True)
    (root / "check.py").write_text(CHECK)
    (root / "golden.toml").write_text(
        'workload_id = "ex"\nname = "Ex"\nversion = "1"\n[default_scorer]\nkind = "command"\n'
        f'run = ["python3", "check.py", "{tmp_path / "seen"}"]\ntimeout_s = 30\n'
    )
    for i in range(n):
        task = {"id": f"t{i}", "input": {"prompt": "q"}, "expected": {"text": "yes"}}
        (root / "tasks" / f"t{i}.json").write_text(json.dumps(task))
    (root / "tasks" / "exact.json").write_text(
        json.dumps({"id": "exact", "input": {"prompt": "q"}, "expected": {"text": "yes"}, "scorer": {"kind": "exact"}})
    )
    (tmp_path / "seen").mkdir()
    return root


async def _score_all(executor: LocalScorers, root: Path) -> list:
    goldset = load_golden_set(root)
    items = [
        ScoreItem(task, 1, Answer("yes" if i % 2 == 0 else "no"), goldset.scorer_for(task))
        for i, task in enumerate(goldset.tasks)
    ]
    try:
        return [scored async for scored in executor.score_batch(goldset, items)]
    finally:
        executor.close()


@pytest.mark.parametrize("jobs", [1, 2])
def test_local_executor_runs_at_most_jobs_command_scorers_at_once(tmp_path, jobs):
    root = _set(tmp_path, 4)
    results = asyncio.run(_score_all(LocalScorers(jobs), root))
    by_task = {s.item.task.id: s.result.outcome for s in results}
    assert len(results) == 5 and len(by_task) == 5  # every item exactly once
    goldset = load_golden_set(root)
    expected = {t.id: Outcome.PASS if i % 2 == 0 else Outcome.FAIL for i, t in enumerate(goldset.tasks)}
    assert by_task == expected
    peaks = [int(p.read_text()) for p in (tmp_path / "seen").glob("*.peak")]
    assert len(peaks) == 4 and max(peaks) <= jobs
    # The pure scorer was answered in-process: it carries no sandbox report.
    exact = next(s for s in results if s.item.task.id == "exact")
    assert exact.result.isolation is None


def test_default_jobs_is_the_cores_and_zero_is_refused():
    assert LocalScorers().jobs == default_scorer_jobs() >= 1
    with pytest.raises(CompareTuiError, match="--scorer-jobs 0"):
        scorer_executor("local", 0, {})


def test_scorers_option_and_environment():
    assert parse_scorers("local") == ("local", None)
    assert parse_scorers("ray") == ("ray", "auto")
    assert parse_scorers("ray=ray://ray-head:10001") == ("ray", "ray://ray-head:10001")
    for bad in ("ray=", "cluster", "ray:auto"):
        with pytest.raises(CompareTuiError, match="give `local`"):
            parse_scorers(bad)
    executor = scorer_executor(None, 3, {"COMPARE_TUI_SCORERS": "local"})
    assert executor.describe() == {"kind": "local", "jobs": 3}
    assert where_scorers_run(executor.describe()) == "command scorers on this machine, 3 at once"


def test_set_files_keep_their_paths_and_modes_and_may_not_leave_the_folder(tmp_path):
    write_set_files(tmp_path, {"checks/run.sh": (b"#!/bin/sh\nexit 0\n", 0o755), "data.txt": (b"x", 0o644)})
    assert (tmp_path / "checks" / "run.sh").stat().st_mode & 0o777 == 0o755
    assert (tmp_path / "data.txt").read_bytes() == b"x"
    with pytest.raises(ValueError, match="leaves the set folder"):
        write_set_files(tmp_path, {"../escape": (b"", 0o644)})


def test_a_bad_scorer_wait_is_refused_with_what_to_give(monkeypatch):
    from compare_tui.scoring.ray_cluster import RayScorers

    monkeypatch.setenv("COMPARE_TUI_SCORER_WAIT_S", "soon")
    with pytest.raises(CompareTuiError, match="COMPARE_TUI_SCORER_WAIT_S='soon': give the seconds"):
        RayScorers("auto")
    monkeypatch.setenv("COMPARE_TUI_SCORER_WAIT_S", "2.5")
    assert RayScorers("auto").wait_s == 2.5


@given(st.text(min_size=1).filter(lambda a: a.strip() != ""))
def test_any_address_after_ray_is_taken_as_written_less_surrounding_space(address):
    assert parse_scorers(f"ray={address}") == ("ray", address.strip())


@given(st.text())
def test_anything_else_is_local_ray_or_refused_never_misread(choice):
    try:
        kind, address = parse_scorers(choice)
    except CompareTuiError as exc:
        assert "give `local`" in str(exc)
        return
    value = choice.strip()
    assert (kind, address) == (
        ("local", None) if value == "local" else ("ray", "auto") if value == "ray" else ("ray", value[4:].strip())
    )
    assert value in ("local", "ray") or value.startswith("ray=")

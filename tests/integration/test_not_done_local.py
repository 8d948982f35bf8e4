"""End to end, against the real embedded llama-server: stop it while a run goes, see the run
end `incomplete` with its remaining tasks not done (never scored), start it again, resume,
and get the figures of an uninterrupted run (issue 22, item 1)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from compare_tui.catalogue import load_catalogue
from compare_tui.engine import RunExecutor, RunOverrides, prepare_resume, prepare_run
from compare_tui.goldset import load_golden_set
from compare_tui.local import up
from compare_tui.report import build_report, load_report_inputs
from compare_tui.store import Store
from tests.support.stop_mid_run import StopServerMidRun

pytestmark = pytest.mark.integration

MODEL = "smollm2-135m"
SET = Path(__file__).resolve().parents[2] / "sample_sets" / "support-triage"
STOP_AFTER = 4
"""Attempts that finish before the server is stopped."""


def _figures(store: Store, run_id: str):
    row = build_report(load_report_inputs(store, run_id)).models[0]
    return row, {b.task_id: b.status for b in row.blocks}


def test_a_server_stopped_mid_run_leaves_tasks_not_done_and_a_resume_gets_the_uninterrupted_figures(
    local_cluster, tmp_path
):
    goldset = load_golden_set(SET)
    settings = RunOverrides(concurrency=1)  # one request at a time: the same batches each run
    entry = load_catalogue(local_cluster.catalogue_path).get(MODEL)
    with Store.open(tmp_path / "runs.sqlite") as store:
        straight = prepare_run(store, goldset, entry, settings, environ={})
        assert asyncio.run(RunExecutor(store, straight).execute()) == "completed"

        cut = prepare_run(store, goldset, entry, settings, environ={})
        observer = StopServerMidRun(MODEL, STOP_AFTER)
        try:
            status = asyncio.run(RunExecutor(store, cut, observer=observer).execute())
        finally:
            if observer.stopper is not None:
                observer.stopper.join()
            # The same port as before, so the pins still match. Named: the preferred port
            # (bundled model i takes base + i) may be another server's on a shared machine.
            port = int(entry.endpoint.rsplit(":", 1)[1].split("/")[0])
            again = up([MODEL], parallel=4, ctx=4096, port=port, catalogue_path=local_cluster.catalogue_path)
        assert status == "incomplete"
        run = store.get_run(cut.run.id)
        assert "tasks not done: nothing was measured" in run.error and "connect" in run.error
        row, blocks = _figures(store, cut.run.id)
        not_done = [task for task, status in blocks.items() if status == "missing"]
        assert len(not_done) >= len(goldset.tasks) - STOP_AFTER - 2  # at most a couple in flight answered
        assert row.counts.errored == 0 and row.pass_rate.scored == len(goldset.tasks) - len(not_done)
        assert dict(row.not_measured).get("connect", 0) >= 1

        assert again.server(MODEL).endpoint == entry.endpoint
        resumed = prepare_resume(store, cut.run.id, goldset, entry, environ={})
        assert asyncio.run(RunExecutor(store, resumed).execute()) == "completed"

        straight_row, straight_blocks = _figures(store, straight.run.id)
        resumed_row, resumed_blocks = _figures(store, cut.run.id)
    assert resumed_blocks == straight_blocks  # task by task, the outcomes of an uninterrupted run
    assert resumed_row.pass_rate == straight_row.pass_rate
    assert (resumed_row.counts.missing, resumed_row.not_measured) == (0, ())

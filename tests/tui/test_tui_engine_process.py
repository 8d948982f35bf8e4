"""The TUI's engine in a child process (`ProcessEngineSession`) against the fake server over
real HTTP: the same reports reach the tally and the screen as from the in-process session,
cancel leaves the run interrupted, and a child that dies is an error, never a hang."""

from __future__ import annotations

import os
import signal
import threading
import time

from compare_tui.engine import RunOverrides
from compare_tui.engine.reachability import Reachability
from compare_tui.store import Store
from compare_tui.tui import messages
from compare_tui.tui.engine_bridge import NewRunPlan
from compare_tui.tui.engine_process import ProcessEngineSession
from compare_tui.tui.live_tally import LiveTally
from compare_tui.tui.workspace import Workspace
from compare_tui.vocabulary import Reach
from tests.support.builders import write_set
from tests.support.fake_openai import FakeServer, text
from tests.tui.test_tui_data import write_catalogue


def session(tmp_path, store, url, tasks: int, concurrency: int = 4):
    write_set(tmp_path / "sets" / "s", {f"t{i:02d}": "billing" for i in range(tasks)}, max_tokens=8)
    workspace = Workspace(
        store=store,
        catalogue_path=write_catalogue(tmp_path / "models.toml", url),
        sets_dir=tmp_path / "sets",
        reviewer="tester",
        probe=lambda endpoint: Reachability(Reach.HEALTHY, 200),
    )
    posted: list = []
    tally = LiveTally([("fake-a", 0, "")])
    plan = NewRunPlan(tmp_path / "sets" / "s", ("fake-a",), RunOverrides(concurrency=concurrency))
    return ProcessEngineSession(workspace, plan, tally, posted.append), tally, posted


def in_thread(target):
    box: dict = {}

    def body():
        try:
            box["result"] = target()
        except BaseException as exc:  # noqa: BLE001 - inspected by the test
            box["error"] = exc

    thread = threading.Thread(target=body)
    thread.start()
    return thread, box


def wait_for(condition, timeout_s: float = 60.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def test_a_session_in_a_child_process_reports_like_one_in_this_process(tmp_path):
    with FakeServer(default=text("billing")) as server, Store.open(tmp_path / "runs.sqlite") as store:
        engine, tally, posted = session(tmp_path, store, server.url, tasks=12)
        assert engine.run() == ("completed",)
        kinds = [type(m) for m in posted]
        assert kinds == [messages.RunsPrepared, messages.RunEnded, messages.SessionEnded]
        run_id = posted[0].run_ids[0]
        assert engine.comparison_id == posted[0].comparison_id and engine.pid != os.getpid()
        view = tally.snapshot()[0]
        assert (view.state, view.done, view.total, view.counts["pass"]) == ("completed", 12, 12, 12)
        assert store.get_run(run_id).status == "completed" and len(store.attempts_for_run(run_id)) == 12


def test_cancel_reaches_the_child_and_the_run_is_interrupted(tmp_path):
    slow = text("billing", chunk_chars=1, chunk_delay_s=0.03)
    with FakeServer(default=slow) as server, Store.open(tmp_path / "runs.sqlite") as store:
        engine, tally, posted = session(tmp_path, store, server.url, tasks=40, concurrency=2)
        thread, box = in_thread(engine.run)
        wait_for(lambda: tally.snapshot()[0].done >= 3)
        engine.cancel()
        thread.join(60)
        assert box.get("result") == ("interrupted",), box
        run = store.get_run(posted[0].run_ids[0])
        assert run.status == "interrupted" and "resume" in (run.error or "")
        assert isinstance(posted[-1], messages.SessionEnded) and posted[-1].cancelled


def test_a_child_that_dies_is_an_error_with_the_session_ended(tmp_path):
    slow = text("billing", chunk_chars=1, chunk_delay_s=0.03)
    with FakeServer(default=slow) as server, Store.open(tmp_path / "runs.sqlite") as store:
        engine, tally, posted = session(tmp_path, store, server.url, tasks=40, concurrency=2)
        thread, box = in_thread(engine.run)
        wait_for(lambda: tally.snapshot()[0].done >= 3)
        os.kill(engine.pid, signal.SIGKILL)
        thread.join(60)
        assert isinstance(box.get("error"), RuntimeError), box
        assert "ended unexpectedly" in str(box["error"]) and "r resumes" in str(box["error"])
        assert isinstance(posted[-1], messages.SessionEnded) and posted[-1].statuses == ("interrupted",)
        # What finished is stored; the run can be resumed.
        run_id = posted[0].run_ids[0]
        assert len(store.attempts_for_run(run_id)) >= 3 and store.get_run(run_id).status == "running"


def test_a_refusal_in_the_child_arrives_as_in_process(tmp_path):
    with FakeServer(default=text("billing")) as server, Store.open(tmp_path / "runs.sqlite") as store:
        engine, tally, posted = session(tmp_path, store, server.url, tasks=2)
        (tmp_path / "models.toml").unlink()
        assert engine.run() == ()
        assert [type(m) for m in posted] == [messages.SessionRefused, messages.SessionEnded]
        assert "no model catalogue" in posted[0].reason

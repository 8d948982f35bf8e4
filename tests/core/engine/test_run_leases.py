"""One executor per run (issue 35): the run's lease in the store, its refusal, its takeover,
and the audit row committed before each request goes out.

Store-level rules first (a live holder refuses, a dead one is taken over, a lost lease fences
every write), then the real thing: two CLI processes racing for one run against the loopback
fake server (the second refused, nothing sent), a `kill -9`'d executor's lease taken over, the
TUI's refusal dialog, and an experiment leaving a cell to the live process executing it.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time

import pytest

from compare_tui.store import AttemptRecord, Holder, HolderSeen, LeaseLostError, RunLeasedError, RunStatus, Store
from compare_tui.store.holders import is_stale, live_lease, this_process
from compare_tui.store.leases import LEASE_EXPIRY_S, stale_reason
from compare_tui.store.rows import audit_values
from tests.core.engine.test_chaos_helpers import cli, cli_env, count_attempts, first_run_id, task_ids, write_catalogue
from tests.support.builders import write_set
from tests.support.fake_openai import FakeServer, text


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def _store_with_run(tmp_path) -> tuple[Store, str]:
    from tests.tui.test_tui_data import INTERRUPTED_RUN, build_store

    store, _ = build_store(tmp_path)
    return store, INTERRUPTED_RUN


def _sent_row(run_id: str) -> dict:
    return audit_values(
        run_id=run_id, task_id="t1", attempt=1, endpoint="http://127.0.0.1:9/v1", model="m", at="2026-01-01T00:00:00Z"
    )


# ---------------------------------------------------------------- the rules, in the store


def test_a_live_holder_refuses_a_second_and_nothing_changes(tmp_path):
    store, run_id = _store_with_run(tmp_path)
    with store:
        first, second = this_process(), this_process()  # two sessions of one process: two holders
        assert store.take_lease(run_id, first, is_stale=is_stale) is None
        before = store.get_run(run_id).status
        with pytest.raises(RunLeasedError) as refused:
            store.take_lease(run_id, second, is_stale=is_stale)
        message = str(refused.value)
        assert f"run {run_id} is being executed by pid {os.getpid()} on {socket.gethostname()} since " in message
        assert "heartbeat" in message and "wait for it, or stop it" in message
        assert store.lease_of(run_id).token == first.token  # the refused one wrote nothing
        assert store.get_run(run_id).status == before
        assert live_lease(store, run_id) is not None
        store.release_lease(run_id, first)
        assert store.lease_of(run_id) is None and live_lease(store, run_id) is None


def test_a_dead_holders_lease_is_taken_over_and_its_requests_become_unknown(tmp_path):
    store, run_id = _store_with_run(tmp_path)
    with store:
        gone = Holder(socket.gethostname(), _dead_pid(), None, "gone-token")
        store.take_lease(run_id, gone, is_stale=is_stale)
        store.open_request(_sent_row(run_id), lease_token=gone.token)  # in flight when it died
        me = this_process()
        takeover = store.take_lease(run_id, me, is_stale=is_stale)
        assert takeover is not None and takeover.unknown_requests == 1
        assert f"pid {gone.pid} is not running" in takeover.reason
        assert "took over run" in takeover.sentence() and "outcome unknown" in takeover.sentence()
        assert [r.state for r in store.audit_for_run(run_id)] == ["unknown"]
        (stored,) = store.takeovers_of(run_id)  # read back typed, the holders' JSON decoded
        assert (stored.run_id, stored.reason, stored.unknown_requests) == (run_id, takeover.reason, 1)
        assert (stored.previous.host, stored.previous.pid) == (gone.host, gone.pid) and stored.previous.taken_at
        assert stored.holder == HolderSeen(me.host, me.pid)
        # The old holder, were it to wake, can send, store and finish nothing.
        with pytest.raises(LeaseLostError):
            store.open_request(_sent_row(run_id), lease_token=gone.token)
        with pytest.raises(LeaseLostError):
            store.update_run_status(run_id, RunStatus.COMPLETED, lease_token=gone.token)
        attempt = AttemptRecord(
            run_id=run_id, task_id="t1", attempt=1, outcome="pass", started_at="2026-01-01T00:00:00Z"
        )
        with pytest.raises(LeaseLostError):
            store.record_outcomes([([], attempt)], lease_token=gone.token)
        assert store.get_run(run_id).status == RunStatus.INTERRUPTED


def test_staleness_follows_the_stated_rule():
    now = 1_000_000.0
    lease = type("L", (), {"host": "here", "pid": 7, "process_start": "100", "heartbeat_s": now - 1, "run_id": "r"})()
    assert stale_reason(lease, "here", True, "100", now) is None  # alive, same process
    assert "not running" in stale_reason(lease, "here", False, None, now)
    assert "another process" in stale_reason(lease, "here", True, "999", now)  # the pid was reused
    assert stale_reason(lease, "elsewhere", False, None, now) is None  # another host: by heartbeat only
    lease.heartbeat_s = now - LEASE_EXPIRY_S - 1
    assert "no heartbeat" in stale_reason(lease, "elsewhere", True, None, now)


def test_a_request_row_is_committed_before_it_is_sent_and_completed_after(tmp_path):
    from compare_tui.engine import RunExecutor, RunOverrides, prepare_run
    from compare_tui.goldset import load_golden_set
    from tests.support.builders import hosted_entry

    seen: list[list[str]] = []
    set_path = write_set(tmp_path / "set", {"t1": "ok", "t2": "ok"})
    with Store.open(tmp_path / "runs.sqlite") as store:

        def script(body, count):
            # What the ledger holds while the server is being asked.
            seen.append([r["state"] for r in store.query("SELECT state FROM audit")])
            return text("ok")

        with FakeServer(script) as server:
            prepared = prepare_run(
                store, load_golden_set(set_path), hosted_entry(server.url), RunOverrides(concurrency=1)
            )
            import asyncio

            assert asyncio.run(RunExecutor(store, prepared).execute()) == "completed"
            received = sum(1 for r in server.requests if r.path.endswith("/chat/completions"))
        assert seen == [["sent"], ["done", "sent"]]
        rows = store.audit_for_run(prepared.run.id)
        assert [r.state for r in rows] == ["done", "done"] and all(r.status == 200 for r in rows)
        assert len(rows) >= received == 2
        assert store.lease_of(prepared.run.id) is None  # released when the run stopped


# ---------------------------------------------------------------- two processes, one run


def _start_run(tmp_path, server, n_tasks: int):
    set_path = write_set(tmp_path / "set", {t: "ok" for t in task_ids(n_tasks)})
    models = write_catalogue(tmp_path / "models.toml", server.url)
    store = tmp_path / "runs.sqlite"
    env = cli_env(tmp_path / "state")
    argv = cli("run", str(set_path), "--model", "fake", "--models", str(models), "--store", str(store))
    proc = subprocess.Popen(
        argv + ["--concurrency", "2"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    deadline = time.monotonic() + 60
    while count_attempts(store) < 2 and time.monotonic() < deadline:
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.02)
    return proc, store, models, env, first_run_id(store)


N_RACE = 30


def _chat_requests(server) -> list:
    return [r for r in server.requests if r.path.endswith("/chat/completions")]


def _gated(gate: dict, slow_when=lambda body: True):
    """Answers that take 2 s while `gate["slow"]` holds (for requests `slow_when` picks), so
    the first executor is surely still executing while the test asks; then at once."""

    def script(body, count):
        slow = gate["slow"] and slow_when(body)
        return text("ok", chunk_chars=1, chunk_delay_s=2.0 if slow else 0.0)

    return script


def test_two_executors_racing_the_second_is_refused_and_sends_nothing(tmp_path):
    gate = {"slow": True}
    first_tasks = set(task_ids(4))  # answered at once: the run is under way before the race
    with FakeServer(_gated(gate, lambda body: body["messages"][-1]["content"] not in first_tasks)) as server:
        first, store_path, models, env, run_id = _start_run(tmp_path, server, N_RACE)
        resume = cli("run", "--resume", run_id, "--models", str(models), "--store", str(store_path))
        second = subprocess.run(resume, env=env, capture_output=True, text=True, timeout=120)
        assert second.returncode == 2, second.stderr
        assert f"run {run_id} is being executed by pid {first.pid} on {socket.gethostname()} since" in second.stderr
        assert "wait for it, or stop it" in second.stderr
        with Store.open(store_path) as store:
            assert store.get_run(run_id).status == RunStatus.RUNNING  # the refused one changed nothing
            report = subprocess.run(
                cli("report", run_id, "--format", "json", "--store", str(store_path)),
                env=env,
                capture_output=True,
                text=True,
                timeout=120,
            )
            assert "running since" in report.stdout and f"pid {first.pid}" in report.stdout, report.stdout
            assert "Resume the run" not in report.stdout
        gate["slow"] = False
        out, err = first.communicate(timeout=120)
        assert first.returncode == 0, err
        with Store.open(store_path) as store:
            assert store.get_run(run_id).status == RunStatus.COMPLETED
            audit = store.audit_for_run(run_id)
        asked = [r.task for r in _chat_requests(server)]
        assert sorted(asked) == task_ids(N_RACE)  # each task asked once: nothing came from the second
        assert len(audit) >= len(asked) and {r.state for r in audit} == {"done"}


def test_a_kill_9d_executors_lease_is_taken_over_by_the_next_resume(tmp_path):
    with FakeServer(default=text("ok", chunk_chars=1, chunk_delay_s=0.02)) as server:
        first, store_path, models, env, run_id = _start_run(tmp_path, server, 30)
        first.kill()
        first.communicate(timeout=60)
        resume = cli("run", "--resume", run_id, "--models", str(models), "--store", str(store_path))
        again = subprocess.run(resume, env=env, capture_output=True, text=True, timeout=300)
        assert again.returncode == 0, again.stderr
        assert f"took over run {run_id} from pid {first.pid}" in again.stderr
        assert "is not running" in again.stderr
        with Store.open(store_path) as store:
            assert store.get_run(run_id).status == RunStatus.COMPLETED
            assert store.lease_of(run_id) is None
            takeovers = store.takeovers_of(run_id)
            audit = store.audit_for_run(run_id)
        assert len(takeovers) == 1
        states = [r.state for r in audit]
        assert set(states) <= {"done", "unknown"} and states.count("unknown") == takeovers[0].unknown_requests
        assert len(audit) >= len(_chat_requests(server))  # every request the server saw is a row
        assert sorted({a for a in (r.task for r in _chat_requests(server))}) == task_ids(30)


# ---------------------------------------------------------------- the TUI and experiments


async def test_the_tui_shows_a_lease_refusal_as_a_dialog(tmp_path):
    from compare_tui.tui.screens.refusal import RefusalScreen
    from tests.integration.test_tui_flows import home_at
    from tests.support.home_app import settle
    from tests.tui.test_tui_data import INTERRUPTED_RUN

    async with home_at(tmp_path) as pilot:
        store = pilot.app.screen.workspace.store
        holder = this_process()  # another session (another terminal's `run --resume`) holds it
        store.take_lease(INTERRUPTED_RUN, holder, is_stale=is_stale)
        home = pilot.app.screen
        home.action_refresh()  # Home reads who executes each run with the runs
        await settle(pilot)
        for _ in range(10):
            if home._selected_run() is not None and home._selected_run().run.id == INTERRUPTED_RUN:
                break
            await pilot.press("down")
            await settle(pilot)
        assert home._selected_run().run.id == INTERRUPTED_RUN
        assert home._selected_run().running.startswith("running since ")  # shown instead of "R resumes it"
        await pilot.press("R")
        deadline = time.monotonic() + 60
        while not isinstance(pilot.app.screen, RefusalScreen) and time.monotonic() < deadline:
            await pilot.pause(0.05)
        assert isinstance(pilot.app.screen, RefusalScreen)
        assert f"run {INTERRUPTED_RUN} is being executed by pid {os.getpid()}" in pilot.app.screen.reason
        assert store.get_run(INTERRUPTED_RUN).status == RunStatus.INTERRUPTED  # nothing changed
        assert store.lease_of(INTERRUPTED_RUN).token == holder.token
        store.release_lease(INTERRUPTED_RUN, holder)


def test_an_experiment_skips_a_cell_whose_run_a_live_process_executes(tmp_path):
    gate = {"slow": True}  # the first arm's requests take 2 s until the second process is done
    with FakeServer(_gated(gate, lambda body: body.get("temperature") == 0)) as server:
        set_path = write_set(tmp_path / "set", {t: "ok" for t in task_ids(20)})
        models = write_catalogue(tmp_path / "models.toml", server.url)
        store_path = tmp_path / "runs.sqlite"
        env = cli_env(tmp_path / "state")
        base = ["--models", str(models), "--store", str(store_path)]
        arms = ["--arm", "fake temperature=0", "--arm", "fake temperature=0.5"]
        new = cli("experiment", "new", "exp", str(set_path), *arms, "--repeats", "1", "--concurrency", "2", *base)
        made = subprocess.run(new, env=env, capture_output=True, text=True, timeout=120)
        assert made.returncode == 0, made.stderr
        first = subprocess.Popen(
            cli("experiment", "run", "exp", *base), env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        deadline = time.monotonic() + 60
        while count_attempts(store_path) < 2 and time.monotonic() < deadline:
            assert first.poll() is None, first.communicate()
            time.sleep(0.02)
        run_id = first_run_id(store_path)
        second = subprocess.run(
            cli("experiment", "run", "exp", *base), env=env, capture_output=True, text=True, timeout=300
        )
        gate["slow"] = False
        out, err = first.communicate(timeout=300)
        assert first.returncode == 0, err
        assert second.returncode == 0, second.stderr
        said = f"arm 'fake [temperature=0]': skipped run {run_id} is being executed by pid {first.pid}"
        assert said in second.stderr, second.stderr
        arm_one = [r for r in _chat_requests(server) if r.body.get("temperature") == 0]
        assert sorted(r.task for r in arm_one) == task_ids(20)  # the leased cell was asked once
        with Store.open(store_path) as store:
            assert store.get_run(run_id).status == RunStatus.COMPLETED
            assert len(store.list_runs()) == 2  # one per arm: nothing launched twice


def test_the_tui_says_a_takeover_and_its_tally_is_untouched():
    from compare_tui.engine import LeaseTakenOver
    from compare_tui.tui import messages
    from compare_tui.tui.engine_bridge import TallyObserver
    from compare_tui.tui.live_tally import LiveTally

    posted: list = []
    tally = LiveTally([("m", 3, "")])
    TallyObserver(tally, posted.append).on_event(LeaseTakenOver("r1", "took over run r1 from pid 7 on vm (…)"))
    assert [type(m) for m in posted] == [messages.LeaseTakenOver] and "took over run r1" in posted[0].sentence
    assert [v.model_name for v in tally.snapshot()] == ["m"]

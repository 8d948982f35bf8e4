"""No request to a model endpoint goes through a proxy from the environment.

A proxy named in `HTTP_PROXY`/`HTTPS_PROXY`/`ALL_PROXY` would receive prompts, answers and
virtual keys. Here a loopback listener stands in for such a proxy while a golden-set run (with
each transport), a tool-call run, a judge run and every probe talk to a model endpoint; the
listener must see no connection, and the endpoint must see the requests.
"""

from __future__ import annotations

import asyncio
import socket
import threading

import pytest

from compare_tui.catalogue import load_catalogue
from compare_tui.engine import RunExecutor, RunOverrides, prepare_run
from compare_tui.judge import execute_judging, load_rubric, prepare_pair_judging
from compare_tui.local.server import get_json
from compare_tui.store import Store
from compare_tui.toolcall import RunRequest, RunSettings, execute, official_suite, select
from compare_tui.tui.health import probe_endpoint
from tests.core.judge.test_judge_support import FAST_RETRY, TASKS, add_run, consistent_judge, entry, golden, scored
from tests.support.builders import load, write_set
from tests.support.fake_openai import FakeServer, text

PROXY_VARS = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy")


class ProxyTrap:
    """A loopback listener that accepts and counts connections (and answers nothing)."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.sock.settimeout(0.1)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.connections = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            self.connections += 1
            conn.close()

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        self.sock.close()


@pytest.fixture
def proxy(monkeypatch):
    """The trap, named in every proxy variable (and nothing exempted by NO_PROXY)."""
    trap = ProxyTrap()
    for name in PROXY_VARS:
        monkeypatch.setenv(name, trap.url)
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    try:
        yield trap
    finally:
        trap.close()


@pytest.fixture
def store(tmp_path):
    with Store.open(tmp_path / "runs.sqlite") as s:
        yield s


def test_the_trap_catches_a_client_that_trusts_the_environment(proxy):
    # The test's own premise: an ordinary httpx client does go through the trap.
    import httpx

    with FakeServer(default=text("ok")) as server, pytest.raises(httpx.HTTPError):
        httpx.get(f"{server.url}/models", timeout=2.0)
    assert proxy.connections >= 1


def test_a_golden_set_run_ignores_the_proxy(tmp_path, store, proxy):
    goldset = load(write_set(tmp_path / "set", {"t1": "billing", "t2": "billing"}))
    with FakeServer(default=text("billing")) as server:
        prepared = prepare_run(store, goldset, entry("cand", server.url), RunOverrides(), environ={})
        assert asyncio.run(RunExecutor(store, prepared).execute()) == "completed"
        chats = [r for r in server.requests if r.path.endswith("/chat/completions")]
    assert proxy.connections == 0
    assert len(chats) == 2
    assert {a.outcome for a in store.attempts_for_run(prepared.run.id)} == {"pass"}


def test_a_tool_call_run_ignores_the_proxy(proxy):
    suite = official_suite()
    with FakeServer(default=text("no tool today")) as server:
        run = asyncio.run(
            execute(
                RunRequest(
                    entry("cand", server.url),
                    suite,
                    select(suite.scenarios, ["S01", "S14"]),
                    RunSettings(max_tokens=16, timeout_s=10.0),
                )
            )
        )
        chats = [r for r in server.requests if r.path.endswith("/chat/completions")]
    assert proxy.connections == 0
    assert len(chats) == 2 and len(run.results) == 2


def test_a_judge_run_ignores_the_proxy(tmp_path, store, proxy):
    goldset = golden(tmp_path)
    base = add_run(store, goldset, "base-model", {t: scored("bug") for t in TASKS})
    cand = add_run(store, goldset, "cand-model", {t: scored("billing") for t in TASKS})
    with FakeServer(consistent_judge) as judge:
        plan = prepare_pair_judging(
            store,
            store.get_run(base),
            store.get_run(cand),
            entry("judge-model", judge.url),
            load_rubric(None, "reference"),
            environ={},
        )
        tally = asyncio.run(execute_judging(store, plan, retry=FAST_RETRY))
        requests = len(judge.requests)
    assert proxy.connections == 0
    assert tally.requested == requests == 2 * len(TASKS) and tally.failed == 0


def test_the_probes_ignore_the_proxy(proxy):
    with FakeServer(default=text("ok")) as server:
        assert str(probe_endpoint(server.url)) == "healthy"  # the TUI's health check
        port = int(server.url.split(":")[2].split("/")[0])
        assert get_json(port, "/health")[0] == 200  # the local servers' health check
    assert proxy.connections == 0


@pytest.mark.integration
def test_runs_against_the_real_local_server_ignore_the_proxy(tmp_path, store, proxy, local_cluster):
    model = load_catalogue(local_cluster.catalogue_path).get("smollm2-135m")
    goldset = load(write_set(tmp_path / "set", {"t1": "billing", "t2": "billing"}, max_tokens=4))
    prepared = prepare_run(store, goldset, model, RunOverrides(), environ={})
    assert asyncio.run(RunExecutor(store, prepared).execute()) == "completed"
    assert {a.error_class for a in store.attempts_for_run(prepared.run.id)} == {None}

    suite = official_suite()
    run = asyncio.run(
        execute(RunRequest(model, suite, select(suite.scenarios, ["S01"]), RunSettings(max_tokens=8, timeout_s=240)))
    )
    assert [r.status for r in run.results] == [200]

    base = add_run(store, goldset, "base-model", {"t1": scored("bug"), "t2": scored("bug")})
    plan = prepare_pair_judging(
        store, store.get_run(base), store.get_run(prepared.run.id), model, load_rubric(None, "reference"), environ={}
    )
    tally = asyncio.run(execute_judging(store, plan, retry=FAST_RETRY))
    assert tally.requested == 4
    judge_rows = store.query("SELECT status FROM audit WHERE run_id IS NULL")
    assert [r["status"] for r in judge_rows] == [200] * 4
    assert proxy.connections == 0

"""Every request's audit row is committed as `sent` before the server sees the request, also
when the engine groups those rows with the attempts just finished into one transaction (many
requests in flight) and when a request is retried: the fake server reads the store through a
connection of its own (so only what is committed) as each request arrives."""

from __future__ import annotations

import asyncio
import sqlite3
import threading

import pytest

from compare_tui.engine import RunExecutor, RunOverrides, prepare_run
from compare_tui.engine.retry import RetryPolicy
from compare_tui.store import Store
from tests.support.builders import hosted_entry, load, write_set
from tests.support.fake_openai import FakeServer, http_error, text

FAST_RETRY = RetryPolicy(max_retries=2, base_s=0.01, cap_s=0.02)


@pytest.mark.parametrize("concurrency", [1, 8])
def test_each_requests_sent_row_is_committed_before_the_server_sees_it(tmp_path, concurrency):
    tasks = {f"t{i:02d}": "ok" for i in range(40)}
    path = tmp_path / "runs.sqlite"
    seen: list[tuple[str, int, list[str]]] = []
    lock = threading.Lock()

    def script(body, count):
        task_id = body["messages"][-1]["content"]
        # Another connection: it reads only committed rows.
        with sqlite3.connect(path) as other:
            states = [
                row[0]
                for row in other.execute("SELECT state FROM audit WHERE task_id = ? ORDER BY id", [task_id]).fetchall()
            ]
        with lock:
            seen.append((task_id, count, states))
        # Every fifth task fails once first (HTTP 500, retried): a second request, a second row.
        return http_error(500) if count == 0 and int(task_id[1:]) % 5 == 0 else text("ok")

    with Store.open(path) as store, FakeServer(script) as server:
        prepared = prepare_run(
            store,
            load(write_set(tmp_path / "set", tasks)),
            hosted_entry(server.url),
            RunOverrides(concurrency=concurrency),
        )
        assert asyncio.run(RunExecutor(store, prepared, retry=FAST_RETRY).execute()) == "completed"
        rows = store.audit_for_run(prepared.run.id)

    retried = {t for t in tasks if int(t[1:]) % 5 == 0}
    assert len(seen) == len(tasks) + len(retried)
    for task_id, count, states in seen:
        # This request's own row (the last) is there and `sent`; an earlier request of the same
        # attempt is too, still `sent` (it is completed with the attempt, in one transaction).
        assert states == ["sent"] * (count + 1), (task_id, count, states)
    assert [r.state for r in rows] == ["done"] * len(seen)
    assert sorted(r.status for r in rows if r.task_id in retried) == sorted([200, 500] * len(retried))

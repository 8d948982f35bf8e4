"""Crash anywhere, resume exactly once (issue 12): a CLI run against the fault-injecting
server is killed with SIGKILL at 5 random moments (a new process resumes each time); the end
state must equal an uninterrupted run on the same responses.

CI size: 100 tasks × 5 kills. The soak version (500 tasks × 20 kills) is
`bench/soak/chaos_resume.py`; it runs the same `chaos_run`.
"""

from __future__ import annotations

import os
from collections import Counter

import pytest

from compare_tui.engine.retry import RetryPolicy
from compare_tui.store import measured
from tests.core.engine.test_chaos_helpers import (
    chaos_run,
    comparable,
    fault_script,
    integrity,
    ledger_facts,
    report_json,
    run_in_process,
    task_ids,
    unexplained_retries,
    write_catalogue,
)
from tests.support.builders import write_set
from tests.support.fake_openai import FakeServer

N_TASKS = int(os.environ.get("COMPARE_TUI_CHAOS_TASKS", "100"))
KILLS = int(os.environ.get("COMPARE_TUI_CHAOS_KILLS", "5"))
SEED = int(os.environ.get("COMPARE_TUI_CHAOS_SEED", "12"))
ATTEMPTS = 2
CONCURRENCY = 4


@pytest.fixture
def server():
    # 2 deltas 5 ms apart per answer, so a process lives long enough to be killed mid-run.
    with FakeServer(fault_script(delay_s=0.005)) as srv:
        yield srv


def _uninterrupted(tmp_path, set_path, url):
    store = tmp_path / "straight.sqlite"
    # The plan's resets and 429s never answer: those tasks measure nothing and stay not done.
    return store, run_in_process(store, set_path, url, concurrency=CONCURRENCY, allow_incomplete=True)


def test_killed_five_times_the_run_ends_as_if_never_interrupted(tmp_path, server):
    ids = task_ids(N_TASKS)
    set_path = write_set(tmp_path / "set", {t: "ok" for t in ids}, attempts=ATTEMPTS)
    models = write_catalogue(tmp_path / "models.toml", server.url)

    straight_store, straight_id = _uninterrupted(tmp_path, set_path, server.url)
    straight = ledger_facts(straight_store, straight_id)
    requests_straight = sum(1 for r in server.requests if r.path.endswith("/chat/completions"))
    server_mark = len(server.requests)

    store = tmp_path / "chaos.sqlite"
    chaos = chaos_run(
        tmp_path,
        set_path,
        models,
        store,
        server,
        kills=KILLS,
        attempts_per_task=ATTEMPTS,
        expected_attempts=len(straight["attempts"]),
        seed=SEED,
        concurrency=CONCURRENCY,
    )
    assert len(chaos.kills) >= KILLS - 1, chaos.kills  # at most one process may finish first
    facts = ledger_facts(store, chaos.run_id)

    # Every task has exactly the attempts its responses allow: 1..k, with k the first pass or 2.
    assert straight["status"] == "incomplete"  # tasks whose every request fails are not done
    assert facts["status"] == straight["status"]
    not_done = {a.task_id for a in straight["attempts"] if not measured(a.outcome, a.error_class)}
    assert not_done and {int(t[1:]) % 25 for t in not_done} == {3, 12}
    assert len(set(facts["attempt_ids"])) == len(facts["attempt_ids"])  # no duplicates
    assert facts["attempt_keys"] == straight["attempt_keys"]  # same tasks, same attempt numbers
    assert sorted({t for t, _ in facts["attempt_keys"]}) == ids  # nothing lost
    for task in ids:
        numbers = [n for t, n in facts["attempt_keys"] if t == task]
        assert numbers == list(range(1, len(numbers) + 1)) and len(numbers) <= ATTEMPTS, task
    assert [(a.task_id, a.attempt, a.outcome, a.error_class) for a in facts["attempts"]] == [
        (a.task_id, a.attempt, a.outcome, a.error_class) for a in straight["attempts"]
    ]
    # Retry counts may differ, but only by connection-level retries: the fake server closes a
    # connection after a truncated answer without saying `Connection: close`, so a request
    # sent on that pooled connection meets a reset and is (rightly) retried and audited.
    for mine, theirs in zip(facts["attempts"], straight["attempts"]):
        if mine.retries != theirs.retries:
            assert unexplained_retries(store, mine) == [], mine.id

    # The audit ledger: every recorded attempt has at least its own requests (retries + 1);
    # no audit row belongs to an attempt that was never recorded.
    assert straight["extra_rows"] == 0 and not straight["short"] and not straight["orphans"]
    # Each audited request that got an HTTP status reached the server (a request on a stale
    # pooled connection is audited as `reset` without reaching it).
    assert requests_straight >= straight["answered_rows"]
    assert not facts["short"], facts["short"]
    assert not facts["orphans"], facts["orphans"]
    # Extra rows can only come from killed processes: requests in flight when the kill landed
    # (their rows were written before they were sent, and the next holder of the run's lease
    # marked them `unknown`), at most every in-flight request of each killed process, each
    # with its retries.
    max_retries = RetryPolicy().max_retries
    # Every process also asks each not-done task again (each with its retries): those rows
    # are the evidence of each try, replaced attempts and all.
    retried_not_done = chaos.processes * len(not_done) * (max_retries + 1)
    assert 0 <= facts["extra_rows"] <= len(chaos.kills) * CONCURRENCY * (max_retries + 1) + retried_not_done
    requests_chaos = sum(1 for r in server.requests[server_mark:] if r.path.endswith("/chat/completions"))
    assert requests_chaos >= facts["answered_rows"]
    # Every request that reached the server is an audit row, killed processes' included;
    # except for the tasks whose plan resets the connection before any answer: the chat client
    # writes such a request once more on a new connection within the same row (the server,
    # to the client, looks as if it never read it, as with a stale kept-alive connection).
    received = Counter(r.task for r in server.requests[server_mark:] if r.path.endswith("/chat/completions"))
    rows = Counter(task for (task, _), n in facts["audit_per_key"].items() for _ in range(n))
    short = {t: (rows[t], n) for t, n in received.items() if rows[t] < n and int(t[1:]) % 25 != 3}
    assert not short, short

    # The report equals the uninterrupted run's (ids, timestamps and latencies aside).
    assert comparable(report_json(store, chaos.run_id)) == comparable(report_json(straight_store, straight_id))
    assert integrity(store) == "ok"

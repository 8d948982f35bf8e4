"""Load (issue 12), CI size: 2,000 tasks at concurrency 64 against the zero-delay fake server
running as a separate process. Asserts correctness only (every task recorded exactly once,
every answer scored); speed, memory and event-loop lag are measured by
`bench/soak/load_soak.py` (50,000 tasks at concurrency 128) and never asserted here.
"""

from __future__ import annotations

from collections import Counter

from compare_tui.store import Store
from tests.core.engine.test_chaos_helpers import ServerProcess, run_in_process, task_ids
from tests.support.builders import write_set

N_TASKS = 2000
CONCURRENCY = 64


def test_two_thousand_tasks_at_concurrency_64_are_each_recorded_once(tmp_path):
    ids = task_ids(N_TASKS)
    set_path = write_set(tmp_path / "set", {t: "The quick brown fox." for t in ids}, max_tokens=8)
    store_path = tmp_path / "runs.sqlite"
    with ServerProcess("zero-delay") as server:
        run_id = run_in_process(store_path, set_path, server.url, concurrency=CONCURRENCY)
        assert server.proc.poll() is None  # the server survived the load
    with Store.open(store_path) as store:
        attempts = store.attempts_for_run(run_id)
        audit = store.audit_for_run(run_id)
        run = store.get_run(run_id)
    assert run.status == "completed" and run.settings["concurrency"] == CONCURRENCY
    assert len(attempts) == N_TASKS and sorted(a.task_id for a in attempts) == ids
    assert {a.id for a in attempts} == {f"{run_id}:{t}:1" for t in ids}  # once each, attempt 1
    assert Counter(a.outcome for a in attempts) == {"pass": N_TASKS}
    assert all(a.retries == 0 and a.error_class is None for a in attempts)
    assert len(audit) == N_TASKS and Counter(r.status for r in audit) == {200: N_TASKS}

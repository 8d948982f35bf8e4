"""Crash-anywhere soak (issue 12): a 500-task run against the fault-injecting server, killed
with SIGKILL at 20 random moments (a new `compare-tui run --resume` process each time), then
checked against an uninterrupted run on the same per-task responses. Same code as the CI test
(tests/core/engine/test_chaos_resume.py: 100 tasks × 5 kills); here the checks are reported, not asserted.

    PYTHONPATH=. .venv/bin/python bench/soak/chaos_resume.py [--tasks 500] [--kills 20] [--seed 12] \
        [--out bench/results/soak_chaos.md]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from compare_tui.engine.retry import RetryPolicy  # noqa: E402
from tests.core.engine.test_chaos_helpers import (  # noqa: E402
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
from tests.support.builders import write_set  # noqa: E402
from tests.support.fake_openai import FakeServer  # noqa: E402

ATTEMPTS, CONCURRENCY = 2, 4


def soak(tasks: int, kills: int, seed: int) -> dict:
    with tempfile.TemporaryDirectory() as folder, FakeServer(fault_script(delay_s=0.005)) as server:
        tmp = Path(folder)
        ids = task_ids(tasks)
        set_path = write_set(tmp / "set", {t: "ok" for t in ids}, attempts=ATTEMPTS)
        models = write_catalogue(tmp / "models.toml", server.url)
        straight_store = tmp / "straight.sqlite"
        straight_id = run_in_process(
            straight_store, set_path, server.url, concurrency=CONCURRENCY, allow_incomplete=True
        )  # the plan's resets and 429s never answer
        straight = ledger_facts(straight_store, straight_id)
        mark = len(server.requests)
        store = tmp / "chaos.sqlite"
        chaos = chaos_run(
            tmp,
            set_path,
            models,
            store,
            server,
            kills=kills,
            attempts_per_task=ATTEMPTS,
            expected_attempts=len(straight["attempts"]),
            seed=seed,
            concurrency=CONCURRENCY,
            timeout_s=1800,
        )
        facts = ledger_facts(store, chaos.run_id)
        requests = sum(1 for r in server.requests[mark:] if r.path.endswith("/chat/completions"))
        retry_diffs = [(m, t) for m, t in zip(facts["attempts"], straight["attempts"]) if m.retries != t.retries]
        unexplained = [m.id for m, _ in retry_diffs if unexplained_retries(store, m)]
        per_task = Counter(t for t, _ in facts["attempt_keys"])
        return {
            "tasks": tasks,
            "kills_asked": kills,
            "kills": chaos.kills,
            "processes": chaos.processes,
            "wall_s": chaos.wall_s,
            "status": facts["status"],
            "attempts": len(facts["attempts"]),
            "straight_attempts": len(straight["attempts"]),
            "duplicates": len(facts["attempt_ids"]) - len(set(facts["attempt_ids"])),
            "tasks_recorded": len(per_task),
            "tasks_missing": len(set(ids) - set(per_task)),
            "same_attempts": [(a.task_id, a.attempt, a.outcome, a.error_class) for a in facts["attempts"]]
            == [(a.task_id, a.attempt, a.outcome, a.error_class) for a in straight["attempts"]],
            "attempts_by_count": dict(sorted(Counter(per_task.values()).items())),
            "audit_rows": facts["audit_rows"],
            "audit_needed": facts["requests_of_recorded_attempts"],
            "extra_rows": facts["extra_rows"],
            "short": len(facts["short"]),
            "orphans": len(facts["orphans"]),
            "extra_bound": len(chaos.kills) * CONCURRENCY * (RetryPolicy().max_retries + 1),
            "requests": requests,
            "answered_rows": facts["answered_rows"],
            "retry_diffs": len(retry_diffs),
            "unexplained": unexplained,
            "report_equal": comparable(report_json(store, chaos.run_id))
            == comparable(report_json(straight_store, straight_id)),
            "integrity": integrity(store),
        }


def render(r: dict, argv: list[str]) -> str:
    kills = "; ".join(r["kills"])
    return f"""## Crash anywhere, resume exactly once: {r["tasks"]} tasks × {len(r["kills"])} SIGKILLs

Command: `PYTHONPATH=. .venv/bin/python bench/soak/chaos_resume.py {" ".join(argv)}`

Fault mix per task id (fixed by the id, so both runs get the same responses): 50% pass, 10% wrong answer
(fail → 2nd attempt), truncated stream, malformed SSE line, HTTP 400, error inside a 200 stream (10% each,
less the 8% below), connection reset before headers (4%, retried 3× then error), 429 with Retry-After 0 (4%).
Concurrency {CONCURRENCY}, attempts {ATTEMPTS}.

| check | result |
|---|---|
| kills landed ({r["kills_asked"]} asked) | {len(r["kills"])} over {r["processes"]} processes, {r["wall_s"]:.0f} s |
| final status | {r["status"]} |
| tasks recorded / missing | {r["tasks_recorded"]} / {r["tasks_missing"]} |
| attempts (chaos vs uninterrupted) / duplicated ids | {r["attempts"]} vs {r["straight_attempts"]} / {r["duplicates"]} |
| tasks by number of attempts | {r["attempts_by_count"]} |
| same (task, attempt, outcome, error class) list as the uninterrupted run | {r["same_attempts"]} |
| report JSON equal to the uninterrupted run's (ids, times, latencies aside) | {r["report_equal"]} |
| audit rows / needed by recorded attempts (retries + 1 each) | {r["audit_rows"]} / {r["audit_needed"]} |
| attempts short of audit rows / audit rows of unrecorded attempts | {r["short"]} / {r["orphans"]} |
| extra audit rows (from killed processes) / bound (kills × concurrency × 4) | {r["extra_rows"]} / {r["extra_bound"]} |
| chat requests the server got / audit rows with an HTTP status | {r["requests"]} / {r["answered_rows"]} |
| attempts whose retry count differs from the uninterrupted run / unexplained | {r["retry_diffs"]} / {len(r["unexplained"])} |
| PRAGMA integrity_check | {r["integrity"]} |

Kill moments: {kills}.
"""


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tasks", type=int, default=500)
    parser.add_argument("--kills", type=int, default=20)
    parser.add_argument("--seed", type=int, default=12)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    text = render(soak(args.tasks, args.kills, args.seed), sys.argv[1:])
    print(text)
    if args.out:
        args.out.write_text(text)


if __name__ == "__main__":
    main()

"""Two writers on one store (issue 12): a CLI run and review labels saved the way the TUI's
review screen saves them (`Store.add_review`, from a worker thread), from another process and
from a thread, all at once. No "database is locked" reaches anyone and no write is lost.
"""

from __future__ import annotations

import subprocess
import sys
import threading
import time

from compare_tui.store import ReviewRecord, Store
from tests.core.engine.test_chaos_helpers import (
    ROOT,
    cli,
    cli_env,
    count_attempts,
    first_run_id,
    integrity,
    task_ids,
    write_catalogue,
)
from tests.support.builders import write_set
from tests.support.fake_openai import FakeServer, text

N_TASKS = 300

# Another process saving verdicts as fast as a (very fast) reviewer could, until told to stop.
REVIEWER = r"""
import sys, pathlib
from compare_tui.store import ReviewRecord, Store
store_path, run_id, stop = sys.argv[1], sys.argv[2], pathlib.Path(sys.argv[3])
saved = 0
with Store.open(store_path) as store:
    while not stop.exists():
        store.add_review(ReviewRecord(run_id=run_id, task_id=f"t{saved % 300:04d}", verdict="pass",
                                      note=f"process {saved}", reviewer="proc"))
        saved += 1
print(saved)
"""


def test_a_run_and_review_labels_write_the_same_store_at_once(tmp_path):
    with FakeServer(default=text("ok", chunk_chars=1, chunk_delay_s=0.02)) as server:
        ids = task_ids(N_TASKS)
        set_path = write_set(tmp_path / "set", {t: "ok" for t in ids})
        models = write_catalogue(tmp_path / "models.toml", server.url)
        store_path = tmp_path / "runs.sqlite"
        env = cli_env(tmp_path / "state")
        run = subprocess.Popen(
            cli(
                "run",
                str(set_path),
                "--model",
                "fake",
                "--models",
                str(models),
                "--store",
                str(store_path),
                "--concurrency",
                "4",
            ),
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        deadline = time.monotonic() + 60
        while not (run_id := first_run_id(store_path)) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert run_id, "the run never appeared in the store"
        stop = tmp_path / "stop"
        reviewer = subprocess.Popen(
            [sys.executable, "-c", REVIEWER, str(store_path), run_id, str(stop)],
            env=env,
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        thread_saved: list[int] = []
        thread_errors: list[BaseException] = []

        def tui_worker() -> None:  # what the review screen's `@work(thread=True)` save does
            try:
                with Store.open(store_path) as store:
                    while not stop.exists():
                        store.add_review(
                            ReviewRecord(
                                run_id=run_id,
                                task_id=ids[len(thread_saved) % N_TASKS],
                                verdict="fail",
                                note="thread",
                                reviewer="thread",
                            )
                        )
                        thread_saved.append(1)
            except BaseException as exc:  # noqa: BLE001 - reported by the assert below
                thread_errors.append(exc)

        worker = threading.Thread(target=tui_worker)
        worker.start()
        out, err = run.communicate(timeout=120)
        overlapped = count_attempts(store_path)
        stop.touch()
        worker.join(60)
        rev_out, rev_err = reviewer.communicate(timeout=60)

    assert run.returncode == 0, err
    assert reviewer.returncode == 0, rev_err
    assert not thread_errors, thread_errors
    everything = out + err + rev_out + rev_err
    assert "locked" not in everything.lower() and "Traceback" not in everything
    process_saved = int(rev_out.strip())
    assert process_saved > 0 and len(thread_saved) > 0 and overlapped == N_TASKS
    with Store.open(store_path) as store:
        attempts = store.attempts_for_run(run_id)
        history = store.review_history(run_id)
        finished_at = store.get_run(run_id).finished_at
        assert store.get_run(run_id).status == "completed"
    assert sorted(a.task_id for a in attempts) == ids  # every task once
    assert len(history) == process_saved + len(thread_saved)  # no verdict lost
    assert sum(r.reviewer == "proc" for r in history) == process_saved
    # They really overlapped: verdicts from both writers were saved while the run was writing.
    assert min(r.at for r in history if r.reviewer == "proc") < finished_at
    assert min(r.at for r in history if r.reviewer == "thread") < finished_at
    assert integrity(store_path) == "ok"

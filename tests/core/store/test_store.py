"""The run store: records round-trip, resume keys, listing, migrations, refusals, concurrency."""

from __future__ import annotations

import multiprocessing
import os
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from compare_tui.scoring.result import Answer, Outcome, ToolCall
from compare_tui.store import (
    CURRENT_VERSION,
    PROVENANCE_ATTESTED,
    AmbiguousIdError,
    AttemptRecord,
    AuditRow,
    ComparisonRecord,
    ReviewRecord,
    RunNotFoundError,
    RunRecord,
    RunStatus,
    Store,
    StoreError,
    connection,
    rows,
    task_outcome,
    tool_calls_of,
)
from compare_tui.store.errors import translate
from compare_tui.vocabulary import ErrorClass

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture
def store(tmp_path: Path):
    with Store.open(tmp_path / "runs.sqlite") as opened:
        yield opened


def full_run(**overrides) -> RunRecord:
    fields = dict(
        id="run-aaaa",
        status="running",
        created_at="2026-01-02T03:04:05.123456+00:00",
        started_at="2026-01-02T03:04:06Z",
        finished_at=None,
        goldset_id="support-triage",
        goldset_name="Support ticket triage",
        goldset_version="1.0.0",
        goldset_digest="sha256:abc",
        goldset_path="/sets/support-triage",
        model_name="smollm2-135m",
        model_entry={
            "endpoint": "http://127.0.0.1:8081/v1",
            "key_env": "COMPARE_TUI_KEY",
            "files": {"m.gguf": "sha256:1"},
        },
        provenance=PROVENANCE_ATTESTED,
        cost_basis={"basis": "hardware", "usd_per_hour": 0.5},
        settings={"attempts": 2, "temperature": 0.0, "max_tokens": 64, "concurrency": 4, "timeout_s": 60},
        environment={"python": "3.11", "host": "box"},
        task_count=3,
        gpu={"measured": False, "reason": "no NVML"},
        error=None,
        comparison_id="cmp-1",
    )
    fields.update(overrides)
    return RunRecord(**fields)


def attempt(run_id: str, task_id: str, n: int = 1, outcome: str = "pass", **extra) -> AttemptRecord:
    return AttemptRecord(run_id=run_id, task_id=task_id, attempt=n, outcome=outcome, **extra)


# ------------------------------------------------------------------ round trips


def test_run_round_trip(store: Store) -> None:
    run = full_run()
    store.create_run(run)
    got = store.get_run("run-aaaa")
    assert got == run
    assert got.created_at == "2026-01-02T03:04:05.123456Z"  # normalised to one UTC form
    with pytest.raises(StoreError, match="already exists"):
        store.create_run(run)


def test_attempt_round_trip_every_field(store: Store) -> None:
    store.create_run(full_run())
    answer = Answer(
        text="billing", tool_calls=(ToolCall(name="f", arguments='{"a": 1}', id="c1"),), reasoning="thought"
    )
    record = attempt(
        "run-aaaa",
        "refund-01",
        2,
        "review",
        answer_text=answer.text,
        tool_calls=tool_calls_of(answer),
        reasoning=answer.reasoning,
        score_detail="needs a person",
        score_data={"k": [1, 2]},
        isolation={"network": True, "rlimits": "cpu"},
        error_class=None,
        error=None,
        ttft_ms=12.5,
        e2e_ms=80.25,
        prompt_tokens=None,
        completion_tokens=7,
        usage_missing=True,
        server_timings={"predicted_ms": 3.0},
        started_at="2026-01-02T03:04:05Z",
        finished_at="2026-01-02T03:04:06Z",
        retries=1,
        finish_reason="stop",
    )
    store.record_attempt(record)
    [got] = store.attempts_for_run("run-aaaa")
    assert got == record
    assert got.id == "run-aaaa:refund-01:2"
    assert got.outcome is Outcome.REVIEW
    assert got.answer() == answer


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    text=st.text(),
    tokens=st.none() | st.integers(0, 2**40),
    ms=st.none() | st.floats(allow_nan=False, allow_infinity=False),
    data=st.dictionaries(st.text(max_size=5), st.integers() | st.text(max_size=5), max_size=3),
)
def test_attempt_round_trip_property(store: Store, text, tokens, ms, data) -> None:
    if not store.list_runs():
        store.create_run(full_run())
    record = attempt("run-aaaa", "t", 1, "fail", answer_text=text, prompt_tokens=tokens, e2e_ms=ms, score_data=data)
    store.record_attempt(record)
    assert store.attempts_for_run("run-aaaa") == [record]


def test_audit_review_comparison_round_trip(store: Store) -> None:
    store.create_run(full_run())
    store.create_run(full_run(id="run-bbbb"))
    row = store.record_audit(
        AuditRow(
            run_id="run-aaaa",
            task_id="t",
            attempt=1,
            endpoint="http://e/v1",
            model="m",
            status=200,
            bytes_in=10,
            bytes_out=20,
            prompt_tokens=3,
            completion_tokens=4,
            duration_ms=5.5,
            error_class=None,
        )
    )
    assert row.id is not None and store.audit_for_run("run-aaaa") == [row]
    assert "headers" not in AuditRow.model_fields  # a key has nowhere to go
    review = store.add_review(ReviewRecord(run_id="run-aaaa", task_id="t", verdict="pass", note="fine", reviewer="ann"))
    assert store.review_history("run-aaaa") == [review]
    cmp = store.create_comparison(ComparisonRecord(id="cmp-1", name="A/B", run_ids=["run-bbbb", "run-aaaa"]))
    assert store.get_comparison("cmp") == cmp
    assert store.list_comparisons() == [cmp]
    with pytest.raises(StoreError, match="not in"):
        store.create_comparison(ComparisonRecord(run_ids=["nope"]))
    empty = store.create_comparison(ComparisonRecord(id="cmp-2", name="filled later"))
    assert store.set_comparison_runs(empty.id, ["run-aaaa"]).run_ids == ["run-aaaa"]
    store.delete_comparison("cmp-2")
    assert [c.id for c in store.list_comparisons()] == ["cmp-1"]
    store.delete_run("run-bbbb")  # a deleted run leaves the comparisons it was in
    assert store.get_comparison("cmp-1").run_ids == ["run-aaaa"]


# ------------------------------------------------------------------ resume and listing


def test_attempt_write_is_idempotent_and_completed_keys(store: Store) -> None:
    store.create_run(full_run())
    store.record_attempt(attempt("run-aaaa", "a", 1, "fail", answer_text="first"))
    store.record_attempt(attempt("run-aaaa", "a", 1, "pass", answer_text="second"))
    store.record_attempts([attempt("run-aaaa", "a", 2), attempt("run-aaaa", "b", 1, "error")])
    got = store.attempts_for_run("run-aaaa")
    assert [(a.task_id, a.attempt, a.answer_text) for a in got] == [("a", 1, "second"), ("a", 2, ""), ("b", 1, "")]
    assert store.completed_keys("run-aaaa") == {("a", 1), ("a", 2), ("b", 1)}
    assert store.completed_keys("run-aaaa", include_errors=False) == {("a", 1), ("a", 2)}
    with pytest.raises(StoreError, match="no such run"):
        store.record_attempt(attempt("ghost", "a"))


def test_list_newest_first_filters_and_prefix(store: Store) -> None:
    store.create_run(full_run(id="abc111", created_at="2026-01-01T00:00:00Z", model_name="x"))
    store.create_run(full_run(id="abc222", created_at="2026-01-03T00:00:00Z", status="completed"))
    store.create_run(full_run(id="def333", created_at="2026-01-02T00:00:00Z", goldset_id="other"))
    assert [r.id for r in store.list_runs()] == ["abc222", "def333", "abc111"]
    assert [r.id for r in store.list_runs(limit=1)] == ["abc222"]
    assert [r.id for r in store.list_runs(model="x")] == ["abc111"]
    assert [r.id for r in store.list_runs(status=RunStatus.COMPLETED)] == ["abc222"]
    assert [r.id for r in store.list_runs(goldset_id="other")] == ["def333"]
    assert store.get_run("def").id == "def333"
    with pytest.raises(AmbiguousIdError, match="abc222, abc111"):
        store.get_run("abc")
    with pytest.raises(RunNotFoundError):
        store.get_run("zzz")


def test_status_updates_and_field_updates(store: Store) -> None:
    store.create_run(full_run(status="pending", started_at=None))
    running = store.update_run_status("run-aaaa", "running", started_at="2026-03-01T00:00:00Z")
    assert running.started_at == "2026-03-01T00:00:00.000000Z" and running.finished_at is None
    stopped = store.update_run_status("run-aaaa", RunStatus.INCOMPLETE, error="server went away")
    assert stopped.finished_at is not None and stopped.error == "server went away"
    assert store.update_run_status("run-aaaa", "running").started_at == running.started_at
    updated = store.update_run("run-aaaa", gpu={"peak_mib": 900}, provenance="verified")
    assert store.get_run("run-aaaa") == updated and updated.gpu == {"peak_mib": 900}
    with pytest.raises(ValueError, match="created_at"):
        store.update_run("run-aaaa", created_at="2020-01-01T00:00:00Z")
    with pytest.raises(ValidationError):
        store.update_run("run-aaaa", status="exploded")
    with pytest.raises(RunNotFoundError):
        store.update_run_status("missing", "running")


def test_delete_cascades_and_summary(store: Store) -> None:
    store.create_run(full_run(task_count=5))
    store.record_attempts(
        [
            attempt("run-aaaa", "a", 1, "fail"),
            attempt("run-aaaa", "a", 2, "pass"),
            attempt("run-aaaa", "b", 1, "review"),
            attempt("run-aaaa", "c", 1, "error"),
            attempt("run-aaaa", "d", 1, "fail"),
        ]
    )
    store.add_review(ReviewRecord(run_id="run-aaaa", task_id="b", verdict="fail", at="2026-01-01T00:00:00Z"))
    store.add_review(ReviewRecord(run_id="run-aaaa", task_id="b", verdict="pass", at="2026-01-02T00:00:00Z"))
    assert store.reviews_for_run("run-aaaa")["b"].verdict == "pass"
    assert [r.verdict for r in store.review_history("run-aaaa", "b")] == ["fail", "pass"]
    summary = store.pass_rate_summary("run-aaaa")
    assert (summary.passed, summary.failed, summary.review, summary.errored) == (2, 1, 0, 1)
    assert summary.tasks_planned == 5 and summary.not_done == 1
    assert not hasattr(summary, "pass_rate")  # the one pass rate is the report's (human tasks excluded)
    store.record_audit(AuditRow(run_id="run-aaaa", endpoint="e", model="m"))
    store.delete_run("run-aaaa")
    assert store.attempts_for_run("run-aaaa") == [] and store.audit_for_run("run-aaaa") == []
    assert store.review_history("run-aaaa") == []
    with pytest.raises(RunNotFoundError):
        store.delete_run("run-aaaa")


def test_task_outcome_rule() -> None:
    assert task_outcome(["fail", "pass"]) == "pass"
    assert task_outcome(["fail", "review"]) == "review"
    assert task_outcome(["review"], "skip") == "review"
    assert task_outcome(["review"], "fail") == "fail"
    assert task_outcome(["error", "fail"]) == "fail"
    assert task_outcome(["error"]) == "error"


def test_records_refuse_keys_and_bad_ids() -> None:
    with pytest.raises(ValidationError, match="credential"):
        full_run(model_entry={"endpoint": "e", "api_key": "x"})
    with pytest.raises(ValidationError, match="API key"):
        full_run(settings={"nested": ["sk-abcdefghijklmnopqrstuvwx"]})
    with pytest.raises(ValidationError, match="attempt id"):
        AttemptRecord(id="wrong", run_id="r", task_id="t", attempt=1, outcome="pass")
    with pytest.raises(ValidationError, match="time zone"):
        full_run(created_at="2026-01-01T00:00:00")


# ------------------------------------------------------------------ migrations and refusals

V1_SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE runs (id TEXT PRIMARY KEY, status TEXT NOT NULL, created_at TEXT NOT NULL,
  started_at TEXT, finished_at TEXT, goldset_id TEXT NOT NULL, goldset_name TEXT NOT NULL DEFAULT '',
  goldset_version TEXT NOT NULL DEFAULT '', goldset_digest TEXT NOT NULL DEFAULT '',
  goldset_path TEXT NOT NULL DEFAULT '', model_name TEXT NOT NULL, model_entry TEXT NOT NULL DEFAULT '{}',
  provenance TEXT, cost_basis TEXT, settings TEXT NOT NULL DEFAULT '{}',
  environment TEXT NOT NULL DEFAULT '{}', task_count INTEGER NOT NULL DEFAULT 0, error TEXT);
CREATE TABLE attempts (id TEXT PRIMARY KEY, run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  task_id TEXT NOT NULL, attempt INTEGER NOT NULL, outcome TEXT NOT NULL,
  answer_text TEXT NOT NULL DEFAULT '', tool_calls TEXT NOT NULL DEFAULT '[]', reasoning TEXT,
  score_detail TEXT NOT NULL DEFAULT '', score_data TEXT NOT NULL DEFAULT '{}', error_class TEXT,
  error TEXT, ttft_ms REAL, e2e_ms REAL, prompt_tokens INTEGER, completion_tokens INTEGER,
  usage_missing INTEGER NOT NULL DEFAULT 0, started_at TEXT, finished_at TEXT,
  retries INTEGER NOT NULL DEFAULT 0, finish_reason TEXT);
CREATE INDEX attempts_by_run ON attempts(run_id, task_id, attempt);
CREATE INDEX runs_by_created ON runs(created_at);
INSERT INTO meta VALUES ('app', 'compare-tui'), ('schema_version', '1');
INSERT INTO runs (id, status, created_at, goldset_id, model_name, task_count)
  VALUES ('old1', 'completed', '2025-06-01T00:00:00.000000Z', 'support-triage', 'm', 1);
INSERT INTO attempts (id, run_id, task_id, attempt, outcome, answer_text, prompt_tokens)
  VALUES ('old1:t:1', 'old1', 't', 1, 'pass', 'billing', 12);
"""


def test_migrates_a_hand_built_v1_store(tmp_path: Path) -> None:
    path = tmp_path / "v1.sqlite"
    with sqlite3.connect(path) as conn:
        conn.executescript(V1_SCHEMA)
    conn.close()
    with Store.open(path) as store:
        assert store.schema_version == CURRENT_VERSION
        run = store.get_run("old1")
        assert run.gpu is None and run.comparison_id is None and run.status is RunStatus.COMPLETED
        [old] = store.attempts_for_run("old1")
        assert (old.answer_text, old.prompt_tokens, old.isolation, old.server_timings) == ("billing", 12, None, None)
        store.add_review(ReviewRecord(run_id="old1", task_id="t", verdict="pass"))  # v2 table works
        store.update_run("old1", gpu={"measured": False, "reason": "hosted"})
    with Store.open(path) as again:  # reopening a current store changes nothing
        assert again.get_run("old1").gpu == {"measured": False, "reason": "hosted"}


def _refused(path: Path, match: str) -> None:
    before = path.read_bytes()
    listing = sorted(os.listdir(path.parent))
    with pytest.raises(StoreError, match=match):
        Store.open(path)
    assert path.read_bytes() == before, "a refused file must be left byte-for-byte unchanged"
    assert sorted(os.listdir(path.parent)) == listing, "no -wal/-shm left beside a refused file"


def test_random_bytes_are_not_a_store(tmp_path: Path) -> None:
    path = tmp_path / "runs.sqlite"
    path.write_bytes(os.urandom(4096))
    _refused(path, r"is not a compare-tui store \(not an SQLite database\); move it aside or pass --store")


def test_damaged_sqlite_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "runs.sqlite"
    path.write_bytes(b"SQLite format 3\x00" + os.urandom(4080))
    _refused(path, "damaged|not a compare-tui store")


def test_foreign_sqlite_database_is_never_touched(tmp_path: Path) -> None:
    path = tmp_path / "notes.db"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE notes (body TEXT)")
        conn.execute("INSERT INTO notes VALUES ('mine')")
    conn.close()
    _refused(path, "not a compare-tui store .*notes")
    with sqlite3.connect(path) as conn:  # someone else's `meta` table is not our marker either
        conn.execute("CREATE TABLE meta (key TEXT, value TEXT)")
        conn.execute("INSERT INTO meta VALUES ('app', 'other-tool')")
    conn.close()
    _refused(path, "not a compare-tui store")


def test_store_from_a_newer_version_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "runs.sqlite"
    Store.open(path).close()
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE meta SET value = '99' WHERE key = 'schema_version'")
    conn.close()
    _refused(path, "newer compare-tui .*v99.*upgrade compare-tui")


def test_a_folder_is_refused(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="is a folder"):
        Store.open(tmp_path)


def test_opening_creates_parent_folders_and_uses_wal(tmp_path: Path) -> None:
    path = tmp_path / "a" / "b" / "runs.sqlite"
    with Store.open(path) as store:
        conn = store._database()
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1
        assert conn.execute("PRAGMA synchronous").fetchone()[0] == 1  # NORMAL
        assert conn.execute("PRAGMA busy_timeout").fetchone()[0] >= 5000
    with pytest.raises(StoreError, match="closed"):
        store.list_runs()


# ------------------------------------------------------------------ failures a user must understand


def test_disk_full_becomes_a_store_error(store: Store) -> None:
    store.create_run(full_run())
    conn = store._database()
    pages = conn.execute("PRAGMA page_count").fetchone()[0]
    conn.execute(f"PRAGMA max_page_count = {pages + 2}")  # the file may not grow: as if the disk were full
    with pytest.raises(StoreError, match=r"disk is full.*--resume RUN_ID"):
        for n in range(1, 50):
            store.record_attempt(attempt("run-aaaa", "t", n, answer_text="x" * 20_000))


def test_read_only_store_error_is_explained(tmp_path: Path) -> None:
    path = tmp_path / "runs.sqlite"
    Store.open(path).close()
    ro = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    with pytest.raises(sqlite3.OperationalError) as caught:
        ro.execute("INSERT INTO meta VALUES ('x', 'y')")
    ro.close()
    assert "read-only" in str(translate(caught.value, path))


def test_write_waits_out_another_writer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # SQLite's own wait is made tiny so the store's retry loop is what gets the write through.
    monkeypatch.setattr(connection, "BUSY_TIMEOUT_S", 0.05)
    path = tmp_path / "runs.sqlite"
    with Store.open(path) as store:
        store.create_run(full_run())
        other = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        other.execute("BEGIN IMMEDIATE")
        threading.Timer(0.3, lambda: other.execute("COMMIT")).start()
        store.record_attempt(attempt("run-aaaa", "t"))
        assert store.completed_keys("run-aaaa") == {("t", 1)}
        other.close()


def test_threads_share_one_store(store: Store) -> None:
    store.create_run(full_run())

    def write(worker: int) -> None:
        for n in range(1, 26):
            store.record_attempt(attempt("run-aaaa", f"w{worker}", n))

    threads = [threading.Thread(target=write, args=(w,)) for w in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(store.completed_keys("run-aaaa")) == 100


def _write_many(path: str, run_id: str, count: int, start: multiprocessing.synchronize.Barrier) -> None:
    # Both processes also race to create and migrate the (not yet existing) store file.
    with Store.open(path) as store:
        store.create_run(full_run(id=run_id))
        start.wait(60)  # both processes write at the same time, not one after the other
        for n in range(count):
            store.record_attempt(attempt(run_id, f"task-{n:04d}", 1, answer_text="a" * 200))


def test_two_processes_write_concurrently(tmp_path: Path) -> None:
    path = tmp_path / "fresh" / "runs.sqlite"
    # fork (where there is one) spares each child re-importing pydantic and pytest; no
    # connection is open in this process to be inherited.
    ctx = multiprocessing.get_context("fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn")
    start = ctx.Barrier(2)
    workers = [ctx.Process(target=_write_many, args=(str(path), f"proc{i}", 500, start)) for i in (1, 2)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(120)
    assert [w.exitcode for w in workers] == [0, 0]
    with Store.open(path) as store:
        assert [len(store.attempts_for_run(f"proc{i}")) for i in (1, 2)] == [500, 500]


def test_nothing_is_opened_at_import(tmp_path: Path) -> None:
    env = {
        **os.environ,
        "HOME": str(tmp_path),
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "COMPARE_TUI_STORE": str(tmp_path / "runs.sqlite"),
        "PYTHONPATH": str(REPO),
    }
    code = (
        "import sys, compare_tui.store; "
        "assert not {'textual', 'rich'} & set(sys.modules), 'store imported a UI library'"
    )
    subprocess.run([sys.executable, "-c", code], env=env, check=True, cwd=tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_timestamps_keep_their_one_spelling(monkeypatch):
    # utc_now spells the second once and the microseconds each call (cheaper); it must stay
    # strftime's spelling, or stored timestamps would stop sorting and comparing as text.
    from datetime import UTC, datetime

    import compare_tui.store.records as records

    moments = (
        datetime(2026, 12, 6, 4, 12, 0, 0, tzinfo=UTC),
        datetime(2026, 12, 6, 4, 12, 0, 999_999, tzinfo=UTC),
        datetime(2026, 12, 6, 4, 12, 1, 5, tzinfo=UTC),
        datetime(2031, 1, 2, 3, 4, 5, 678, tzinfo=UTC),
    )
    for moment in moments:
        nanos = int(moment.timestamp()) * 1_000_000_000 + moment.microsecond * 1000 + 417
        monkeypatch.setattr(records.time, "time_ns", lambda n=nanos: n)
        assert records.utc_now() == moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


# ------------------------------------------------------------------ the engine's unvalidated rows

_ATTEMPT_FIELDS = st.fixed_dictionaries(
    {
        "run_id": st.just("run-aaaa"),
        "task_id": st.text(min_size=1, max_size=8),
        "attempt": st.integers(1, 5),
        "outcome": st.sampled_from(["pass", "fail", "review", "error", *Outcome]),
        "started_at": st.just("2026-12-06T04:12:00.000000Z"),
    },
    optional={
        "answer_text": st.text(max_size=20),
        "reasoning": st.none() | st.text(max_size=5),
        "tool_calls": st.lists(
            st.fixed_dictionaries(
                {"id": st.none() | st.text(max_size=3), "name": st.text(max_size=5), "arguments": st.text(max_size=8)}
            ),
            max_size=2,
        ),
        "score_data": st.dictionaries(st.text(max_size=4), st.integers() | st.text(max_size=4), max_size=3),
        "isolation": st.none() | st.just({"kind": "bwrap"}),
        "error_class": st.none() | st.just("reset") | st.sampled_from(list(ErrorClass)),
        "ttft_ms": st.none() | st.floats(0, 1e4),
        "prompt_tokens": st.none() | st.integers(0, 10**6),
        "usage_missing": st.booleans(),
        "server_timings": st.none() | st.just({"predicted_ms": 1.5}),
        "retries": st.integers(0, 3),
        "finished_at": st.just("2026-12-06T04:12:01.000000Z"),
    },
)


@settings(max_examples=200, deadline=None)
@given(_ATTEMPT_FIELDS)
def test_the_engines_unvalidated_attempt_row_is_the_validated_records_row(fields):
    # The engine writes `attempt_values` rows without building a record (its hot path):
    # they must be exactly what the validated record would have written.
    row = rows.attempt_values(**fields)
    assert row == rows.attempt_row(AttemptRecord(**fields))
    assert {type(value) for value in row.values()} <= {str, int, float, type(None)}  # what SQLite stores as given


def test_an_unvalidated_row_refuses_a_column_the_table_lacks():
    with pytest.raises(KeyError, match="no column 'colour'"):
        rows.attempt_values(run_id="r", task_id="t", attempt=1, outcome="pass", colour="red")
    with pytest.raises(KeyError, match="no column 'colour'"):
        rows.audit_values(at="2026-12-06T04:12:00.000000Z", endpoint="e", model="m", colour="red")


def test_the_engines_audit_row_has_every_column_of_the_validated_one():
    from compare_tui.engine.audit import audit_row, audit_values_of
    from compare_tui.engine.exchange import Exchange

    ex = Exchange(status=200, bytes_in=10, bytes_out=5, sent_ns=0, ended_ns=2_000_000)
    fast = audit_values_of(ex, endpoint="http://e/v1", model="m", task_id="t", attempt=1, run_id="run-aaaa")
    slow = rows.to_row(
        audit_row(ex, endpoint="http://e/v1", model="m", task_id="t", attempt=1, run_id="run-aaaa"),
        columns=rows.AUDIT_COLUMNS,
    )
    assert set(fast) == set(rows.AUDIT_COLUMNS)
    assert {k: v for k, v in fast.items() if k != "at"} == {k: v for k, v in slow.items() if k != "at"}


_AUDIT_FIELDS = st.fixed_dictionaries(
    {"at": st.just("2026-12-06T04:12:00.000000Z"), "endpoint": st.text(min_size=1, max_size=8), "model": st.just("m")},
    optional={
        "task_id": st.none() | st.text(max_size=5),
        "attempt": st.none() | st.integers(1, 5),
        "status": st.none() | st.integers(100, 599),
        "bytes_in": st.none() | st.integers(0, 10**6),
        "duration_ms": st.none() | st.floats(0, 1e5),
        "error_class": st.none() | st.sampled_from([c.value for c in ErrorClass]),
    },
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(_ATTEMPT_FIELDS, _AUDIT_FIELDS)
def test_a_row_written_by_the_engines_fast_path_reads_back_as_the_record(store: Store, fields, audit) -> None:
    # One write path: the unvalidated rows the engine commits (`attempt_values`, `audit_values`)
    # come back from the store as exactly the records the validated path would have written,
    # whole (`attempts_for_run`, `audit_for_run`) and narrow (`attempt_columns`, typed).
    if not store.list_runs():
        store.create_run(full_run())
    request = rows.audit_values(**audit, run_id="run-aaaa")
    store.record_outcomes([([request], rows.attempt_values(**fields))])
    expected = AttemptRecord(**fields)
    assert [a for a in store.attempts_for_run("run-aaaa") if a.id == expected.id] == [expected]
    assert store.audit_for_run("run-aaaa")[-1].model_dump(exclude={"id"}) == AuditRow(
        **audit, run_id="run-aaaa"
    ).model_dump(exclude={"id"})
    narrow = store.attempt_columns("run-aaaa", rows.NARROW_COLUMNS)
    [cells] = [c for c in narrow if (c["task_id"], c["attempt"]) == (expected.task_id, expected.attempt)]
    stored = rows.attempt_row(expected)
    assert cells == {
        **{name: stored[name] for name in rows.NARROW_COLUMNS},
        "outcome": expected.outcome,
        "error_class": expected.error_class,
        "usage_missing": expected.usage_missing,
    }
    assert type(cells["outcome"]) is Outcome and type(cells["usage_missing"]) is bool


def test_narrow_attempt_cells_name_every_readable_column_and_read_unknown_vocabulary_tolerantly(store: Store) -> None:
    from typing import get_type_hints

    from compare_tui.store import AttemptCells

    # The typed rows and the records keep one list of columns each.
    assert tuple(get_type_hints(rows.AttemptValues)) == rows.ATTEMPT_COLUMNS
    assert set(get_type_hints(rows.AuditValues)) - {"id"} == set(rows.AUDIT_COLUMNS)
    assert (
        set(get_type_hints(AttemptCells))
        == set(rows.NARROW_COLUMNS)
        == set(AttemptRecord.model_fields)
        - {
            "id",
            "run_id",
        }
    )
    store.create_run(full_run())
    store.record_attempt(attempt("run-aaaa", "t", 1, "fail", error_class=ErrorClass.TIMEOUT))
    store.write_transaction(
        lambda conn: conn.execute("UPDATE attempts SET outcome = 'exploded', error_class = 'gremlins'")
    )
    [cells] = store.attempt_columns("run-aaaa", ["outcome", "error_class"])
    # A hand-edited row this version does not know: an error of some transport, not a crash.
    assert cells == {"outcome": Outcome.ERROR, "error_class": ErrorClass.TRANSPORT}
    with pytest.raises(ValueError, match="not a readable attempt column: run_id"):
        store.attempt_columns("run-aaaa", ["run_id"])

"""Tool-call runs in the store: their tables come from the migrations (v6), a store written
before v6 (tables made on the side, with rows) upgrades keeping every row, and every request a
tool-call run sends is one row of the audit ledger, like a golden-set attempt's."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

from compare_tui.engine import RunExecutor, RunOverrides, prepare_run
from compare_tui.store import CURRENT_VERSION, Store, schema
from compare_tui.toolcall import RunRequest, RunSettings, ToolcallStore, execute, official_suite, select
from tests.support.builders import hosted_entry, load, write_set
from tests.support.fake_openai import FakeServer, ToolCall, http_error, reset, tool_calls

PARIS = tool_calls(ToolCall("get_weather", {"city": "Paris"}))
SUITE = official_suite()

# What `toolcall/results/storage.py` created on first use before v6, verbatim.
PRE_V6_DDL = """
CREATE TABLE IF NOT EXISTS {runs} (
    id TEXT PRIMARY KEY,
    created_at TEXT NOT NULL,
    status TEXT NOT NULL,
    model_name TEXT NOT NULL,
    endpoint TEXT NOT NULL,
    suite_version TEXT NOT NULL,
    suite_digest TEXT NOT NULL,
    header TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS {results} (
    run_id TEXT NOT NULL REFERENCES {runs}(id) ON DELETE CASCADE,
    position INTEGER NOT NULL,
    scenario_id TEXT NOT NULL,
    outcome TEXT NOT NULL,
    result TEXT NOT NULL,
    PRIMARY KEY (run_id, scenario_id)
);
CREATE INDEX IF NOT EXISTS {runs}_by_created ON {runs}(created_at)
"""
TABLES = (("toolcall_runs", "toolcall_results"), ("toolcall_published_runs", "toolcall_published_results"))


def _run_toolcall(store: Store, url: str, ids: list[str], **kw):
    request = RunRequest(hosted_entry(url), SUITE, select(SUITE.scenarios, ids), RunSettings(timeout_s=10.0), **kw)
    return asyncio.run(execute(request, store=ToolcallStore(store)))


def _v5_store(path: Path, *, toolcall_tables: bool) -> sqlite3.Connection:
    conn = sqlite3.connect(path)
    for migration in schema.MIGRATIONS[:5]:
        migration(conn)
    conn.execute("INSERT INTO meta VALUES ('app', 'compare-tui'), ('schema_version', '5')")
    if toolcall_tables:
        for runs, results in TABLES:
            conn.executescript(PRE_V6_DDL.format(runs=runs, results=results))
    conn.commit()
    return conn


def test_a_new_store_has_the_toolcall_tables_from_its_migrations(tmp_path):
    with Store.open(tmp_path / "runs.sqlite") as store:
        names = {r["name"] for r in store.query("SELECT name FROM sqlite_master WHERE type = 'table'")}
        assert store.schema_version == CURRENT_VERSION >= 6
    assert {name for pair in TABLES for name in pair} <= names


def test_each_toolcall_request_is_one_audit_row_like_a_golden_set_attempt(tmp_path):
    with Store.open(tmp_path / "runs.sqlite") as store:
        with FakeServer(default=PARIS) as server:
            goldset = load(write_set(tmp_path / "set", {"t1": "billing", "t2": "billing"}))
            prepared = prepare_run(store, goldset, hosted_entry(server.url), RunOverrides(), environ={})
            asyncio.run(RunExecutor(store, prepared).execute())
            golden_chats = sum(r.path.endswith("/chat/completions") for r in server.requests)
            before = len(server.requests)
            run = _run_toolcall(store, server.url, ["S01", "S02", "S14"])
            chats = [r for r in server.requests[before:] if r.path.endswith("/chat/completions")]
        golden_rows = store.audit_for_run(prepared.run.id)
        rows = ToolcallStore(store).audit(run.id)
    assert len(golden_rows) == golden_chats == 2  # the golden-set rule: one row per request
    assert len(rows) == len(chats) == 3
    assert sorted(r.task_id for r in rows) == ["S01", "S02", "S14"]
    for row in rows:
        assert (row.toolcall_run_id, row.run_id, row.endpoint, row.model) == (run.id, None, server.url, "fake-model")
        assert row.status == 200 and row.error_class is None
        assert row.bytes_out > 0 and row.bytes_in > 0 and row.duration_ms >= 0
        assert row.prompt_tokens and row.completion_tokens


def test_failed_toolcall_requests_are_audited_too(tmp_path):
    with Store.open(tmp_path / "runs.sqlite") as store:
        with FakeServer(default=http_error(503, "overloaded")) as server:
            run = _run_toolcall(store, server.url, ["S01"])
        with FakeServer(default=reset()) as server:
            broken = _run_toolcall(store, server.url, ["S01"])
        [row] = ToolcallStore(store).audit(run.id)
        [gone] = ToolcallStore(store).audit(broken.id)
    assert (row.status, row.error_class) == (503, "http_5xx")  # the engine's vocabulary, as a golden-set row
    assert gone.error_class == "reset"


def test_a_publishable_run_is_audited_without_any_tool_or_argument(tmp_path):
    with Store.open(tmp_path / "runs.sqlite") as store:
        with FakeServer(default=PARIS) as server:
            run = _run_toolcall(store, server.url, [s.id for s in SUITE.scenarios], publishable=True)
        rows = ToolcallStore(store).audit(run.id)
        columns = set(store.query("SELECT * FROM audit LIMIT 1")[0])
    assert len(rows) == len(SUITE.scenarios)
    assert not columns & {"headers", "body", "arguments", "answer_text"}


def test_a_v5_store_with_toolcall_rows_upgrades_keeping_them(tmp_path):
    # Real rows: a run written by today's code, copied into a store of the v5 shape whose
    # tool-call tables were made on the side (as before v6), beside a golden-set audit row.
    with Store.open(tmp_path / "source.sqlite") as source, FakeServer(default=PARIS) as server:
        original = ToolcallStore(source).get(_run_toolcall(source, server.url, ["S01", "S14"]).id)
        everything = [s.id for s in SUITE.scenarios]
        published = ToolcallStore(source).get(_run_toolcall(source, server.url, everything, publishable=True).id)
        copied = {table: source.query(f"SELECT * FROM {table}") for pair in TABLES for table in pair}
    path = tmp_path / "v5.sqlite"
    conn = _v5_store(path, toolcall_tables=True)
    for table, found in copied.items():
        for row in found:
            conn.execute(
                f"INSERT INTO {table} ({', '.join(row)}) VALUES ({', '.join('?' * len(row))})", list(row.values())
            )
    conn.execute(
        "INSERT INTO runs (id, status, created_at, goldset_id, model_name) "
        "VALUES ('old', 'completed', '2026-01-01T00:00:00.000000Z', 'g', 'm')"
    )
    conn.execute(
        "INSERT INTO audit (at, run_id, task_id, attempt, endpoint, model, status) "
        "VALUES ('2026-01-01T00:00:00.000000Z', 'old', 't1', 1, 'http://x/v1', 'm', 200)"
    )
    conn.commit()
    conn.close()
    with Store.open(path) as store:
        assert store.schema_version == CURRENT_VERSION
        toolcalls = ToolcallStore(store)
        assert toolcalls.get(original.id) == original
        assert toolcalls.get(published.id) == published
        assert [r.id for r in toolcalls.list_runs()] == [original.id]
        assert [r.id for r in toolcalls.list_runs(publishable=True)] == [published.id]
        [old] = store.audit_for_run("old")
        assert (old.status, old.toolcall_run_id) == (200, None)
        with FakeServer(default=PARIS) as server:  # and the upgraded store takes new runs
            later = _run_toolcall(store, server.url, ["S01"])
        assert len(toolcalls.audit(later.id)) == 1


def test_a_v5_store_without_toolcall_tables_gets_them(tmp_path):
    path = tmp_path / "v5.sqlite"
    _v5_store(path, toolcall_tables=False).close()
    with Store.open(path) as store:
        assert store.schema_version == CURRENT_VERSION
        assert ToolcallStore(store).list_runs() == []

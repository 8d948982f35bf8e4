"""One `RunSettings` (the engine's) for golden-set and tool-call runs: one name and one default
per setting, and the settings that stores already hold, written the old way, still load."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from dataclasses import fields

import pytest

from compare_tui.engine import RunSettings
from compare_tui.engine.settings import DEFAULT_CONCURRENCY, DEFAULT_MAX_TOKENS, DEFAULT_TIMEOUT_S, StoredSettings
from compare_tui.store import Store
from compare_tui.toolcall import (
    DEFAULT_SETTINGS,
    RunRequest,
    ToolcallRefused,
    ToolcallStore,
    check_request,
    execute,
    official_suite,
    select,
)
from compare_tui.toolcall import RunSettings as ToolcallRunSettings
from tests.support.builders import hosted_entry
from tests.support.fake_openai import FakeServer, ToolCall, tool_calls

SUITE = official_suite()

# A golden-set run's `settings` column as `engine/prepare.py` has always written it.
ENGINE_ROW = (
    '{"attempts": 2, "temperature": 0.0, "max_tokens": 64, "concurrency": 4, "timeout_s": 120.0, '
    '"estimate_usd": null, "estimate": "no cost basis"}'
)

# A tool-call run's header as `toolcall/run/launch.py` wrote it with its own `RunSettings` (no attempts).
TOOLCALL_HEADER = {
    "id": "tc-old",
    "created_at": "2026-11-30T10:00:00+00:00",
    "model_name": "fake",
    "model_id": "fake-model",
    "endpoint": "http://127.0.0.1:9/v1",
    "suite_name": "official",
    "suite_version": "1",
    "suite_digest": "sha256:x",
    "user_notes": {},
    "server_notes": [],
    "tools_file": None,
    "publishable": False,
    "keep_arguments": False,
    "status": "finished",
    "settings": {"max_tokens": 256, "temperature": 0.0, "timeout_s": 120.0, "concurrency": 2, "scenarios": []},
}


def test_the_tool_call_runner_uses_the_engines_run_settings():
    assert ToolcallRunSettings is RunSettings
    assert RunSettings() == RunSettings(
        attempts=1,
        temperature=0.0,
        max_tokens=DEFAULT_MAX_TOKENS,
        concurrency=DEFAULT_CONCURRENCY,
        timeout_s=DEFAULT_TIMEOUT_S,
    )
    assert DEFAULT_SETTINGS == RunSettings(concurrency=2)


def test_a_golden_set_runs_settings_written_the_old_way_load():
    assert RunSettings.from_dict(json.loads(ENGINE_ROW)) == RunSettings(
        attempts=2, temperature=0.0, max_tokens=64, concurrency=4, timeout_s=120.0
    )


def test_a_tool_call_runs_settings_written_the_old_way_load(tmp_path):
    path = tmp_path / "runs.sqlite"
    Store.open(path).close()
    conn = sqlite3.connect(path)
    h = TOOLCALL_HEADER
    conn.execute(
        "INSERT INTO toolcall_runs (id, created_at, status, model_name, endpoint, suite_version, suite_digest, "
        "header) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (
            h["id"],
            h["created_at"],
            h["status"],
            h["model_name"],
            h["endpoint"],
            h["suite_version"],
            h["suite_digest"],
            json.dumps(h),
        ),
    )
    conn.commit()
    conn.close()
    with Store.open(path) as store:
        run = ToolcallStore(store).get("tc-old")
    assert run.settings == TOOLCALL_HEADER["settings"]
    assert RunSettings.from_dict(run.settings) == RunSettings(
        attempts=1, max_tokens=256, temperature=0.0, timeout_s=120.0, concurrency=2
    )


def test_a_tool_call_run_stores_its_settings_as_before(tmp_path):
    with (
        FakeServer(default=tool_calls(ToolCall("get_weather", {"city": "Paris"}))) as server,
        Store.open(tmp_path / "runs.sqlite") as store,
    ):
        request = RunRequest(
            hosted_entry(server.url),
            SUITE,
            select(SUITE.scenarios, ["S01"]),
            RunSettings(timeout_s=10.0, concurrency=2),
        )
        run = asyncio.run(execute(request, store=ToolcallStore(store)))
        stored = ToolcallStore(store).get(run.id).settings
    assert set(stored) == set(TOOLCALL_HEADER["settings"])
    assert stored["timeout_s"] == 10.0 and stored["concurrency"] == 2


def test_a_tool_call_run_refuses_more_than_one_attempt():
    request = RunRequest(
        hosted_entry("http://127.0.0.1:9/v1"), SUITE, select(SUITE.scenarios, ["S01"]), RunSettings(attempts=3)
    )
    with pytest.raises(ToolcallRefused, match="one request per scenario"):
        check_request(request)


def test_the_stored_settings_shape_names_every_run_setting():
    # `RunSettings.as_dict` stores every field; its declared shape must name the same keys.
    stored = RunSettings().as_dict()
    assert list(stored) == [f.name for f in fields(RunSettings)] == list(StoredSettings.__annotations__)

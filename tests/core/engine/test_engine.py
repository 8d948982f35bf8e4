"""The engine against a fault-injecting OpenAI-compatible server on loopback (real HTTP/SSE).

Every fault must end as a recorded outcome with its reason; nothing crashes, nothing is lost.
"""

from __future__ import annotations

import asyncio
import json

import pytest

from compare_tui.engine import (
    CollectingObserver,
    RetryPolicy,
    RunExecutor,
    RunOverrides,
    RunRefusedError,
    prepare_resume,
    prepare_run,
)
from compare_tui.engine.events import AttemptFinished, RunFinished
from compare_tui.store import Store, measured
from tests.support.builders import hosted_entry, load, write_set
from tests.support.fake_openai import (
    Answer,
    FakeServer,
    ToolCall,
    error_in_stream,
    http_error,
    malformed,
    rate_limited,
    reset,
    text,
    tool_calls,
    truncated,
)

FAST_RETRY = RetryPolicy(max_retries=3, base_s=0.01, cap_s=0.05)


@pytest.fixture
def store(tmp_path):
    with Store.open(tmp_path / "runs.sqlite") as s:
        yield s


async def _run(store, goldset, entry, overrides=RunOverrides(), **kw):
    observer = CollectingObserver()
    prepared = prepare_run(store, goldset, entry, overrides, environ={})
    status = await RunExecutor(store, prepared, observer=observer, retry=FAST_RETRY, **kw).execute()
    return prepared.run.id, status, observer


def _by_task(store, run_id):
    return {a.task_id: a for a in store.attempts_for_run(run_id)}


async def test_every_fault_ends_as_a_recorded_outcome_with_its_reason(tmp_path, store):
    script = {
        "ok": text("billing", chunk_chars=2, timings=True),
        "reset": reset(),
        "reset-mid": reset(2, text="billing billing"),
        "e500": http_error(500, "boom"),
        "e429": [rate_limited("0"), text("billing")],
        "malformed": malformed(text="billing"),
        "truncated": truncated(1, text="billing billing"),
        "in-stream": error_in_stream("model exploded", after_chunks=1),
        "slow": Answer(text="billing", headers_delay_s=0.3),
        "no-usage": Answer(text="billing", usage=False),
        "framing": Answer(text="billing", pings=True, crlf=True, data_no_space=True),
    }
    goldset = load(write_set(tmp_path / "set", {k: "billing" for k in script}))
    with FakeServer(script) as server:
        run_id, status, _ = await _run(store, goldset, hosted_entry(server.url))
    # Resets and 500s after the retries measured nothing: those tasks stay not done.
    assert status == "incomplete"
    run = store.get_run(run_id)
    assert run.environment["http_transport"] == "aiohttp"
    assert "3 of 11 tasks not done" in run.error and "reset ×2" in run.error and "http_5xx ×1" in run.error
    assert f"--resume {run_id}" in run.error
    got = _by_task(store, run_id)
    assert set(got) == set(script)  # nothing lost: the failures are stored as evidence
    assert got["ok"].outcome == "pass" and got["ok"].server_timings is not None
    assert got["ok"].prompt_tokens and got["ok"].completion_tokens
    assert got["ok"].ttft_ms is not None and got["ok"].e2e_ms >= got["ok"].ttft_ms
    for task_id, error_class in [
        ("reset", "reset"),
        ("reset-mid", "reset"),
        ("e500", "http_5xx"),
        ("malformed", "malformed_stream"),
        ("truncated", "truncated"),
        ("in-stream", "stream_error"),
    ]:
        attempt = got[task_id]
        assert (attempt.outcome, attempt.error_class) == ("error", error_class), task_id
        assert attempt.error
    assert "model exploded" in got["in-stream"].error
    assert got["e500"].retries == 3  # retried, then recorded as one attempt
    assert not any(measured(got[t].outcome, got[t].error_class) for t in ("reset", "reset-mid", "e500"))
    assert all(measured(got[t].outcome, got[t].error_class) for t in ("malformed", "truncated", "in-stream"))
    summary = store.pass_rate_summary(run_id)
    assert (summary.errored, summary.not_done) == (3, 3)
    assert got["e429"].outcome == "pass" and got["e429"].retries == 1
    assert got["slow"].outcome == "pass" and got["slow"].ttft_ms >= 300
    assert got["no-usage"].outcome == "pass" and got["no-usage"].usage_missing
    assert got["no-usage"].prompt_tokens is None  # never invented
    assert got["framing"].outcome == "pass"
    audit = store.audit_for_run(run_id)
    assert sum(1 for row in audit if row.task_id == "e500") == 4  # every HTTP request is a row
    assert sum(1 for row in audit if row.task_id == "e429") == 2


async def test_retry_after_is_honoured(tmp_path, store):
    goldset = load(write_set(tmp_path / "set", {"a": "ok"}))
    with FakeServer({"a": [rate_limited("0.4"), text("ok")]}) as server:
        run_id, _, _ = await _run(store, goldset, hosted_entry(server.url))
        gap = (server.requests[-1].received_ns - server.requests[-2].received_ns) / 1e9
    assert gap >= 0.4
    assert _by_task(store, run_id)["a"].outcome == "pass"


async def test_streamed_tool_calls_split_across_chunks_are_scored(tmp_path, store):
    tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}]
    extra = {
        "weather": {
            "input": {"prompt": "weather", "tools": tools},
            "expected": {"tool_call": {"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}},
            "scorer": {"kind": "tool_call"},
        }
    }
    goldset = load(write_set(tmp_path / "set", {"weather": "x"}, extra=extra))
    plan = tool_calls(
        ToolCall("get_weather", {"city": "Paris", "days": 3}),
        ToolCall("get_time", {"tz": "UTC"}),
        args_chunk_chars=2,
        interleave=True,
    )
    with FakeServer({"weather": plan}) as server:
        run_id, _, _ = await _run(store, goldset, hosted_entry(server.url))
        sent = server.requests[-1].body
    attempt = _by_task(store, run_id)["weather"]
    assert attempt.outcome == "pass", attempt.score_detail
    assert [c["name"] for c in attempt.tool_calls] == ["get_weather", "get_time"]
    assert json.loads(attempt.tool_calls[0]["arguments"]) == {"city": "Paris", "days": 3}
    assert sent["tools"] == tools and sent["stream_options"] == {"include_usage": True}
    assert sent["temperature"] == 0.0


async def test_attempts_stop_at_the_first_pass(tmp_path, store):
    goldset = load(write_set(tmp_path / "set", {"flaky": "ok", "never": "ok"}, attempts=3))
    with FakeServer({"flaky": [text("no"), text("ok")], "never": text("no")}) as server:
        run_id, _, observer = await _run(store, goldset, hosted_entry(server.url))
    attempts = store.attempts_for_run(run_id)
    assert [(a.task_id, a.attempt, a.outcome) for a in attempts] == [
        ("flaky", 1, "fail"),
        ("flaky", 2, "pass"),
        ("never", 1, "fail"),
        ("never", 2, "fail"),
        ("never", 3, "fail"),
    ]
    done = [e for e in observer.of(AttemptFinished) if e.task_done]
    assert sorted(e.task_id for e in done) == ["flaky", "never"]


async def test_provider_key_is_refused_and_nothing_is_sent(tmp_path, store):
    goldset = load(write_set(tmp_path / "set", {"a": "ok"}))
    key = "sk-proj-" + "A1b2C3d4" * 6
    with FakeServer({"a": text("ok")}) as server:
        entry = hosted_entry(server.url, key_env="MY_KEY")
        with pytest.raises(RunRefusedError) as refused:
            prepare_run(store, goldset, entry, RunOverrides(), environ={"MY_KEY": key})
        assert not [r for r in server.requests if r.path.endswith("/chat/completions")]
    assert key not in str(refused.value)
    assert store.list_runs() == []


async def test_virtual_key_is_forwarded_but_never_stored(tmp_path, store):
    goldset = load(write_set(tmp_path / "set", {"a": "ok"}))
    key = "vk-team-" + "x" * 24
    with FakeServer({"a": text("ok")}) as server:
        entry = hosted_entry(server.url, key_env="MY_KEY")
        prepared = prepare_run(store, goldset, entry, RunOverrides(), environ={"MY_KEY": key})
        await RunExecutor(store, prepared, retry=FAST_RETRY).execute()
        assert server.requests[-1].headers["authorization"] == f"Bearer {key}"
    assert key.encode() not in (tmp_path / "runs.sqlite").read_bytes()
    wal = tmp_path / "runs.sqlite-wal"
    assert not wal.exists() or key.encode() not in wal.read_bytes()


async def test_max_cost_refuses_before_any_request(tmp_path, store):
    goldset = load(write_set(tmp_path / "set", {f"t{i}": "ok" for i in range(20)}, max_tokens=1000))
    entry = hosted_entry(
        "http://127.0.0.1:9/v1",
        cost={
            "basis": "token_price",
            "usd_per_mtok_input": 100,
            "usd_per_mtok_output": 100,
            "captured": "2026-12-01",
            "source": "t",
        },
    )
    with pytest.raises(RunRefusedError, match="exceeds --max-cost"):
        prepare_run(store, goldset, entry, RunOverrides(), max_cost=0.01, environ={})


async def test_unreachable_server_records_errors_not_a_crash(tmp_path, store):
    goldset = load(write_set(tmp_path / "set", {"a": "ok", "b": "ok"}))
    run_id, status, observer = await _run(store, goldset, hosted_entry("http://127.0.0.1:9/v1"))
    assert status == "incomplete"
    assert {a.error_class for a in store.attempts_for_run(run_id)} == {"connect"}
    # The stored detail (what the run line and the report show) in compare-tui's words.
    assert {a.error for a in store.attempts_for_run(run_id)} == {"nothing listens on 127.0.0.1:9"}
    assert observer.of(RunFinished)[0].counts == {"not_done": 2}
    assert store.pass_rate_summary(run_id).not_done == 2
    assert "2 of 2 tasks not done" in store.get_run(run_id).error


async def test_resume_does_only_what_is_missing(tmp_path, store):
    goldset = load(write_set(tmp_path / "set", {f"t{i:02d}": "ok" for i in range(12)}))
    # ~100 ms an answer, so the run is still going when it is cancelled after three attempts.
    with FakeServer(default=text("ok", chunk_chars=1, chunk_delay_s=0.05)) as server:
        prepared = prepare_run(store, goldset, hosted_entry(server.url), RunOverrides(concurrency=2), environ={})
        # Simulate a crash after three tasks: record them as a first process would have.
        first = RunExecutor(store, prepared, retry=FAST_RETRY)

        async def stop_after_three():
            while len(store.attempts_for_run(prepared.run.id)) < 3:
                await asyncio.sleep(0.005)

        task = asyncio.ensure_future(first.execute())
        await stop_after_three()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert store.get_run(prepared.run.id).status == "interrupted"
        before = {a.id for a in store.attempts_for_run(prepared.run.id)}
        requests_before = len(server.requests)
        resumed = prepare_resume(store, prepared.run.id, goldset, hosted_entry(server.url), environ={})
        status = await RunExecutor(store, resumed, retry=FAST_RETRY).execute()
        chat_after = [r for r in server.requests[requests_before:] if r.path.endswith("/chat/completions")]
    attempts = store.attempts_for_run(prepared.run.id)
    assert status == "completed"
    assert sorted(a.task_id for a in attempts) == [f"t{i:02d}" for i in range(12)]  # each exactly once
    assert {r.task for r in chat_after}.isdisjoint({a.split(":")[1] for a in before})


async def test_tokens_are_timed_as_they_arrive_not_when_the_stream_ends(tmp_path, store):
    # Five one-character deltas 150 ms apart: TTFT must be taken at the first, E2E at the last.
    # (httpx's chunked reads once held every byte back until the stream ended.)
    goldset = load(write_set(tmp_path / "set", {"a": "abcde"}))
    with FakeServer({"a": text("abcde", chunk_chars=1, chunk_delay_s=0.15)}) as server:
        run_id, _, _ = await _run(store, goldset, hosted_entry(server.url))
    attempt = _by_task(store, run_id)["a"]
    assert attempt.outcome == "pass"
    assert attempt.e2e_ms - attempt.ttft_ms >= 4 * 150 * 0.9

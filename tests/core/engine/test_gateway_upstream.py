"""A gateway that lost its upstream (issue 23, point 3): LiteLLM's `APIConnectionError …
Connection error` inside a 200 stream, or `InternalServerError … Connection error` in a 5xx
body, is a connection failure one hop further: retried like one, nothing measured, the task
not done and the run resumable, and a run of them in a row stops the run as an outage does.

Against the fault-injecting server on loopback (real HTTP and SSE), answering with LiteLLM's
words."""

from __future__ import annotations

import pytest

from compare_tui.endpoint.client import chat_client
from compare_tui.engine import CollectingObserver, RetryPolicy, RunExecutor, RunOverrides, prepare_resume, prepare_run
from compare_tui.engine.exchange import chat_chunks, upstream_failure
from compare_tui.engine.runner import OUTAGE_AFTER
from compare_tui.store import Store
from compare_tui.toolcall.checks.unsupported import classify
from compare_tui.vocabulary import ErrorClass, measured
from tests.support.builders import hosted_entry, load, write_set
from tests.support.fake_openai import FakeServer, error_in_stream, fail_then, http_error, text

FAST_RETRY = RetryPolicy(max_retries=3, base_s=0.01, cap_s=0.05)
IN_STREAM = (
    "litellm.APIConnectionError: APIConnectionError: OpenAIException - Connection error.\n"
    "Received Model Group=fake-model\nAvailable Model Group Fallbacks=None"
)
IN_BODY = (
    "litellm.InternalServerError: InternalServerError: OpenAIException - Connection error.\n"
    "Received Model Group=fake-model"
)


@pytest.fixture
def store(tmp_path):
    with Store.open(tmp_path / "runs.sqlite") as s:
        yield s


def test_the_words_of_an_upstream_failure() -> None:
    assert upstream_failure(IN_STREAM) and upstream_failure(IN_BODY)
    assert upstream_failure("upstream connect error or disconnect/reset before headers")
    assert not upstream_failure("Fake error inside a 200 stream")
    assert not upstream_failure("tools param requires --jinja flag")
    assert not measured("error", ErrorClass.UPSTREAM)


async def test_an_upstream_error_in_the_stream_is_retried_and_then_answers(tmp_path, store) -> None:
    script = {
        "a": fail_then(2, error_in_stream(IN_STREAM), text("ok")),
        "b": fail_then(1, http_error(500, IN_BODY), text("ok")),
    }
    goldset = load(write_set(tmp_path / "set", dict.fromkeys(script, "ok")))
    with FakeServer(script) as gw:
        prepared = prepare_run(store, goldset, hosted_entry(gw.url), RunOverrides(concurrency=1), environ={})
        status = await RunExecutor(store, prepared, retry=FAST_RETRY).execute()
        assert (gw.count("a"), gw.count("b")) == (3, 2)  # retried like a connection error
    assert status == "completed"
    attempts = store.attempts_for_run(prepared.run.id)
    assert [(a.task_id, a.outcome, a.retries) for a in attempts] == [("a", "pass", 2), ("b", "pass", 1)]


async def test_a_lost_upstream_leaves_tasks_not_done_and_the_run_resumable(tmp_path, store) -> None:
    # The first task is answered; then the upstream goes: its error inside the stream for the
    # task in flight, 500s with LiteLLM's words for every later one.
    names = [f"t{i}" for i in range(OUTAGE_AFTER + 4)]
    up = {"on": False}

    def plan(body, count):
        task = body["messages"][-1]["content"]
        if up["on"] or task == "t0":
            return text("ok")
        return error_in_stream(IN_STREAM) if task == "t1" else http_error(500, IN_BODY)

    goldset = load(write_set(tmp_path / "set", dict.fromkeys(names, "ok")))
    with FakeServer(plan) as gw:
        prepared = prepare_run(store, goldset, hosted_entry(gw.url), RunOverrides(concurrency=1), environ={})
        observer = CollectingObserver()
        status = await RunExecutor(store, prepared, observer=observer, retry=FAST_RETRY).execute()
        run = store.get_run(prepared.run.id)
        assert status == run.status == "incomplete"
        assert "upstream ×" in (run.error or "") and "looks down" in (run.error or "")
        asked = {r.task for r in gw.requests if r.task}
        assert asked == {"t0", *names[1 : OUTAGE_AFTER + 1]}  # stopped after OUTAGE_AFTER in a row
        summary = store.pass_rate_summary(run.id)
        assert (summary.passed, summary.errored, summary.not_done) == (1, 0, len(names) - 1)
        stream_attempt = next(a for a in store.attempts_for_run(run.id) if a.task_id == "t1")
        assert stream_attempt.error_class == ErrorClass.UPSTREAM and stream_attempt.retries == 3

        up["on"] = True  # the upstream is back: a resume does exactly the tasks not done
        resumed = prepare_resume(store, run.id, goldset, hosted_entry(gw.url), environ={})
        assert await RunExecutor(store, resumed, retry=FAST_RETRY).execute() == "completed"
    assert store.pass_rate_summary(run.id).passed == len(names)


@pytest.mark.parametrize("stream", [True, False])
async def test_the_tool_call_runner_names_a_lost_upstream_and_keeps_a_plain_500_an_http_error(stream) -> None:
    # The tool-call runner reads raw chunks (`chat_chunks`): a gateway's lost upstream must be an error there
    # too (nothing measured), never the model's failure to handle the conversation.
    script = {
        "body": http_error(500, IN_BODY),
        "stream": error_in_stream(IN_STREAM),
        "plain": http_error(500, "tools param requires --jinja flag"),
    }
    with FakeServer(script) as gw:
        async with chat_client(timeout_s=10) as client:

            async def ask(task: str):
                body = {"model": "fake-model", "stream": stream, "messages": [{"role": "user", "content": task}]}
                return await chat_chunks(client, gw.url, body, timeout_s=10)

            lost_body, plain = await ask("body"), await ask("plain")
            lost_stream = await ask("stream") if stream else None
    assert lost_body.error_class == "upstream" and "Connection error" in (lost_body.error or "")
    assert classify(lost_body).kind == "error"
    assert plain.error_class == ErrorClass.HTTP_5XX
    if lost_stream is not None:
        assert lost_stream.error_class == "upstream" and classify(lost_stream).kind == "error"

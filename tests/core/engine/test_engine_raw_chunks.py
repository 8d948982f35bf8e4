"""The engine client's raw-chunks mode (`chat_chunks`), the tool-call runner's one way to send:
every parsed chunk kept in arrival order, failures in the engine's one vocabulary
(`ErrorClass`), and reading bounded in size. Against the fake server on loopback."""

from __future__ import annotations

import pytest

from compare_tui.endpoint.client import chat_client
from compare_tui.engine import exchange as chat_exchange
from compare_tui.engine.exchange import chat_chunks
from compare_tui.toolcall.checks.unsupported import classify
from compare_tui.vocabulary import ErrorClass
from tests.support.fake_openai import FakeServer, bad_request, text


async def _ask(url: str, *, stream: bool):
    body = {"model": "fake-model", "stream": stream, "messages": [{"role": "user", "content": "hi"}]}
    if stream:
        body["stream_options"] = {"include_usage": True}
    async with chat_client(timeout_s=10) as client:
        return await chat_chunks(client, url, body, timeout_s=10)


@pytest.mark.parametrize("stream", [True, False])
async def test_raw_mode_keeps_the_answer_unfolded(stream) -> None:
    with FakeServer(default=text("billing")) as server:
        ex = await _ask(server.url, stream=stream)
    assert ex.error_class is None and ex.status == 200 and ex.acc is None
    if stream:
        assert ex.done and len(ex.chunks) > 1 and ex.body is None and ex.ttft_ms is not None
        assert (
            "".join(c["choices"][0]["delta"].get("content") or "" for c in ex.chunks if c.get("choices")) == "billing"
        )
    else:
        assert ex.chunks == [] and ex.body["choices"][0]["message"]["content"] == "billing"
    prompt, completion = ex.tokens()
    assert prompt and completion and ex.bytes_in > 0 and ex.bytes_out > 0 and ex.duration_ms > 0


async def test_raw_mode_classifies_an_error_status_in_the_engines_vocabulary() -> None:
    with FakeServer(default=bad_request("tools param requires --jinja flag")) as server:
        ex = await _ask(server.url, stream=True)
    assert (ex.status, ex.error_class) == (400, ErrorClass.HTTP_4XX)
    assert ex.server_message == "tools param requires --jinja flag"
    assert classify(ex).kind == "unsupported"


@pytest.mark.parametrize("stream", [True, False])
async def test_raw_mode_stops_reading_past_its_bound(stream, monkeypatch) -> None:
    monkeypatch.setattr(chat_exchange, "MAX_RAW_BYTES", 64)
    with FakeServer(default=text("a long answer " * 40)) as server:
        ex = await _ask(server.url, stream=stream)
    assert ex.error_class == ErrorClass.TOO_LARGE and "64 bytes" in (ex.error or "")
    assert classify(ex).kind == "error"

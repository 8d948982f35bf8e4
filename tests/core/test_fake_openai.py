"""The fake OpenAI server, checked with plain httpx and raw sockets (not with our client)."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from tests.support.fake_openai import (
    Answer,
    FakeServer,
    Reset,
    ToolCall,
    bad_request,
    error_in_stream,
    fail_then,
    http_error,
    malformed,
    rate_limited,
    reset,
    text,
    tool_calls,
    truncated,
)

ROOT = Path(__file__).resolve().parents[2]


def chat(task: str, *, stream: bool = True, usage: bool = True, **extra) -> dict:
    body = {
        "model": "m",
        "messages": [{"role": "system", "content": "sys"}, {"role": "user", "content": task}],
        "stream": stream,
    }
    if usage:
        body["stream_options"] = {"include_usage": True}
    return {**body, **extra}


def data_lines(response: httpx.Response) -> list[str]:
    """Payloads of `data:` lines, with or without the space, in order."""
    out = []
    for line in response.iter_lines():
        if line.startswith("data:"):
            out.append(line[5:].removeprefix(" "))
    return out


def stream(client: httpx.Client, url: str, body: dict, headers=None) -> tuple[httpx.Response, list]:
    with client.stream("POST", f"{url}/chat/completions", json=body, headers=headers) as r:
        return r, data_lines(r)


def test_streamed_answer_frames_like_openai_with_usage_and_timings():
    plan = text("hello world, friend", chunk_chars=4, timings=True, first_token_delay_s=0.02)
    with FakeServer({"t": plan}) as srv, httpx.Client() as client:
        r, lines = stream(client, srv.url, chat("t"))
    assert r.status_code == 200 and r.headers["transfer-encoding"] == "chunked"
    assert r.headers["content-type"] == "text/event-stream"
    assert lines[-1] == "[DONE]"
    chunks = [json.loads(x) for x in lines[:-1]]
    assert chunks[0]["choices"][0]["delta"] == {"role": "assistant", "content": None}
    content = [c["choices"][0]["delta"].get("content") for c in chunks[1:] if c["choices"]]
    assert "".join(x for x in content if x) == "hello world, friend"
    assert chunks[-2]["choices"][0]["finish_reason"] == "stop"
    last = chunks[-1]
    assert last["choices"] == [] and last["usage"]["completion_tokens"] == 5
    assert all(c["usage"] is None for c in chunks[:-1])
    assert last["timings"]["prompt_ms"] == pytest.approx(20.0)
    assert last["timings"]["predicted_n"] == 5


def test_usage_chunk_follows_include_usage_unless_forced():
    with FakeServer({"always": Answer(usage=True), "never": Answer(usage=False)}) as srv, httpx.Client() as client:
        _, plain = stream(client, srv.url, chat("x", usage=False))
        _, forced = stream(client, srv.url, chat("always", usage=False))
        _, none = stream(client, srv.url, chat("never"))
    assert not any('"usage"' in line for line in plain)
    assert '"usage":{' in forced[-2]
    assert not any('"usage":{' in line for line in none)


def test_non_streamed_answer_has_content_length_and_usage():
    with FakeServer({"t": text("billing")}) as srv, httpx.Client() as client:
        r = client.post(f"{srv.url}/chat/completions", json=chat("t", stream=False))
    assert int(r.headers["content-length"]) == len(r.content)
    body = r.json()
    assert body["choices"][0]["message"]["content"] == "billing"
    assert body["usage"]["total_tokens"] == body["usage"]["prompt_tokens"] + 2


@pytest.mark.parametrize("interleave", [False, True])
def test_parallel_tool_calls_reassemble_by_index(interleave):
    calls = (
        ToolCall("get_weather", {"city": "Paris", "unit": "celsius"}),
        ToolCall("get_time", {"tz": "Europe/Paris"}, id="call_b"),
    )
    with (
        FakeServer({"t": tool_calls(*calls, args_chunk_chars=3, interleave=interleave)}) as srv,
        httpx.Client() as client,
    ):
        _, lines = stream(client, srv.url, chat("t"))
    built: dict[int, dict] = {}
    indexes = []
    for chunk in map(json.loads, lines[:-1]):
        for choice in chunk["choices"]:
            for d in choice["delta"].get("tool_calls") or []:
                indexes.append(d["index"])
                slot = built.setdefault(d["index"], {"id": None, "name": None, "args": ""})
                slot["id"] = d.get("id") or slot["id"]
                slot["name"] = d.get("function", {}).get("name") or slot["name"]
                slot["args"] += d.get("function", {}).get("arguments", "")
    assert json.loads(built[0]["args"]) == calls[0].arguments and built[0]["name"] == "get_weather"
    assert json.loads(built[1]["args"]) == calls[1].arguments and built[1]["id"] == "call_b"
    assert len(indexes) > 6  # really split over many deltas
    switches = sum(a != b for a, b in zip(indexes, indexes[1:]))
    assert (switches > 2) == interleave
    assert '"finish_reason":"tool_calls"' in lines[-3]


def test_arguments_as_object_quirk():
    plan = tool_calls(ToolCall("f", {"a": 1}), arguments_as_object=True)
    with FakeServer({"t": plan}) as srv, httpx.Client() as client:
        _, lines = stream(client, srv.url, chat("t"))
        whole = client.post(f"{srv.url}/chat/completions", json=chat("t", stream=False)).json()
    deltas = [json.loads(x)["choices"][0]["delta"] for x in lines[1:3]]
    assert deltas[0]["tool_calls"][0]["function"]["arguments"] == {"a": 1}
    assert whole["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"] == {"a": 1}


def test_http_errors_carry_status_body_and_retry_after():
    script = {
        "429": rate_limited("7"),
        "500": http_error(500),
        "503": http_error(503, "Loading"),
        "400": bad_request("tools param requires --jinja flag"),
    }
    with FakeServer(script) as srv, httpx.Client() as client:
        got = {k: client.post(f"{srv.url}/chat/completions", json=chat(k)) for k in script}
    assert got["429"].status_code == 429 and got["429"].headers["retry-after"] == "7"
    assert got["500"].status_code == 500 and got["503"].json()["error"]["message"] == "Loading"
    assert got["400"].json()["error"]["message"] == "tools param requires --jinja flag"
    assert srv.connections == 1  # errors keep the connection alive


def test_reset_before_headers_is_a_real_tcp_reset():
    with FakeServer({"t": Reset()}) as srv:
        body = json.dumps(chat("t")).encode()
        with socket.create_connection(("127.0.0.1", srv.port), timeout=5) as sock:
            sock.sendall(
                b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body)
            )
            with pytest.raises(ConnectionResetError):
                while sock.recv(4096):  # a FIN would return b"" and end the loop instead
                    pass
        with httpx.Client() as client, pytest.raises(httpx.ReadError):
            client.post(f"{srv.url}/chat/completions", json=chat("t"))


def test_reset_mid_stream_after_some_chunks():
    with FakeServer({"t": reset(2, text="abcdefghijklmnop", chunk_chars=2)}) as srv, httpx.Client() as client:
        seen = []
        with pytest.raises(httpx.ReadError):
            with client.stream("POST", f"{srv.url}/chat/completions", json=chat("t")) as r:
                for line in r.iter_lines():
                    seen.append(line)
    assert r.status_code == 200
    assert sum('"content":"' in line for line in seen) == 2


def test_truncated_stream_clean_and_unclean():
    with FakeServer({"clean": truncated(2), "dirty": truncated(2, clean=False)}) as srv, httpx.Client() as client:
        _, lines = stream(client, srv.url, chat("clean"))
        assert "[DONE]" not in lines and not any('"usage":{' in x for x in lines)
        assert len(lines) == 3  # role chunk + 2 deltas
        with pytest.raises(httpx.RemoteProtocolError):
            stream(client, srv.url, chat("dirty"))


def test_malformed_error_in_stream_and_framing_quirks():
    script = {
        "bad": malformed(),
        "err": error_in_stream("boom", after_chunks=1),
        "odd": Answer(pings=True, crlf=True, data_no_space=True, text="hello"),
    }
    with FakeServer(script) as srv, httpx.Client() as client:
        _, bad = stream(client, srv.url, chat("bad"))
        _, err = stream(client, srv.url, chat("err"))
        with client.stream("POST", f"{srv.url}/chat/completions", json=chat("odd")) as r:
            raw = r.read()
    assert "{not json" in bad and bad[-1] == "[DONE]"
    assert json.loads(err[-2]) == {"error": {"code": 500, "message": "boom", "type": "server_error"}}
    assert err[-1] == "[DONE]"
    assert b": ping\r\n\r\n" in raw and b"data:{" in raw and b"data: " not in raw
    assert raw.count(b"\n") == raw.count(b"\r\n")


def test_slow_first_byte_and_inter_chunk_delays():
    plan = Answer(headers_delay_s=0.2, first_token_delay_s=0.1, chunk_delay_s=0.05, text="aabbcc", chunk_chars=2)
    with FakeServer({"t": plan}) as srv, httpx.Client() as client:
        t0 = time.perf_counter()
        with client.stream("POST", f"{srv.url}/chat/completions", json=chat("t")) as r:
            t_headers = time.perf_counter() - t0
            list(r.iter_lines())
        total = time.perf_counter() - t0
    assert t_headers >= 0.19 and total >= 0.19 + 0.1 + 2 * 0.05 - 0.01


def test_fail_then_succeed_counts_per_task_and_header_selects_task():
    script = {"flaky": fail_then(2, http_error(503), text("finally")), "seq": [http_error(500), text("second")]}
    with FakeServer(script) as srv, httpx.Client() as client:
        url = f"{srv.url}/chat/completions"
        codes = [client.post(url, json=chat("flaky", stream=False)).status_code for _ in range(3)]
        hdr = {"X-Fake-Plan": "seq"}
        seq = [client.post(url, json=chat("anything", stream=False), headers=hdr) for _ in range(3)]
        preset = client.post(url, json=chat("zzz"), headers={"X-Fake-Plan": "http-429"})
        assert codes == [503, 503, 200] and srv.count("flaky") == 3
        assert [r.status_code for r in seq] == [500, 200, 200]
        assert preset.status_code == 429
        logged = [r for r in srv.requests if r.task == "seq"]
        assert [r.count for r in logged] == [0, 1, 2]
        assert logged[0].headers["x-fake-plan"] == "seq" and logged[0].body["model"] == "m"
        assert srv.connections == 1


def test_side_endpoints():
    with FakeServer(models=("a", "b")) as srv, httpx.Client() as client:
        root = srv.url.removesuffix("/v1")
        assert client.get(f"{root}/health").json() == {"status": "ok"}
        assert [m["id"] for m in client.get(f"{srv.url}/models").json()["data"]] == ["a", "b"]
        props = client.get(f"{root}/props").json()
        assert props["default_generation_settings"]["n_ctx"] == 4096
        assert client.get(f"{root}/nope").status_code == 404
        srv.health_status = 503
        assert client.get(f"{root}/health").status_code == 503
    with FakeServer(props=None) as srv, httpx.Client() as client:
        assert client.get(srv.url.removesuffix("/v1") + "/props").status_code == 404


async def test_concurrent_streams_overlap_and_zero_delay_mode():
    async with httpx.AsyncClient() as client:
        with FakeServer(default=Answer(first_token_delay_s=0.5)) as srv:

            async def one(i):
                sent = time.perf_counter()
                async with client.stream("POST", f"{srv.url}/chat/completions", json=chat(f"t{i}")) as r:
                    lines = [x async for x in r.aiter_lines()]
                return sent, time.perf_counter(), lines

            spans = await asyncio.gather(*(one(i) for i in range(20)))
            # Overlap, not speed: every request was sent before any answer finished, so all
            # twenty were in flight at once (a serialising server would finish one first).
            assert max(sent for sent, _, _ in spans) < min(done for _, done, _ in spans)
            assert all([x for x in lines if x][-1] == "data: [DONE]" for _, _, lines in spans)
        with FakeServer(mode="zero-delay", record=False) as srv:

            async def many():
                for _ in range(50):
                    async with client.stream("POST", f"{srv.url}/chat/completions", json=chat("x")) as r:
                        lines = [x async for x in r.aiter_lines() if x]
                    assert lines[-1] == "data: [DONE]" and '"usage":{' in lines[-2]

            await asyncio.gather(*(many() for _ in range(4)))
            assert srv.requests == []


def test_standalone_process_prints_url_and_serves():
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.support.fake_openai", "--port", "0", "--mode", "scripted"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        url = proc.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:") and url.endswith("/v1")
        with httpx.Client() as client:
            assert client.get(f"{url}/models").status_code == 200
            r = client.post(f"{url}/chat/completions", json=chat("x", stream=False))
            assert r.json()["choices"][0]["message"]["content"] == "ok"
            limited = client.post(f"{url}/chat/completions", json=chat("x"), headers={"X-Fake-Plan": "http-429"})
            assert limited.headers["retry-after"] == "1"
    finally:
        proc.terminate()
        proc.wait(10)


def test_stamps_usage_on_every_chunk_and_role_in_first_delta():
    plan = Answer(text="abcdef", chunk_chars=3, stamp=True, usage="every", role_chunk=False)
    with FakeServer({"t": plan}) as srv, httpx.Client() as client:
        _, lines = stream(client, srv.url, chat("t", usage=False))
    chunks = [json.loads(x) for x in lines[:-1]]
    assert chunks[0]["choices"][0]["delta"] == {"role": "assistant", "content": "abc"}
    stamps = [c["x_sent_ns"] for c in chunks]
    assert stamps == sorted(stamps) and all(isinstance(s, int) for s in stamps)
    assert [c["usage"]["completion_tokens"] for c in chunks] == [1, 2, 2, 2]

"""The endpoint seam: URLs built from the catalogue's base URL, the key header, `/props` read in
one place, and the clients every runner and probe use (no ambient proxy, no redirects)."""

from __future__ import annotations

import asyncio
import socket
from urllib.parse import urlsplit

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from compare_tui.endpoint import Endpoint, key_headers, server_root
from compare_tui.endpoint.client import _DROPS_KEPT, TRANSPORT, causes, chat_client, connect_failure, probe_client
from compare_tui.endpoint.props import MAX_PROPS_BYTES, PropsUnavailable, fetch_props
from compare_tui.engine.exchange import stream_chat
from compare_tui.engine.reachability import probe_endpoint
from tests.support.fake_openai import DEFAULT_PROPS, Answer, FakeServer, reset, text
from tests.support.raw_server import HEAD, ClosingServer, LateClosingServer, RawServer, chunked

hosts = st.from_regex(r"https?://[a-z][a-z0-9.-]{0,20}(:[0-9]{2,5})?", fullmatch=True)


@given(hosts, st.booleans())
def test_the_root_is_the_base_url_without_v1_whatever_the_trailing_slash(host, slash):
    base = host + "/v1" + ("/" if slash else "")
    at = Endpoint(base)
    assert at.root == host == server_root(host)
    assert at.props_url == f"{host}/props" and at.metrics_url == f"{host}/metrics"
    assert at.models_url == f"{host}/v1/models" and at.api("/chat/completions") == f"{host}/v1/chat/completions"
    assert at.beside("/api/tags") == f"{host}/api/tags"


def test_a_base_url_without_v1_is_its_own_root():
    # A gateway mounted under a path keeps its path: only a final /v1 is taken off.
    assert Endpoint("http://gw:4000/openai").root == "http://gw:4000/openai"
    assert Endpoint("http://gw:4000/v1/v1").root == "http://gw:4000/v1"


def test_the_key_travels_only_as_a_bearer_header():
    assert key_headers("sk-virtual") == {"Authorization": "Bearer sk-virtual"}
    assert key_headers(None) == {} and key_headers("") == {}


def test_props_are_read_beside_v1_with_the_key():
    with FakeServer() as srv:
        props = fetch_props(srv.url, headers=key_headers("sk-virtual"))
        sent = srv.requests
    assert props == DEFAULT_PROPS
    assert [r.path for r in sent] == ["/props"]
    assert sent[0].headers["authorization"] == "Bearer sk-virtual"


def test_a_server_without_props_says_404_and_a_dead_one_says_no_status():
    with FakeServer(props=None) as srv:
        with pytest.raises(PropsUnavailable) as missing:
            fetch_props(Endpoint(srv.url))
        dead = srv.url
    assert missing.value.status == 404 and "returned HTTP 404" in str(missing.value)
    with pytest.raises(PropsUnavailable) as gone:
        fetch_props(dead, headers=key_headers("sk-secret"), timeout_s=2.0)
    assert gone.value.status is None and "ConnectError" in str(gone.value)
    assert "sk-secret" not in str(gone.value)


@pytest.mark.parametrize(
    ("answer", "says"),
    [
        (httpx.Response(200, text="<html>"), "did not return JSON"),
        (httpx.Response(200, json=[1, 2]), "did not return a JSON object"),
        (httpx.Response(200, content=b" " * (MAX_PROPS_BYTES + 1)), f"more than {MAX_PROPS_BYTES} bytes"),
        (httpx.Response(500, json={"error": "boom"}), "returned HTTP 500"),
    ],
)
def test_odd_props_answers_are_refused_with_what_was_wrong(answer, says):
    with probe_client(timeout_s=2.0, transport=httpx.MockTransport(lambda request: answer)) as client:
        with pytest.raises(PropsUnavailable, match=says):
            fetch_props("http://gw.example/v1", client=client)


def test_the_probe_client_follows_no_redirect():
    # A redirect could carry the key to another host.
    moved = httpx.Response(307, headers={"location": "http://elsewhere.example/props"})
    with probe_client(timeout_s=2.0, transport=httpx.MockTransport(lambda request: moved)) as client:
        with pytest.raises(PropsUnavailable, match="HTTP 307") as refused:
            fetch_props("http://gw.example/v1", client=client)
    assert refused.value.status == 307


def _body(task: str) -> dict:
    return {
        "model": "fake-model",
        "stream": True,
        "stream_options": {"include_usage": True},
        "messages": [{"role": "user", "content": task}],
    }


async def test_the_chat_client_reads_an_answer_and_classifies_a_reset_a_timeout_and_a_refusal():
    script = {"ok": text("billing", chunk_chars=2), "gone": reset(), "slow": Answer(text="x", headers_delay_s=1.0)}
    with FakeServer(script) as server:
        async with chat_client(timeout_s=5.0, concurrency=2) as client:
            ok = await stream_chat(client, server.url, _body("ok"))
            gone = await stream_chat(client, server.url, _body("gone"))
            slow = await stream_chat(client, server.url, _body("slow"), timeout_s=0.2)
        dead = server.url
    async with chat_client(timeout_s=2.0) as client:
        refused = await stream_chat(client, dead, _body("ok"))
    assert TRANSPORT == "aiohttp"
    assert ok.error_class is None and ok.acc.answer().text == "billing" and ok.acc.ttft_ms() is not None
    assert gone.error_class == "reset" and "connection" in gone.error
    assert slow.error_class == "timeout" and slow.error == "no complete answer within 0.2 s"
    assert refused.error_class == "connect"
    # In compare-tui's words, not aiohttp's ("Cannot connect to host … ssl:default […]").
    assert refused.error == f"nothing listens on 127.0.0.1:{urlsplit(dead).port}"


def test_a_refused_probe_and_an_unknown_host_say_what_happened_in_compare_tuis_words():
    assert str(probe_endpoint("http://127.0.0.1:9/v1")) == "unreachable: nothing listens on 127.0.0.1:9"
    refused = httpx.ConnectError("[Errno 111] Connection refused")
    refused.__cause__ = ConnectionRefusedError(111, "Connection refused")
    assert connect_failure(causes(refused), "http://[::1]:8080/v1/models") == "nothing listens on [::1]:8080"
    unresolved = socket.gaierror(-2, "Name or service not known")
    assert connect_failure([unresolved], "https://llm.internal/v1") == "cannot resolve the host name llm.internal"
    unreachable = OSError(101, "Network is unreachable")
    assert (
        connect_failure([unreachable], "http://10.0.0.9/v1")
        == "could not connect to 10.0.0.9:80: Network is unreachable"
    )


async def test_a_server_that_closes_after_each_streamed_answer_never_gets_a_request_on_a_dead_connection():
    # llama-server's way: the close comes after every streamed answer though it said Keep-Alive.
    async with ClosingServer([]) as server, chat_client(timeout_s=5.0, concurrency=1) as client:
        endpoint = server.url.removesuffix("/chat/completions")
        exchanges = [await stream_chat(client, endpoint, _body("x")) for _ in range(8)]  # back to back
    assert [ex.error_class for ex in exchanges] == [None] * 8
    assert len(server.requests) == 8 and server.connections == 8


async def test_a_late_close_after_a_streamed_answer_costs_no_request():
    # The close arriving late, as on a loaded machine: a kept connection would take the next
    # request and then be closed under it (a reset); every request goes on a connection of its own.
    async with LateClosingServer(close_after_s=0.5) as server, chat_client(timeout_s=5.0, concurrency=1) as client:
        endpoint = server.url.removesuffix("/chat/completions")
        exchanges = []
        for _ in range(4):
            exchanges.append(await stream_chat(client, endpoint, _body("x")))
            await asyncio.sleep(0.05)
    assert [ex.error_class for ex in exchanges] == [None] * 4
    # The second request met the late close unanswered and went again on a new connection; the
    # server is learnt, and from then on its connections are closed after each answer.
    assert len(server.requests) == 4 and server.connections == 4
    assert ("http", endpoint.split("/")[2]) in _DROPS_KEPT


async def test_a_server_that_keeps_connections_gets_every_request_on_one():
    answers = [[HEAD + chunked(b"data: [DONE]\n\n")] for _ in range(5)]
    async with RawServer(answers) as server, chat_client(timeout_s=5.0, concurrency=1) as client:
        endpoint = server.url.removesuffix("/chat/completions")
        exchanges = [await stream_chat(client, endpoint, _body("x")) for _ in range(5)]
    assert [ex.error_class for ex in exchanges] == [None] * 5
    assert len(server.requests) == 5 and server.connections == 1


async def test_a_new_connection_closed_without_an_answer_is_an_error_not_a_second_request():
    async with RawServer(["close"]) as server, chat_client(timeout_s=5.0) as client:
        gone = await stream_chat(client, server.url.removesuffix("/chat/completions"), _body("x"))
    assert gone.error_class == "reset" and len(server.requests) == 1


async def test_a_kept_connection_closed_unanswered_is_written_again_once():
    answers = [[HEAD + chunked(b"data: [DONE]\n\n")], "close", [HEAD + chunked(b"data: [DONE]\n\n")]]
    async with RawServer(answers) as server, chat_client(timeout_s=5.0, concurrency=1) as client:
        endpoint = server.url.removesuffix("/chat/completions")
        first = await stream_chat(client, endpoint, _body("x"))
        again = await stream_chat(client, endpoint, _body("x"))
    assert (first.error_class, again.error_class) == (None, None)
    assert len(server.requests) == 3 and server.connections == 2


async def test_a_kept_connection_closed_after_part_of_an_answer_is_not_written_again():
    answers = [[HEAD + chunked(b"data: [DONE]\n\n")], [b"HTTP/1.1 200 OK\r\n", None], []]
    async with RawServer(answers) as server, chat_client(timeout_s=5.0, concurrency=1) as client:
        endpoint = server.url.removesuffix("/chat/completions")
        await stream_chat(client, endpoint, _body("x"))
        broken = await stream_chat(client, endpoint, _body("x"))
    assert broken.error_class == "reset" and len(server.requests) == 2

"""The engine's own HTTP/1.1 client (`engine/wire.py`) against real loopback sockets: a raw
server that writes exactly the bytes each test scripts, split as the test says."""

from __future__ import annotations

import asyncio
import gzip
import zlib

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compare_tui.engine.client import stream_chat
from compare_tui.engine.transport import classify_exception
from compare_tui.engine.wire import SETTLE_S, WireConnectError, WireDisconnected, WirePool, WireProtocolError
from tests.support.fake_openai import Answer, FakeServer, reset, text


class RawServer:
    """Loopback HTTP server answering the n-th request with `answers[n]`: a list of byte
    pieces written one by one (a short pause between them; a None piece closes the
    connection there), or `"close"` to close the connection without answering. Records each request's head and body."""

    def __init__(self, answers: list) -> None:
        self.answers = list(answers)
        self.requests: list[tuple[bytes, bytes]] = []
        self.connections = 0

    async def __aenter__(self) -> RawServer:
        self.server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        self.url = f"http://127.0.0.1:{self.server.sockets[0].getsockname()[1]}/v1/chat/completions"
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.server.close()
        await self.server.wait_closed()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            while True:
                try:
                    head = await reader.readuntil(b"\r\n\r\n")
                except (asyncio.IncompleteReadError, ConnectionError):
                    return
                length = next(
                    int(line.split(b":")[1])
                    for line in head.split(b"\r\n")
                    if line.lower().startswith(b"content-length:")
                )
                body = await reader.readexactly(length)
                self.requests.append((head, body))
                answer = self.answers.pop(0)
                if answer == "close":
                    return
                for piece in answer:
                    if piece is None:
                        return
                    writer.write(piece)
                    await writer.drain()
                    await asyncio.sleep(0.005)
        except asyncio.CancelledError:
            pass  # the test is over and the server closing: nothing to report
        finally:
            writer.close()


def chunked(*pieces: bytes) -> bytes:
    return b"".join(b"%x\r\n%s\r\n" % (len(p), p) for p in pieces) + b"0\r\n\r\n"


HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"


async def post(pool: WirePool, url: str, payload: bytes = b"{}") -> tuple[int, dict, bytes]:
    async with pool.exchange(url, payload, {"Content-Type": "application/json"}) as response:
        return response.status, response.headers, await response.read()


async def test_a_chunked_body_split_anywhere_reads_whole_and_the_connection_is_reused():
    body = chunked(b"data: one\n\n", b"data: two\n\n")
    whole = HEAD + body
    # Split inside the head, inside a size line, inside data and inside the final CRLF.
    splits = [
        whole[:10],
        whole[10 : len(HEAD) + 1],
        whole[len(HEAD) + 1 : len(HEAD) + 7],
        whole[len(HEAD) + 7 : -3],
        whole[-3:],
    ]
    async with RawServer([splits, [whole], [whole]]) as server, WirePool(limit=1) as pool:
        for _ in range(3):
            status, headers, got = await post(pool, server.url, b'{"a": 1}')
            assert (status, got) == (200, b"data: one\n\ndata: two\n\n")
            assert headers["content-type"] == "text/event-stream"
        assert pool.connections_made == 1 and server.connections == 1
    head, payload = server.requests[0]
    assert head.startswith(b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1:")
    assert b"Content-Length: 8\r\n" in head and payload == b'{"a": 1}'


async def test_content_length_close_delimited_gzip_and_interim_responses():
    plain = b'{"ok": true}'
    squeezed = gzip.compress(plain)
    answers = [
        [b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\n" + plain],
        [b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: %d\r\n\r\n" % len(squeezed), squeezed],
        [
            b"HTTP/1.1 200 OK\r\nContent-Encoding: deflate\r\nTransfer-Encoding: chunked\r\n\r\n"
            + chunked(zlib.compress(plain))
        ],
        [b"HTTP/1.0 500 Oops\r\n\r\n", b"no length: until the close", None],
    ]
    async with RawServer(answers) as server, WirePool(limit=1) as pool:
        assert await post(pool, server.url) == (200, {"content-length": "12"}, plain)
        assert (await post(pool, server.url))[2] == plain
        assert (await post(pool, server.url))[2] == plain
        status, _, got = await post(pool, server.url)
        assert (status, got) == (500, b"no length: until the close")
        assert pool.connections_made == 1  # the first three on one kept-alive connection


@pytest.mark.parametrize(
    "answer, error, message",
    [
        (
            [b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab", None],
            WireDisconnected,
            "before the response ended",
        ),
        ("close", WireDisconnected, "before the response ended"),
        ([b"SSH-2.0-OpenSSH\r\n\r\n"], WireProtocolError, "not an HTTP/1.x status line"),
        (
            [b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n-5\r\nabcde\r\n0\r\n\r\n"],
            WireProtocolError,
            "not hexadecimal",
        ),
        ([b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Encoding: br\r\n\r\nabc"], WireProtocolError, "encoding"),
        ([b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Encoding: gzip\r\n\r\nabc"], WireProtocolError, "corrupt"),
        (
            [b"HTTP/1.1 200 OK\r\nX-Long: " + b"a" * 70_000],
            WireProtocolError,
            "a response head longer than 65536 bytes",
        ),
        (
            [b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + b"1" * 5000],
            WireProtocolError,
            "a chunk size line longer",
        ),
    ],
)
async def test_a_broken_response_is_a_classified_error_and_the_connection_is_not_reused(answer, error, message):
    async with RawServer([answer, [HEAD + chunked(b"fine")]]) as server, WirePool(limit=1) as pool:
        with pytest.raises(error, match=message) as caught:
            await post(pool, server.url)
        expected = "reset" if error is WireDisconnected else "transport"
        assert classify_exception(caught.value)[0] == expected
        # The next request gets a fresh connection and its answer.
        assert (await post(pool, server.url))[2] == b"fine"
        assert pool.connections_made == 2


async def test_a_refused_connection_is_a_connect_error():
    probe = await asyncio.start_server(lambda r, w: None, "127.0.0.1", 0)
    port = probe.sockets[0].getsockname()[1]
    probe.close()
    await probe.wait_closed()
    async with WirePool() as pool:
        with pytest.raises(WireConnectError, match=f"127.0.0.1:{port}") as caught:
            await post(pool, f"http://127.0.0.1:{port}/v1/chat/completions")
    assert classify_exception(caught.value)[0] == "connect"


async def test_a_header_that_would_split_the_request_is_refused_before_sending():
    async with RawServer([]) as server, WirePool() as pool:
        with pytest.raises(ValueError, match="cannot carry"):
            async with pool.exchange(server.url, b"{}", {"X-Evil": "a\r\nInjected: yes"}):
                pass
    assert server.requests == []


async def test_a_reader_that_stops_early_lets_the_connection_finish_then_reuses_it():
    # The engine stops reading at [DONE]; the stream's last chunk comes a moment later.
    first = [HEAD + b"e\r\ndata: [DONE]\n\n\r\n", b"0\r\n\r\n"]
    async with RawServer([first, [HEAD + chunked(b"again")]]) as server, WirePool(limit=1) as pool:
        async with pool.exchange(server.url, b"{}", {}) as response:
            async for piece in response.chunks():
                assert b"[DONE]" in piece
                break
        assert (await post(pool, server.url))[2] == b"again"
        assert pool.connections_made == 1


async def test_the_limit_bounds_open_connections_and_waiters_get_them_in_turn():
    answers = [[HEAD + chunked(b"x%d" % i)] for i in range(12)]
    async with RawServer(answers) as server, WirePool(limit=3) as pool:
        got = await asyncio.gather(*(post(pool, server.url) for _ in range(12)))
        assert sorted(body for _, _, body in got) == sorted(b"x%d" % i for i in range(12))
        assert pool.connections_made == 3 and server.connections == 3


async def test_a_cancelled_request_closes_its_connection_and_frees_its_slot():
    slow = [HEAD, b"5\r\nhello\r\n"]  # never ends
    async with RawServer([slow, [HEAD + chunked(b"next")]]) as server, WirePool(limit=1) as pool:
        with pytest.raises(TimeoutError):
            async with asyncio.timeout(0.2):
                await post(pool, server.url)
        assert (await post(pool, server.url))[2] == b"next"
        assert pool.connections_made == 2


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    body=st.binary(max_size=600),
    sizes=st.lists(st.integers(1, 97), min_size=1, max_size=12),
    cuts=st.lists(st.integers(1, 200), max_size=8),
)
def test_any_chunking_and_any_read_split_give_back_the_body(body, sizes, cuts):
    pieces, rest = [], body
    for size in sizes * (len(body) // max(1, sum(sizes)) + 1):
        if not rest:
            break
        pieces.append(rest[:size])
        rest = rest[size:]
    whole = HEAD + chunked(*pieces)
    splits, at = [], 0
    for cut in cuts:
        if at + cut >= len(whole):
            break
        splits.append(whole[at : at + cut])
        at += cut
    splits.append(whole[at:])

    async def go() -> bytes:
        async with RawServer([splits]) as server, WirePool() as pool:
            return (await post(pool, server.url))[2]

    assert asyncio.run(go()) == body


async def test_stream_chat_through_the_wire_client_reads_an_answer_and_classifies_a_reset():
    script = {"ok": text("billing", chunk_chars=2), "gone": reset()}
    with FakeServer(script) as server:
        async with WirePool(limit=2) as pool:
            ok = await stream_chat(pool, server.url, _body("ok"))
            gone = await stream_chat(pool, server.url, _body("gone"))
    assert ok.error_class is None and ok.acc.answer().text == "billing" and ok.status == 200
    assert ok.bytes_in > 0 and ok.acc.ttft_ms() is not None
    assert gone.error_class == "reset" and "connection" in gone.error


def _body(task: str) -> dict:
    return {
        "model": "fake-model",
        "stream": True,
        "stream_options": {"include_usage": True},
        "messages": [{"role": "user", "content": task}],
    }


async def test_a_request_past_its_timeout_fails_as_a_timeout_and_frees_its_connection():
    never_ends = [HEAD, b"5\r\nhello\r\n"]
    async with RawServer([never_ends, [HEAD + chunked(b"next")]]) as server, WirePool(limit=1) as pool:
        loop = asyncio.get_running_loop()
        started = loop.time()
        response = await pool.request(server.url, b"{}", {}, timeout_s=0.3)
        with pytest.raises(TimeoutError, match="within 0.3 s"):
            await response.read()
        pool.release(response, failed=True)
        took = loop.time() - started
        assert 0.3 <= took < 0.3 + 0.2  # the deadline, give or take the pool's tick
        # In time: answered, not failed, and the reaper stops once nothing is watched.
        response = await pool.request(server.url, b"{}", {}, timeout_s=5)
        assert await response.read() == b"next"
        pool.release(response)
        assert not pool._deadlines


async def test_stream_chat_through_the_wire_client_times_out_as_timeout():
    script = {"slow": Answer(text="billing", headers_delay_s=1.0)}
    with FakeServer(script) as server:
        async with WirePool(limit=1) as pool:
            slow = await stream_chat(pool, server.url, _body("slow"), timeout_s=0.2)
    assert slow.error_class == "timeout" and slow.error == "no complete answer within 0.2 s"
    assert 150 <= slow.duration_ms < 600


class ClosingServer(RawServer):
    """A server that closes the connection right after each streamed response, though it said
    `Keep-Alive` (llama-server does this)."""

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            length = next(
                int(line.split(b":")[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length:")
            )
            self.requests.append((head, await reader.readexactly(length)))
            writer.write(
                HEAD.replace(b"\r\n\r\n", b"\r\nKeep-Alive: timeout=5, max=100\r\n\r\n") + chunked(b"data: [DONE]\n\n")
            )
            await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.CancelledError):
            pass
        finally:
            writer.close()


async def test_a_server_that_closes_after_each_response_never_gets_a_request_on_a_dead_connection():
    async with ClosingServer([]) as server, WirePool(limit=1) as pool:
        for _ in range(8):  # back to back: no pause for its close to arrive
            status, _, body = await post(pool, server.url)
            assert (status, body) == (200, b"data: [DONE]\n\n")
        assert len(server.requests) == 8 and pool.connections_made == 8
        origin = ("http", "127.0.0.1", int(server.url.split(":")[2].split("/")[0]))
        assert pool._keeps_alive == {(origin, "chunked"): False} and pool.resent == 0


async def test_a_server_that_keeps_connections_alive_is_learnt_after_its_first_answer():
    answers = [[HEAD + chunked(b"x%d" % i)] for i in range(6)]
    async with RawServer(answers) as server, WirePool(limit=2) as pool:
        await post(pool, server.url)
        await asyncio.sleep(SETTLE_S * 2)  # the first connection settles, then it is reused
        for _ in range(5):
            await post(pool, server.url)
        assert pool.connections_made == 1 and list(pool._keeps_alive.values()) == [True]


class LateClosingServer(RawServer):
    """llama-server's way, with its close arriving late (as on a loaded machine): a response
    with a length keeps the connection; after a streamed (chunked) one the server reads on for
    `close_after_s`, answers nothing more, and closes."""

    def __init__(self, close_after_s: float) -> None:
        super().__init__([])
        self.close_after_s = close_after_s

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                self.requests.append((head, b""))
                if head.startswith(b"GET "):
                    writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nKeep-Alive: timeout=5\r\n\r\n{}")
                    continue
                length = next(
                    int(line.split(b":")[1])
                    for line in head.split(b"\r\n")
                    if line.lower().startswith(b"content-length:")
                )
                await reader.readexactly(length)
                writer.write(
                    HEAD.replace(b"\r\n\r\n", b"\r\nKeep-Alive: timeout=5\r\n\r\n") + chunked(b"data: [DONE]\n\n")
                )
                await writer.drain()
                await asyncio.sleep(self.close_after_s)
                return
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.CancelledError):
            pass
        finally:
            writer.close()


async def test_keep_alive_is_learnt_per_framing_and_a_request_into_a_late_close_is_written_again():
    async with LateClosingServer(close_after_s=0.5) as server, WirePool(limit=1) as pool:
        origin = ("http", "127.0.0.1", int(server.url.split(":")[2].split("/")[0]))
        async with pool.exchange(server.url, b"", {}, method="GET") as response:  # the identity probe
            assert await response.read() == b"{}"
        await asyncio.sleep(SETTLE_S * 2)
        assert pool._keeps_alive == {(origin, "length"): True}
        for _ in range(6):  # back to back; the first reuses the probe's connection, as it may
            status, _, body = await post(pool, server.url)
            assert (status, body) == (200, b"data: [DONE]\n\n")
            await asyncio.sleep(SETTLE_S * 2)  # long enough to settle, too short for the close
        # The first streamed connection outlived the settling and was reused: that request met
        # the close, unanswered, and went again on a new connection; from then on none is reused.
        assert pool._keeps_alive == {(origin, "length"): True, (origin, "chunked"): False}
        assert pool.resent == 1
        assert len(server.requests) == 1 + 6 and pool.connections_made == 6  # the unanswered one went unread


async def test_a_reused_connection_closed_after_part_of_an_answer_is_not_written_again():
    answers = [[HEAD + chunked(b"x")], [b"HTTP/1.1 200 OK\r\n", None]]
    async with RawServer(answers) as server, WirePool(limit=1) as pool:
        await post(pool, server.url)
        await asyncio.sleep(SETTLE_S * 2)
        with pytest.raises(WireDisconnected):
            await post(pool, server.url)  # the server read it and began to answer: not sent twice
        assert pool.resent == 0 and len(server.requests) == 2


async def test_a_new_connection_closed_without_an_answer_is_an_error_not_a_second_request():
    async with RawServer(["close"]) as server, WirePool(limit=1) as pool:
        with pytest.raises(WireDisconnected):
            await post(pool, server.url)
        assert pool.resent == 0 and len(server.requests) == 1


async def test_a_kept_alive_connection_closed_unanswered_is_written_again_once():
    answers = [[HEAD + chunked(b"x")], "close", [HEAD + chunked(b"y")]]
    async with RawServer(answers) as server, WirePool(limit=1) as pool:
        assert (await post(pool, server.url))[2] == b"x"
        await asyncio.sleep(SETTLE_S * 2)
        assert (await post(pool, server.url))[2] == b"y"
        assert pool.resent == 1 and server.connections == 2 and len(server.requests) == 3

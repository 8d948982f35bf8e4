"""`compare-tui gateway up|status|down`: a LiteLLM proxy on loopback in front of a hosted model.

The provider key stays the user's: the proxy's process reads it from the variable `--key-env`
names (LiteLLM's `os.environ/VAR` in its config), which compare-tui hands to that process and
to nothing else; compare-tui never writes, logs or stores it (the config, the state file and
the catalogue entry name the variable, never its value). Runs reach the proxy with a gateway
key of its own (LiteLLM's master key, from `--gateway-key-env`, default
`COMPARE_TUI_GATEWAY_KEY`), which the catalogue entry's `key_env` names and the run confirms
before its first task (`catalogue.check_key`).

The proxy is the pinned `litellm[proxy]` in `$COMPARE_TUI_LITELLM_VENV` (what the test command
provisions), else a `litellm` on PATH. It starts with a clean environment (no ambient proxy,
database or other key), `LITELLM_LOCAL_MODEL_COST_MAP=True` (no price-list fetch at start),
listens on 127.0.0.1 only, and is recorded in `<state>/gateway/gateway.json` (pid, port, command
line); `down` signals the pid only while `/proc/PID/cmdline` is still that command line.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from compare_tui.errors import CompareTuiError
from compare_tui.local import traffic_log
from compare_tui.paths import state_dir
from compare_tui.settings import current

PROVIDERS = ("openai", "anthropic", "azure", "gemini", "mistral", "groq", "together_ai", "openrouter", "cohere")
DEFAULT_KEY_ENV = {
    "openai": "OPENAI_API_KEY",
    "anthropic": "ANTHROPIC_API_KEY",
    "azure": "AZURE_API_KEY",
    "gemini": "GEMINI_API_KEY",
    "mistral": "MISTRAL_API_KEY",
    "groq": "GROQ_API_KEY",
    "together_ai": "TOGETHERAI_API_KEY",
    "openrouter": "OPENROUTER_API_KEY",
    "cohere": "COHERE_API_KEY",
}
DEFAULT_GATEWAY_KEY_ENV = "COMPARE_TUI_GATEWAY_KEY"
START_TIMEOUT_S = 240.0
"""Importing LiteLLM takes 10-30 s on a loaded 2-core machine."""


class GatewayError(CompareTuiError):
    """The gateway could not be started or found; the message says what to do."""


@dataclass(frozen=True)
class GatewayRecord:
    pid: int
    port: int
    provider: str
    model: str
    route: str
    key_env: str
    gateway_key_env: str
    cmdline: list[str]
    config: str
    log: str
    started_at: float
    traffic_log: str = ""
    """The JSONL file the proxy's callback appends each answered request to (empty: a gateway
    started before the traffic log existed)."""

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"


def gateway_dir() -> Path:
    return state_dir() / "gateway"


def _record_path() -> Path:
    return gateway_dir() / "gateway.json"


def read_record() -> GatewayRecord | None:
    try:
        return GatewayRecord(**json.loads(_record_path().read_text(encoding="utf-8")))
    except (OSError, ValueError, TypeError):
        return None


def gateway_traffic_log() -> Path | None:
    """The managed gateway's traffic log (one JSON line a request it answered), when a gateway
    was brought up here and its log exists; None otherwise."""
    record = read_record()
    if record is None or not record.traffic_log:
        return None
    path = Path(record.traffic_log)
    return path if path.is_file() else None


def litellm_executable(explicit: str | None = None) -> Path:
    """The LiteLLM to start: `explicit`, else `$COMPARE_TUI_LITELLM_VENV/bin/litellm`, else PATH."""
    if explicit:
        candidates = [Path(explicit)]
    else:
        venv = current().litellm_venv
        candidates = [venv / "bin" / "litellm"] if venv else []
        found = shutil.which("litellm")
        candidates += [Path(found)] if found else []
    for candidate in candidates:
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return candidate
    raise GatewayError(
        "no LiteLLM proxy found: install the pinned one (pip install 'litellm[proxy]==1.108.7' in a virtual "
        "environment of its own) and set COMPARE_TUI_LITELLM_VENV to it, or pass --litellm PATH"
    )


def config_text(provider: str, model: str, route: str, key_env: str, api_base: str | None) -> str:
    """The proxy's config: one route; keys only as `os.environ/VAR` references (JSON is YAML)."""
    params: dict[str, Any] = {"model": f"{provider}/{model}", "api_key": f"os.environ/{key_env}"}
    if api_base:
        params["api_base"] = api_base
    config = {
        "model_list": [{"model_name": route, "litellm_params": params}],
        "general_settings": {"master_key": "os.environ/LITELLM_MASTER_KEY"},
        "litellm_settings": {"telemetry": False, "drop_params": True, "callbacks": [traffic_log.CALLBACK]},
    }
    return json.dumps(config, indent=1)


def install_traffic_log(folder: Path) -> Path:
    """Copy the callback (package data) beside the config, where LiteLLM loads it by path."""
    source = Path(traffic_log.__file__)
    target = folder / f"{traffic_log.MODULE}.py"
    target.write_text(source.read_text(encoding="utf-8"), encoding="utf-8")
    return folder / "traffic.jsonl"


def traffic_env(log: Path) -> dict[str, str]:
    """What the callback reads in the proxy's process: where to append, and the sampler's
    redaction module to scrub with (by path: the proxy's interpreter is LiteLLM's own)."""
    from compare_tui.sampling import redaction

    return {traffic_log.LOG_ENV: str(log), traffic_log.REDACTION_ENV: str(Path(redaction.__file__))}


def stated_digest(provider: str, model: str) -> str:
    """The hosted model's identity as stated: sha256 of the canonical JSON of provider and
    model id (host attestation, not verified), so a renamed or retired id shows."""
    stated = json.dumps({"id": model, "provider": provider}, sort_keys=True, separators=(",", ":"))
    return "sha256:" + hashlib.sha256(stated.encode("utf-8")).hexdigest()


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _alive(record: GatewayRecord) -> bool:
    try:
        raw = Path(f"/proc/{record.pid}/cmdline").read_bytes()
    except OSError:
        return False
    actual = [part.decode(errors="replace") for part in raw.split(b"\0")[:-1]]
    # `litellm` is a script: the kernel runs its interpreter, so the process's command line is
    # the interpreter, then the recorded command line.
    return actual[-len(record.cmdline) :] == record.cmdline


def _healthy(port: int, timeout_s: float = 2.0) -> bool:
    import httpx

    from compare_tui.endpoint.client import probe_client

    try:
        with probe_client(timeout_s=timeout_s) as client:
            return client.get(f"http://127.0.0.1:{port}/health/liveliness").status_code == 200
    except httpx.HTTPError:
        return False


def up(
    *,
    provider: str,
    model: str,
    route: str,
    key_env: str,
    gateway_key: str,
    gateway_key_env: str,
    api_base: str | None = None,
    port: int | None = None,
    litellm: str | None = None,
    environ: dict[str, str] | None = None,
) -> GatewayRecord:
    """Start the proxy and wait until it answers; `GatewayError` when it cannot, naming its log."""
    env_in = os.environ if environ is None else environ
    running = read_record()
    if running is not None and _alive(running):
        raise GatewayError(
            f"a gateway is already running (pid {running.pid}, {running.url}, {running.provider}/{running.model}); "
            "stop it with `compare-tui gateway down` first"
        )
    if not env_in.get(key_env, "").strip():
        raise GatewayError(
            f"${key_env} is not set: the gateway's process reads your {provider} key from it "
            f"(compare-tui never does); export {key_env}=… in this shell, or name another variable with --key-env"
        )
    executable = litellm_executable(litellm)
    folder = gateway_dir()
    folder.mkdir(parents=True, exist_ok=True)
    config = folder / "litellm.yaml"
    config.write_text(config_text(provider, model, route, key_env, api_base), encoding="utf-8")
    log = folder / "litellm.log"
    traffic = install_traffic_log(folder)
    port = port or _free_port()
    cmdline = [str(executable), "--config", str(config), "--host", "127.0.0.1", "--port", str(port)]
    process = _spawn(cmdline, folder, log, _child_env(env_in, folder, key_env, gateway_key, traffic))
    record = GatewayRecord(
        pid=process.pid,
        port=port,
        provider=provider,
        model=model,
        route=route,
        key_env=key_env,
        gateway_key_env=gateway_key_env,
        cmdline=cmdline,
        config=str(config),
        log=str(log),
        started_at=time.time(),
        traffic_log=str(traffic),
    )
    _record_path().write_text(json.dumps(asdict(record), indent=1), encoding="utf-8")
    return _wait_healthy(record, process)


def _child_env(
    env_in: Mapping[str, str], folder: Path, key_env: str, gateway_key: str, traffic: Path
) -> dict[str, str]:
    # A clean environment: the provider key, the gateway key and the traffic log's two paths,
    # and nothing else of the caller's.
    return {
        "PATH": env_in.get("PATH", "/usr/bin:/bin"),
        "HOME": str(folder),
        "LANG": "C.UTF-8",
        "PYTHONUNBUFFERED": "1",
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "NO_PROXY": "*",
        key_env: env_in[key_env],
        "LITELLM_MASTER_KEY": gateway_key,
        **traffic_env(traffic),
    }


def _spawn(cmdline: list[str], folder: Path, log: Path, env: dict[str, str]) -> subprocess.Popen[bytes]:
    with log.open("ab") as sink:
        return subprocess.Popen(
            cmdline, cwd=folder, env=env, stdout=sink, stderr=subprocess.STDOUT, start_new_session=True
        )


def restart(environ: Mapping[str, str] | None = None) -> GatewayRecord:
    """Stop the recorded proxy and start it again on the same port with the config as it is now
    (without a database, LiteLLM reads its routes and their weights only at start). The keys come
    from the caller's environment again, by the variables the record names."""
    env_in = os.environ if environ is None else environ
    record = read_record()
    if record is None or not _alive(record):
        raise GatewayError("no gateway is running: start one with `compare-tui gateway up`")
    missing = [name for name in (record.key_env, record.gateway_key_env) if not env_in.get(name, "").strip()]
    if missing:
        raise GatewayError(
            f"restarting the gateway needs ${' and $'.join(missing)} in this shell (the proxy reads its keys at "
            "start); export them as for `compare-tui gateway up`"
        )
    folder = Path(record.config).parent
    traffic = install_traffic_log(folder)  # this compare-tui's callback, also after an upgrade
    down()
    env = _child_env(env_in, folder, record.key_env, env_in[record.gateway_key_env], traffic)
    process = _spawn(record.cmdline, folder, Path(record.log), env)
    restarted = GatewayRecord(**{**asdict(record), "pid": process.pid, "started_at": time.time()})
    _record_path().write_text(json.dumps(asdict(restarted), indent=1), encoding="utf-8")
    return _wait_healthy(restarted, process)


def _wait_healthy(record: GatewayRecord, process: subprocess.Popen[bytes]) -> GatewayRecord:
    log, port = Path(record.log), record.port
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            _record_path().unlink(missing_ok=True)
            tail = log.read_text(encoding="utf-8", errors="replace")[-600:]
            raise GatewayError(
                f"the LiteLLM proxy exited at start (code {process.returncode}); its log {log} ends:\n{tail}"
            )
        if _healthy(port):
            return record
        time.sleep(0.5)
    down()
    raise GatewayError(f"the LiteLLM proxy did not answer within {START_TIMEOUT_S:.0f} s; see {log}")


@dataclass(frozen=True)
class GatewayStatus:
    record: GatewayRecord
    alive: bool
    healthy: bool
    uptime_s: float


def status() -> GatewayStatus | None:
    record = read_record()
    if record is None:
        return None
    alive = _alive(record)
    return GatewayStatus(record, alive, alive and _healthy(record.port), time.time() - record.started_at)


def down(timeout_s: float = 10.0) -> str:
    """Stop the recorded proxy: `stopped`, `killed`, `already gone` or `nothing recorded`."""
    record = read_record()
    if record is None:
        return "nothing recorded"
    outcome = "already gone"
    if _alive(record):
        os.killpg(record.pid, signal.SIGTERM)
        outcome = "stopped"
        deadline = time.monotonic() + timeout_s
        while _alive(record) and time.monotonic() < deadline:
            time.sleep(0.1)
        if _alive(record):
            os.killpg(record.pid, signal.SIGKILL)
            outcome = "killed"
        try:
            os.waitpid(record.pid, 0)
        except ChildProcessError:
            pass
    _record_path().unlink(missing_ok=True)
    return outcome


@dataclass(frozen=True)
class TablePrice:
    usd_per_mtok_input: float
    usd_per_mtok_output: float
    captured: str
    source: str


def table_price(executable: Path, provider: str, model: str) -> TablePrice | None:
    """The model's token price from the price table bundled with this LiteLLM, or None.

    The table carries no date of its own: `captured` is the day the file was written on this
    machine (when LiteLLM was installed), and the source says so."""
    tables = sorted(
        executable.resolve().parent.parent.glob(
            "lib/python*/site-packages/litellm/model_prices_and_context_window_backup.json"
        )
    )
    if not tables:
        return None
    try:
        table = json.loads(tables[-1].read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    row = table.get(f"{provider}/{model}") or table.get(model)
    if not isinstance(row, dict) or "input_cost_per_token" not in row or "output_cost_per_token" not in row:
        return None
    day = time.strftime("%Y-%m-%d", time.gmtime(tables[-1].stat().st_mtime))
    return TablePrice(
        usd_per_mtok_input=round(float(row["input_cost_per_token"]) * 1e6, 6),
        usd_per_mtok_output=round(float(row["output_cost_per_token"]) * 1e6, 6),
        captured=day,
        source=f"LiteLLM's bundled price table ({tables[-1].name}, written to this machine {day}; "
        f"the table's own source: {row.get('source', 'not stated')})",
    )

"""`up`, `status` and `down`: the lifecycle of the local llama.cpp servers.

`up` is all-or-nothing: if any server fails to start, the ones it started are stopped again
and the error says why. Servers already running with the same settings are reused, so `up` is
idempotent. Every state change happens under a file lock and is written before waiting.
"""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from compare_tui.local import server, state
from compare_tui.local.bundled import BUNDLED, ModelFile, bundled_model, ensure_models
from compare_tui.local.catalogue_writer import DEFAULT_USD_PER_HOUR, write_catalogue
from compare_tui.local.errors import BindFailed, LocalError
from compare_tui.local.state import LocalProps, ServerRecord
from compare_tui.local.stop import StopOutcome, stop_server

DEFAULT_PARALLEL = 4
DEFAULT_CTX = 4096
START_TIMEOUT_S = 120.0
_MIN_CTX_PER_SLOT = 256


@dataclass(frozen=True)
class ServerInfo:
    """A running local server, as `up` leaves it."""

    name: str
    pid: int
    port: int
    endpoint: str
    model_file: Path
    sha256: str
    revision: str
    quantisation: str
    log_path: Path
    props: LocalProps
    threads: int | None = None

    @classmethod
    def from_record(cls, r: ServerRecord) -> ServerInfo:
        return cls(
            r.name,
            r.pid,
            r.port,
            r.endpoint,
            Path(r.model_file),
            r.sha256,
            r.revision,
            r.quantisation,
            Path(r.log_path),
            r.props.copy(),
            r.threads,
        )


@dataclass(frozen=True)
class LocalCluster:
    """What `up` returns: every server now running, and the catalogue written for them."""

    servers: tuple[ServerInfo, ...]
    catalogue_path: Path
    reused: tuple[str, ...] = ()
    """Names that were already running with the same settings (not restarted)."""

    def server(self, name: str) -> ServerInfo:
        for info in self.servers:
            if info.name == name:
                return info
        raise KeyError(name)


@dataclass(frozen=True)
class ServerStatus:
    name: str
    pid: int
    port: int
    endpoint: str
    running: bool
    uptime_s: float
    health: str
    log_path: Path


def default_catalogue_path() -> Path:
    return state.local_state_dir() / "models.toml"


def _names(models: Iterable[str] | None) -> list[str]:
    names = list(dict.fromkeys(models)) if models else list(BUNDLED)
    for name in names:
        bundled_model(name)  # raises with the list of known names
    return names


def _check_settings(parallel: int, ctx: int, usd_per_hour: float) -> None:
    if parallel < 1:
        raise LocalError(f"--parallel must be at least 1 (got {parallel})", "use e.g. --parallel 4")
    if ctx // parallel < _MIN_CTX_PER_SLOT:
        raise LocalError(
            f"--ctx {ctx} split over {parallel} slots leaves {ctx // parallel} tokens per request",
            f"use --ctx {_MIN_CTX_PER_SLOT * parallel} or more, or fewer --parallel slots",
        )
    if not usd_per_hour > 0:
        raise LocalError(f"--usd-per-hour must be above zero (got {usd_per_hour})", "use e.g. 0.10")


PREFERRED_FIRST_PORT = 18181
"""Without --port, bundled model number i (in `BUNDLED` order) takes this port + i when it is
free: the same endpoint after every `local up`, so the model's configuration (and with it an
experiment's cell) stays the same across restarts. A taken port falls back to a free one."""


def _preferred_ports(names: list[str], taken: set[int]) -> list[int]:
    order = list(BUNDLED)
    ports: list[int] = []
    for name in names:
        preferred = PREFERRED_FIRST_PORT + order.index(name)
        if preferred not in taken and preferred not in ports and server.port_is_free(preferred):
            ports.append(preferred)
        else:
            ports += _pick_ports(1, None, taken | set(ports))
    return ports


def _pick_ports(count: int, first: int | None, taken: set[int]) -> list[int]:
    ports: list[int]
    if first is not None:
        ports = [first + i for i in range(count)]
        for port in ports:
            if not server.port_is_free(port):
                raise server.port_busy_error(port)
        return ports
    ports = []
    while len(ports) < count:  # the kernel may hand out the same free port twice in a row
        port = server.free_port()
        if port not in taken and port not in ports:
            ports.append(port)
    return ports


def usable_cores() -> int:
    """The cores this process may run on (its affinity mask, else the machine's count)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def share_threads(servers: int, cores: int | None = None) -> int:
    """Each server's share of the cores: at least one thread, never more than the cores. With
    llama.cpp's default every server uses every core, and servers that busy-wait against each
    other on a small machine run many times slower (bench/bench_threads.py)."""
    return max(1, (cores or usable_cores()) // max(1, servers))


def _launch(
    mf: ModelFile, port: int, *, ctx: int, parallel: int, jinja: bool, threads: int | None
) -> tuple[ServerRecord, subprocess.Popen[bytes]]:
    template = _template_file(mf, jinja)
    cmdline = server.server_cmdline(
        mf.path,
        name=mf.model.name,
        port=port,
        ctx=ctx,
        parallel=parallel,
        jinja=jinja,
        threads=threads,
        chat_template_file=template,
    )
    log_path = state.local_state_dir() / "logs" / f"{mf.model.name}.log"
    proc = server.start(cmdline, log_path)
    record = ServerRecord(
        name=mf.model.name,
        pid=proc.pid,
        port=port,
        model_file=str(mf.path),
        sha256=mf.sha256,
        revision=mf.revision,
        quantisation=mf.model.quantisation,
        started_at=time.time(),
        log_path=str(log_path),
        cmdline=cmdline,
        ctx=ctx,
        parallel=parallel,
        jinja=jinja,
        threads=threads,
        chat_template_file=None if template is None else str(template),
    )
    return record, proc


def _template_file(mf: ModelFile, jinja: bool) -> Path | None:
    """compare-tui's template for this model (checked against its pin), or None. Only with
    Jinja: without it llama.cpp formats chats with its built-in templates and refuses tools."""
    return mf.model.chat_template.path() if jinja and mf.model.chat_template is not None else None


def _reusable(running: ServerRecord, mf: ModelFile, ctx: int, parallel: int, jinja: bool) -> bool:
    template = _template_file(mf, jinja)
    same = (running.sha256, running.model_file, running.ctx, running.parallel, running.jinja) == (
        mf.sha256,
        str(mf.path),
        ctx,
        parallel,
        jinja,
    )
    if same and running.chat_template_file != (None if template is None else str(template)):
        raise LocalError(
            f"{running.name} is already running (pid {running.pid}, port {running.port}) with chat "
            f"template {running.chat_template_file or 'from the GGUF'}, not {template or 'the GGUF one'}",
            f"stop it first: compare-tui local down --model {running.name}",
        )
    if not same:
        raise LocalError(
            f"{running.name} is already running (pid {running.pid}, port {running.port}) with "
            f"ctx={running.ctx}, parallel={running.parallel}, jinja={running.jinja}",
            f"stop it first: compare-tui local down --model {running.name}",
        )
    if server.health(running.port) != "ok":
        raise LocalError(
            f"{running.name} is already running (pid {running.pid}) but is not healthy "
            f"(health: {server.health(running.port)})",
            f"wait a moment, or restart it: compare-tui local down --model {running.name}",
        )
    return True


def _await(
    records: list[ServerRecord],
    record: ServerRecord,
    proc: subprocess.Popen[bytes],
    *,
    auto_port: bool,
    timeout_s: float,
) -> ServerRecord:
    """Wait for one server; when a port we picked was taken in between (another program bound
    it after we checked), start again on a new free port, up to three times."""
    for attempt in range(3):
        try:
            server.wait_healthy(
                proc, name=record.name, port=record.port, log_path=Path(record.log_path), timeout_s=timeout_s
            )
            return record
        except LocalError as exc:
            if not auto_port or not isinstance(exc, BindFailed) or attempt == 2:
                raise
        server.CHILDREN.pop(record.pid, None)
        fresh, proc = _relaunch(record, _pick_ports(1, None, {r.port for r in records})[0])
        records[records.index(record)] = fresh
        state.save_records(records)
        record = fresh
    raise AssertionError("unreachable")


def _relaunch(record: ServerRecord, port: int) -> tuple[ServerRecord, subprocess.Popen[bytes]]:
    cmdline = list(record.cmdline)
    cmdline[cmdline.index("--port") + 1] = str(port)
    proc = server.start(cmdline, Path(record.log_path))
    return ServerRecord(
        **{**record.__dict__, "pid": proc.pid, "port": port, "cmdline": cmdline, "started_at": time.time()}
    ), proc


def up(
    models: Iterable[str] | None = None,
    *,
    parallel: int = DEFAULT_PARALLEL,
    ctx: int = DEFAULT_CTX,
    usd_per_hour: float = DEFAULT_USD_PER_HOUR,
    catalogue_path: str | os.PathLike[str] | None = None,
    jinja: bool = True,
    port: int | None = None,
    timeout_s: float = START_TIMEOUT_S,
    threads: int | None = None,
    default_threads: bool = False,
) -> LocalCluster:
    """Start one llama-server per bundled model (default: all), wait until each is healthy, and
    write the catalogue of every running server. `port` is the first of consecutive ports to
    use (default: free ones). `threads` per server (default: the usable cores shared between the
    servers that will run; `default_threads`: llama.cpp's own default, every core each).
    Raises LocalError with a fix on every failure a user can meet."""
    names = _names(models)
    _check_settings(parallel, ctx, usd_per_hour)
    if threads is not None and threads < 1:
        raise LocalError(f"--threads must be at least 1 (got {threads})", "use e.g. --threads 1")
    server.binary_path()  # fail before hashing 350 MB when the extra is missing
    with state.locked():
        records = [r for r in state.load_records() if state.is_ours(r)]  # drop stale entries
        state.save_records(records)
        files = ensure_models(names)  # each GGUF hashed once, here
        reused = [
            mf.model.name
            for mf in files
            if any(r.name == mf.model.name and _reusable(r, mf, ctx, parallel, jinja) for r in records)
        ]
        to_start = [mf for mf in files if mf.model.name not in reused]
        in_use = {r.port for r in records}
        ports = (
            _pick_ports(len(to_start), port, in_use)
            if port is not None
            else _preferred_ports([mf.model.name for mf in to_start], in_use)
        )
        starting = {mf.model.name for mf in to_start}
        total = len({r.name for r in records} | starting)
        per_server = None if default_threads else (threads or share_threads(total))
        try:
            launched = []
            for mf, chosen in zip(to_start, ports):
                record, proc = _launch(mf, chosen, ctx=ctx, parallel=parallel, jinja=jinja, threads=per_server)
                records.append(record)
                state.save_records(records)  # before waiting: a crash now still leaves a record
                launched.append((record, proc))
            for record, proc in launched:
                _await(records, record, proc, auto_port=port is None, timeout_s=timeout_s)
            for record in records:
                if not record.props:
                    record.props = server.read_props(record.port, Path(record.model_file))
            state.save_records(records)
        except BaseException:  # includes Ctrl-C: never leave half a cluster behind
            for record in records:
                if record.name in starting:
                    stop_server(record)
            state.save_records([r for r in records if r.name not in starting])
            raise
    from compare_tui.catalogue.errors import CatalogueError

    path = Path(catalogue_path) if catalogue_path else default_catalogue_path()
    try:
        write_catalogue(records, path, usd_per_hour)
    except OSError as exc:
        raise LocalError(
            f"the servers run, but the catalogue could not be written to {path}: {exc}",
            "pass a writable --catalogue PATH (`compare-tui local down` stops the servers)",
        ) from None
    except CatalogueError as exc:  # an existing file that does not load: never overwritten
        raise LocalError(
            f"the servers run, but their catalogue could not be written: {exc}",
            "fix or move that file, then run `compare-tui local up` again (running servers are "
            "reused), or pass another --catalogue PATH",
        ) from None
    return LocalCluster(tuple(ServerInfo.from_record(r) for r in records), path, tuple(reused))


def status() -> list[ServerStatus]:
    """Every recorded server: whether it still runs, its uptime and what `/health` says."""
    result = []
    for r in state.load_records():
        running = state.is_ours(r)
        health = server.health(r.port) if running else "not running (stale entry; `up` or `down` clears it)"
        result.append(
            ServerStatus(
                r.name,
                r.pid,
                r.port,
                r.endpoint,
                running,
                state.uptime_s(r) if running else 0.0,
                health,
                Path(r.log_path),
            )
        )
    return result


def down(models: Iterable[str] | None = None) -> list[StopOutcome]:
    """Stop exactly the servers recorded in the state file (default: all of them) and forget
    them. Works from any process, also after the one that ran `up` has crashed."""
    wanted = set(models) if models else None
    with state.locked():
        records = state.load_records()
        keep = [r for r in records if wanted is not None and r.name not in wanted]
        outcomes = [stop_server(r) for r in records if r not in keep]
        state.save_records(keep)
    return outcomes

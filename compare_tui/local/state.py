"""What `local up` started, on disk: `<state_dir>/local/servers.json`.

The file is the only memory `down` has, so it is written before a server is waited on (a crash
while it loads still leaves a record) and always atomically (temp file + rename). A recorded pid
is trusted only while `/proc/<pid>/cmdline` still equals the recorded command line: pids are
reused, and killing a stranger's process is the one mistake `down` must never make.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import TypedDict

from compare_tui import paths
from compare_tui.local.errors import LocalError

HOST = "127.0.0.1"


class LocalProps(TypedDict, total=False):
    """What a local server's `/props` and GGUF header said, as the state file keeps it
    (`server.read_props`); empty until the server was healthy."""

    build_info: str
    n_ctx: int | None
    total_slots: int | None
    model_ftype: str | None
    chat_template_sha256: str
    """Of the template the server uses (of "" when it gave none)."""
    chat_template_in_gguf: bool
    supports_tools: bool


@dataclass
class ServerRecord:
    """One llama-server that `up` started (or was starting when it stopped)."""

    name: str
    pid: int
    port: int
    model_file: str
    sha256: str
    revision: str
    quantisation: str
    started_at: float
    """Unix time the process was started."""
    log_path: str
    cmdline: list[str]
    ctx: int
    parallel: int
    jinja: bool
    props: LocalProps = field(default_factory=lambda: LocalProps())
    """Serving notes read from the server's `/props` once it was healthy (empty before)."""
    threads: int | None = None
    """`--threads`/`--threads-batch` it was started with (None: llama.cpp's default, all cores)."""
    chat_template_file: str | None = None
    """compare-tui's template it was started with (`--chat-template-file`); None: the GGUF's."""

    @property
    def endpoint(self) -> str:
        """The OpenAI-compatible base URL."""
        return f"http://{HOST}:{self.port}/v1"


def local_state_dir() -> Path:
    return paths.state_dir() / "local"


def state_file() -> Path:
    return local_state_dir() / "servers.json"


def load_records() -> list[ServerRecord]:
    """The recorded servers, alive or not; [] when nothing was ever started."""
    path = state_file()
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
        known = {f.name for f in fields(ServerRecord)}
        return [ServerRecord(**{k: v for k, v in item.items() if k in known}) for item in raw["servers"]]
    except FileNotFoundError:
        return []
    except (ValueError, KeyError, TypeError) as exc:
        raise LocalError(
            f"the local server state file {path} is unreadable ({exc})",
            f"stop any llama-server left running (pgrep -a llama-server; kill PID), then rm '{path}'",
        ) from None


def save_records(records: list[ServerRecord]) -> None:
    """Replace the state file atomically (an empty list removes it)."""
    path = state_file()
    if not records:
        path.unlink(missing_ok=True)
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps({"servers": [asdict(r) for r in records]}, indent=2), encoding="utf-8")
    os.replace(tmp, path)


@contextlib.contextmanager
def locked() -> Iterator[None]:
    """Serialise `up`/`down` across processes, so two of them never race on the state file."""
    directory = local_state_dir()
    directory.mkdir(parents=True, exist_ok=True)
    with open(directory / ".lock", "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def process_cmdline(pid: int) -> list[str] | None:
    """The live command line of `pid`, or None when there is no such (non-zombie) process."""
    proc = Path(f"/proc/{pid}/cmdline")
    if Path("/proc/self").exists():
        try:
            raw = proc.read_bytes().split(b"\0")
        except OSError:
            return None
        parts = [p.decode(errors="replace") for p in raw if p]
        return parts or None  # a zombie has an empty cmdline: it is gone for our purposes
    # No /proc (macOS): `ps` prints the argv joined by spaces, good enough to compare.
    out = subprocess.run(["ps", "-o", "args=", "-p", str(pid)], capture_output=True, text=True)
    return out.stdout.strip().split(" ") if out.returncode == 0 and out.stdout.strip() else None


def is_ours(record: ServerRecord) -> bool:
    """True while `record.pid` is still the exact llama-server process we started."""
    live = process_cmdline(record.pid)
    if live is None:
        return False
    if sys.platform.startswith("linux"):
        return live == record.cmdline
    return " ".join(live) == " ".join(record.cmdline)


def uptime_s(record: ServerRecord) -> float:
    return max(0.0, time.time() - record.started_at)

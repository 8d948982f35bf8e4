"""Run a user's program as a scorer inside a process sandbox (the `command` scorer).

Guarantees of `run_sandboxed`, each covered by tests/core/scoring/test_sandbox.py:
- cwd is a fresh temporary directory holding `files`, removed afterwards;
- the environment is an allow-list (PATH, LANG, LC_ALL, HOME, TMPDIR, COMPARE_TUI_*);
  nothing else from the parent, so no inherited secrets;
- a wall-clock limit; at the limit, and whenever the program exits, its whole process group
  is SIGKILLed, so background grandchildren die with it;
- rlimits CPU, address space, file size, core = 0, and NPROC (not enforced for root);
- stdout/stderr read incrementally, kept up to a cap each, the rest discarded; past a total
  byte budget the group is killed. Memory use is bounded whatever the program prints;
- a new network namespace (only a down loopback) where the OS allows it.
`SandboxResult.isolation` states what was actually in force. It is a process sandbox, not a
kernel sandbox: the program runs as this user and sees the filesystem as this user does.
Synchronous and thread-safe; callers in async code use `asyncio.to_thread`.
"""

from __future__ import annotations

import math
import os
import selectors
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from compare_tui.scoring import isolation

SAFE_PATH = "/usr/local/bin:/usr/bin:/bin"
_DRAIN_GRACE_S = 1.0
"""After a kill, how long to keep reading pipes that a process outside the group holds open."""
_POLL_S = 0.1


@dataclass(frozen=True, slots=True)
class Limits:
    """Resource limits for one sandboxed run. None leaves a limit as inherited."""

    cpu_s: int | None = None
    """CPU seconds (SIGXCPU); None means the wall-clock timeout rounded up, plus one."""
    address_space_bytes: int | None = 1 << 30
    file_size_bytes: int | None = 16 << 20
    nproc: int | None = 256
    stdout_cap_bytes: int = 64 << 10
    stderr_cap_bytes: int = 64 << 10
    output_budget_bytes: int = 8 << 20
    """Bytes read from stdout + stderr together before the group is killed."""
    isolate_network: bool = True
    """Ask for a network namespace; the result says whether one was in force."""
    path: str = SAFE_PATH


@dataclass(frozen=True, slots=True)
class SandboxResult:
    """How one sandboxed run ended. `error_reason` is None only for a clean exit 0 or 1."""

    exit_code: int | None
    """The exit status; None when killed by a signal or never started."""
    signal: int | None
    duration_s: float
    stdout: bytes
    stderr: bytes
    stdout_truncated: bool
    stderr_truncated: bool
    limit_hit: str | None
    """"timeout" or "output" when the sandbox killed the program for a limit, else None."""
    start_error: str | None
    isolation: dict[str, bool | str] = field(default_factory=dict)
    timeout_s: float = 0.0

    @property
    def error_reason(self) -> str | None:
        """Why this run measured nothing (start failure, limit, signal, other exit), or None."""
        if self.start_error is not None:
            return f"could not start: {self.start_error}"
        if self.limit_hit == "timeout":
            return f"timeout after {self.timeout_s:g}s (process group killed)"
        if self.limit_hit == "output":
            return "output budget exceeded (process group killed)"
        if self.signal is not None:
            return _signal_reason(self.signal)
        if self.exit_code not in (0, 1):
            return f"exit code {self.exit_code} (0 = pass, 1 = fail, anything else = error)"
        return None


def _signal_reason(signum: int) -> str:
    if signum == signal.SIGXCPU:
        return "CPU time limit exceeded (SIGXCPU)"
    if signum == signal.SIGXFSZ:
        return "file size limit exceeded (SIGXFSZ)"
    try:
        name = signal.Signals(signum).name
    except ValueError:
        name = "unknown"
    return f"killed by signal {signum} ({name})"


class _Capture:
    """Keeps the first `cap` bytes of a stream and counts the rest without storing them."""

    def __init__(self, cap: int) -> None:
        self.kept = bytearray()
        self.cap = cap
        self.seen = 0

    def add(self, chunk: bytes) -> None:
        self.seen += len(chunk)
        room = self.cap - len(self.kept)
        if room > 0:
            self.kept += chunk[:room]

    @property
    def truncated(self) -> bool:
        return self.seen > len(self.kept)


def _kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass  # nothing left in the group (or nothing we may signal)


def _leader_exited(pid: int) -> bool:
    # WNOWAIT: look without reaping, so the group id cannot be reused before we kill the group.
    try:
        return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:
        return True


def _await_leader(pid: int, deadline: float) -> bool:
    """Wait (without reaping) until the leader exits or the deadline passes; True if it exited."""
    pause = 0.001
    while not _leader_exited(pid):
        if time.monotonic() >= deadline:
            return False
        time.sleep(pause)
        pause = min(pause * 2, 0.05)
    return True


def _collect(proc: subprocess.Popen[bytes], deadline: float, limits: Limits) -> tuple[_Capture, _Capture, str | None]:
    """Read both pipes until EOF, killing the group at the deadline, on the budget, or as soon
    as the leader exits (which reaps stragglers and gives us EOF)."""
    assert proc.stdout is not None and proc.stderr is not None
    out, err = _Capture(limits.stdout_cap_bytes), _Capture(limits.stderr_cap_bytes)
    captures = {proc.stdout.fileno(): out, proc.stderr.fileno(): err}
    limit_hit: str | None = None
    killed_at: float | None = None
    with selectors.DefaultSelector() as sel:
        for fd in captures:
            sel.register(fd, selectors.EVENT_READ)
        while sel.get_map():
            now = time.monotonic()
            if killed_at is None and now >= deadline:
                limit_hit = "timeout"
            if killed_at is None and (limit_hit or _leader_exited(proc.pid)):
                _kill_group(proc.pid)
                killed_at = now
            if killed_at is not None and now - killed_at > _DRAIN_GRACE_S:
                break  # a process that left the group holds the pipe; stop waiting for it
            wait = _DRAIN_GRACE_S if killed_at is not None else min(_POLL_S, max(deadline - now, 0.0))
            for key, _ in sel.select(wait):
                chunk = os.read(key.fd, 65536)
                if not chunk:
                    sel.unregister(key.fd)
                    continue
                captures[key.fd].add(chunk)
                if killed_at is None and out.seen + err.seen > limits.output_budget_bytes:
                    limit_hit = "output"
                    _kill_group(proc.pid)
                    killed_at = time.monotonic()
    if killed_at is None and not _await_leader(proc.pid, deadline):
        limit_hit = "timeout"  # it closed its pipes but kept running
    _kill_group(proc.pid)
    return out, err, limit_hit


def _remove_tree(path: str) -> None:
    def make_writable_and_retry(func, failed_path, _exc_info):  # type: ignore[no-untyped-def]
        # A program may chmod its own files read-only; we still want the directory gone.
        try:
            os.chmod(os.path.dirname(failed_path), 0o700)
            func(failed_path)
        except OSError:
            pass

    shutil.rmtree(path, onerror=make_writable_and_retry)


def _environment(
    workdir: str, limits: Limits, env_files: Mapping[str, str], extra_env: Mapping[str, str]
) -> dict[str, str]:
    env = {
        "PATH": limits.path,
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "HOME": workdir,
        "TMPDIR": workdir,
        "COMPARE_TUI_WORKDIR": workdir,
    }
    for name in [*env_files, *extra_env]:
        if not name.startswith("COMPARE_TUI_"):
            raise ValueError(f"sandbox environment variable {name!r} must start with COMPARE_TUI_")
    env.update({name: os.path.join(workdir, file) for name, file in env_files.items()})
    env.update(extra_env)
    return env


def run_sandboxed(
    argv: Sequence[str],
    *,
    files: Mapping[str, bytes],
    stdin: bytes = b"",
    timeout_s: float,
    limits: Limits = Limits(),
    env_files: Mapping[str, str] | None = None,
    extra_env: Mapping[str, str] | None = None,
) -> SandboxResult:
    """Run `argv` in the sandbox and report how it ended; never raises for the program's sake.

    `files` (plain names, no folders) are written into the fresh working directory;
    `env_files` maps COMPARE_TUI_* variable names to those names (exported as absolute paths);
    `extra_env` adds literal COMPARE_TUI_* variables. `stdin` is fed from an unlinked file so
    a program that never reads it cannot block us. Raises ValueError only for bad arguments
    (a file name with a separator, a variable outside COMPARE_TUI_*)."""
    for name in files:
        if not name or os.sep in name or name in (".", ".."):
            raise ValueError(f"sandbox file name {name!r} must be a plain file name")
    plan, enter, report = _isolation(limits, timeout_s)
    workdir = tempfile.mkdtemp(prefix="compare-tui-score-")
    start = time.monotonic()
    try:
        for name, content in files.items():
            with open(os.path.join(workdir, name), "wb") as handle:
                handle.write(content)
        env = _environment(workdir, limits, env_files or {}, extra_env or {})
        try:
            proc = _spawn(argv, workdir, env, stdin, isolation.child_setup(plan, enter))
        except (OSError, subprocess.SubprocessError) as exc:
            return SandboxResult(
                exit_code=None,
                signal=None,
                duration_s=time.monotonic() - start,
                stdout=b"",
                stderr=b"",
                stdout_truncated=False,
                stderr_truncated=False,
                limit_hit=None,
                start_error=str(exc),
                isolation=report,
                timeout_s=timeout_s,
            )
        with proc:
            out, err, limit_hit = _collect(proc, start + timeout_s, limits)
            returncode = proc.wait()
        duration = time.monotonic() - start
    finally:
        _remove_tree(workdir)
    return SandboxResult(
        exit_code=returncode if returncode >= 0 else None,
        signal=-returncode if returncode < 0 else None,
        duration_s=duration,
        stdout=bytes(out.kept),
        stderr=bytes(err.kept),
        stdout_truncated=out.truncated,
        stderr_truncated=err.truncated,
        limit_hit=limit_hit,
        start_error=None,
        isolation=report,
        timeout_s=timeout_s,
    )


def _isolation(
    limits: Limits, timeout_s: float
) -> tuple[list[tuple[str, int, int, int]], Callable[[], None] | None, dict[str, bool | str]]:
    """What the child will be held to: the rlimit plan, the network namespace to enter (None
    when not requested or not available here), and the isolation report stored with the result."""
    wanted = {
        "cpu": limits.cpu_s or math.ceil(timeout_s) + 1,
        "as": limits.address_space_bytes,
        "fsize": limits.file_size_bytes,
        "core": 0,
        "nproc": limits.nproc,
    }
    plan = isolation.rlimit_plan(wanted)
    nproc_on, nproc_why = isolation.nproc_enforced()
    enter = None
    netns_how = "not requested"
    if limits.isolate_network:
        netns = isolation.network_namespace()
        netns_how = netns.how
        unshare = isolation.unshare_function()
        if netns.available and unshare is not None:
            enter = isolation.unshare_in_child(netns.flags, unshare, os.getuid(), os.getgid())
    report: dict[str, bool | str] = {
        "tempdir": True,
        "clean_env": True,
        "process_group_kill": True,
        "rlimits": ",".join(name for name, *_ in plan),
        "nproc_limit": nproc_on and limits.nproc is not None,
        "nproc_note": nproc_why,
        "network_namespace": enter is not None,
        "network_namespace_note": netns_how,
        "note": "process sandbox, not a kernel sandbox: runs as this user with this user's file "
        "access; a process that starts its own session escapes the group kill",
    }
    return plan, enter, report


def _spawn(
    argv: Sequence[str], workdir: str, env: dict[str, str], stdin: bytes, setup: Callable[[], None]
) -> subprocess.Popen[bytes]:
    """The program started in its own session and process group, in `workdir`, its stdin fed
    from an unlinked file (closed here once the child holds it)."""
    with tempfile.TemporaryFile() as stdin_file:
        stdin_file.write(stdin)
        stdin_file.seek(0)
        return subprocess.Popen(
            list(argv),
            cwd=workdir,
            env=env,
            stdin=stdin_file,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
            close_fds=True,
            preexec_fn=setup,
        )

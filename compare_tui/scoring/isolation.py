"""The OS-dependent parts of the command sandbox: network namespace, resource limits.

Everything here is lazy: the namespace probe runs on first use (once per process, cached),
never at import time. Linux only; elsewhere every probe answers "not available" with a reason.
"""

from __future__ import annotations

import ctypes
import functools
import os
import resource
import shutil
import subprocess
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass

CLONE_NEWNET = 0x40000000
CLONE_NEWUSER = 0x10000000
_CAP_SYS_ADMIN = 21
_CAP_SYS_RESOURCE = 24


@dataclass(frozen=True, slots=True)
class NetworkNamespace:
    """Whether a fresh network namespace (only a down `lo`) can be given to a child.

    `flags` are the `unshare(2)` flags that worked in the probe; `how` says, in words, which
    mechanism is used or why none is."""

    available: bool
    flags: int
    how: str


_probe_lock = threading.Lock()
_probed: NetworkNamespace | None = None


@functools.cache
def unshare_function() -> Callable[[int], int] | None:
    """libc's `unshare`, or None where there is none (loaded once, on first use)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.unshare
    except (OSError, AttributeError):
        return None


def _write(path: str, text: str) -> None:
    fd = os.open(path, os.O_WRONLY)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


def unshare_in_child(flags: int, unshare: Callable[[int], int], uid: int, gid: int) -> Callable[[], None]:
    """A callable for the forked child that enters new namespaces with `flags`.

    With CLONE_NEWUSER (unprivileged users), maps the caller's uid/gid onto themselves so
    files and `id` look the same inside. Raises OSError in the child on failure, which makes
    Popen fail: a command never runs believing it is isolated when it is not."""

    def enter() -> None:
        if unshare(flags) != 0:
            err = ctypes.get_errno()
            raise OSError(err, f"unshare(0x{flags:x}) failed: {os.strerror(err)}")
        if flags & CLONE_NEWUSER:
            _write("/proc/self/setgroups", "deny")
            _write("/proc/self/uid_map", f"{uid} {uid} 1")
            _write("/proc/self/gid_map", f"{gid} {gid} 1")

    return enter


def network_namespace() -> NetworkNamespace:
    """Probe (first call only, then cached) whether this process can start a child in a new
    network namespace: plain CLONE_NEWNET (root or CAP_SYS_ADMIN), else an unprivileged user
    namespace with CLONE_NEWUSER | CLONE_NEWNET. Thread-safe."""
    global _probed
    with _probe_lock:
        if _probed is None:
            _probed = _probe()
        return _probed


def _probe() -> NetworkNamespace:
    unshare = unshare_function()
    if unshare is None:
        return NetworkNamespace(False, 0, f"unshare(2) is not available on {sys.platform}")
    probe_argv = [shutil.which("true") or "/bin/true"]
    if not os.path.exists(probe_argv[0]):
        probe_argv = [sys.executable, "-c", ""]
    failures = []
    for flags, how in (
        (CLONE_NEWNET, "unshare(CLONE_NEWNET) in the child"),
        (CLONE_NEWUSER | CLONE_NEWNET, "unprivileged user + network namespace in the child"),
    ):
        enter = unshare_in_child(flags, unshare, os.getuid(), os.getgid())
        try:
            subprocess.run(
                probe_argv,
                preexec_fn=enter,
                check=True,
                timeout=10,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        except (OSError, subprocess.SubprocessError) as exc:
            failures.append(f"{how}: {exc}")
            continue
        return NetworkNamespace(True, flags, how)
    return NetworkNamespace(False, 0, "no network namespace could be created (" + "; ".join(failures) + ")")


def _effective_capabilities() -> int:
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("CapEff:"):
                    return int(line.split()[1], 16)
    except (OSError, ValueError):
        pass
    return 0


def nproc_enforced() -> tuple[bool, str]:
    """Whether RLIMIT_NPROC would bind a child of this process, and why not when it wouldn't.

    The kernel skips the check for root's user and for CAP_SYS_ADMIN / CAP_SYS_RESOURCE holders,
    so under root the limit is set but has no effect; we say so rather than claim it."""
    if os.getuid() == 0:
        return False, "not enforced: the command runs as root, which the kernel exempts"
    caps = _effective_capabilities()
    if caps & (1 << _CAP_SYS_ADMIN | 1 << _CAP_SYS_RESOURCE):
        return False, "not enforced: the process holds CAP_SYS_ADMIN or CAP_SYS_RESOURCE"
    return True, "enforced (counts every process of this user)"


def rlimit_plan(wanted: dict[str, int | None]) -> list[tuple[str, int, int, int]]:
    """`(name, resource, soft, hard)` for each wanted limit (None = leave as inherited),
    clamped to this process's hard limits so `setrlimit` in the child cannot fail.

    Names: cpu (seconds; hard = soft + 1 so SIGXCPU comes before SIGKILL), as, fsize, nproc,
    core (bytes/count as the kernel defines them)."""
    ids = {
        "cpu": resource.RLIMIT_CPU,
        "as": resource.RLIMIT_AS,
        "fsize": resource.RLIMIT_FSIZE,
        "nproc": resource.RLIMIT_NPROC,
        "core": resource.RLIMIT_CORE,
    }
    plan = []
    for name, value in wanted.items():
        if value is None:
            continue
        res = ids[name]
        _, hard_now = resource.getrlimit(res)
        soft, hard = value, (value + 1 if name == "cpu" else value)
        if hard_now != resource.RLIM_INFINITY:
            soft, hard = min(soft, hard_now), min(hard, hard_now)
        plan.append((name, res, soft, hard))
    return plan


def child_setup(
    plan: list[tuple[str, int, int, int]], enter_namespace: Callable[[], None] | None
) -> Callable[[], None]:
    """The `preexec_fn` for the sandboxed child: set the rlimits, then enter the namespace.

    It runs between fork and exec, so it only calls setrlimit and the prepared unshare (no
    imports, no locks): this keeps the documented preexec_fn-with-threads risk small."""

    def setup() -> None:
        for _, res, soft, hard in plan:
            resource.setrlimit(res, (soft, hard))
        if enter_namespace is not None:
            enter_namespace()

    return setup

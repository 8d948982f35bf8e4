"""A real local multi-node Ray cluster for tests and benchmarks, on loopback only.

Ray's servers listen on every interface of the node's address, and Ray refuses loopback as a
node address while the machine has another interface. So the cluster lives in a network
namespace of its own holding only a loopback interface (`LoopbackNamespace`): there every
listener is reachable from inside the namespace alone, and the fixed ports (6379, 10001) collide
with nothing else on the machine. Every process that talks to the cluster (the driver, the fake
model server it asks) runs inside the namespace too, through `LoopbackNamespace.command`.

`RayTestCluster` starts a head (`ray start --head --block --num-cpus 1`) and further nodes
(`ray start --address … --block --num-cpus 1`, separate raylets), each in a process group of its
own, stopped by pid; `kill_node(i)` SIGKILLs one node's whole group as a crash would.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

RAY = str(Path(sys.executable).with_name("ray"))
GCS_PORT = 6379
CLIENT_PORT = 10001
SECRET = "LEAKY_SECRET"
"""Set in every node's environment (so in every Ray worker's): a sandbox must not pass it on."""


class LoopbackNamespace:
    """A network namespace with only `lo` (up), held open by a sleeping process."""

    def __init__(self) -> None:
        self.holder: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> LoopbackNamespace:
        if shutil.which("unshare") is None or shutil.which("nsenter") is None:
            raise RuntimeError("the Ray tests need unshare and nsenter (util-linux): apt-get install util-linux")
        self.holder = subprocess.Popen(
            ["unshare", "--net", "--", "sh", "-c", "ip link set lo up && echo up && exec sleep infinity"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        assert self.holder.stdout is not None
        if self.holder.stdout.readline().strip() != b"up":
            err = self.holder.stderr.read().decode() if self.holder.stderr else ""
            self.holder.kill()
            raise RuntimeError(f"could not make a loopback-only network namespace (needs root): {err}")
        return self

    def command(self, argv: list[str]) -> list[str]:
        """`argv` run inside the namespace."""
        assert self.holder is not None
        return ["nsenter", f"--net=/proc/{self.holder.pid}/ns/net", "--", *argv]

    def __exit__(self, *exc: object) -> None:
        if self.holder is not None:
            self.holder.kill()
            self.holder.wait()


class ThisNamespace:
    """Stands in for `LoopbackNamespace` in a process already inside one (the benchmark re-runs
    itself under `unshare --net`): commands run as they are."""

    def command(self, argv: list[str]) -> list[str]:
        return argv


class _Node:
    def __init__(self, proc: subprocess.Popen[str], name: str) -> None:
        self.proc, self.name = proc, name
        self.lines: list[str] = []
        self.started = threading.Event()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.append(line)
            if "Ray runtime started" in line:
                self.started.set()

    def wait_started(self, timeout_s: float) -> None:
        if not self.started.wait(timeout_s):
            raise RuntimeError(f"Ray {self.name} did not start in {timeout_s:g}s:\n" + "".join(self.lines[-30:]))


class RayTestCluster:
    """A head plus `nodes - 1` more nodes, one CPU each, inside `ns`."""

    def __init__(self, ns: LoopbackNamespace | ThisNamespace, *, nodes: int = 2, cpus_per_node: int = 1) -> None:
        self.ns, self.count, self.cpus = ns, nodes, cpus_per_node
        self.temp = tempfile.mkdtemp(prefix="ctr-", dir="/tmp")  # short: Ray's socket paths hang off it
        self.nodes: list[_Node] = []
        self.address = f"127.0.0.1:{GCS_PORT}"

    def _env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("RAY_", "COMPARE_TUI_"))}
        env[SECRET] = "must-not-reach-a-scorer"
        env["RAY_USAGE_STATS_ENABLED"] = "0"
        # A lost node is noticed within a couple of seconds, not the default half a minute.
        env["RAY_health_check_period_ms"] = "500"
        env["RAY_health_check_timeout_ms"] = "500"
        env["RAY_health_check_failure_threshold"] = "3"
        return env

    def _start(self, args: list[str], name: str) -> _Node:
        argv = [RAY, "start", "--block", "--num-cpus", str(self.cpus), "--object-store-memory", str(80 << 20), *args]
        proc = subprocess.Popen(
            self.ns.command(argv),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env=self._env(),
            start_new_session=True,  # its own group: stopped (or crashed) as one
        )
        node = _Node(proc, name)
        self.nodes.append(node)
        return node

    def start(self, timeout_s: float = 90.0) -> RayTestCluster:
        head = self._start(
            [
                "--head",
                "--port",
                str(GCS_PORT),
                "--ray-client-server-port",
                str(CLIENT_PORT),
                "--include-dashboard=false",
                "--disable-usage-stats",
                "--temp-dir",
                self.temp,
            ],
            "head",
        )
        head.wait_started(timeout_s)
        for i in range(1, self.count):
            self._start(["--address", self.address], f"node {i}").wait_started(timeout_s)
        return self

    def add_node(self, timeout_s: float = 90.0) -> None:
        self._start(["--address", self.address], f"node {len(self.nodes)}").wait_started(timeout_s)

    def kill_node(self, index: int) -> None:
        """SIGKILL node `index`'s raylet and every process of its group, as a crash would."""
        _signal_group(self.nodes[index].proc, signal.SIGKILL)
        self.nodes[index].proc.wait()

    def stop(self) -> None:
        for node in reversed(self.nodes):
            if node.proc.poll() is None:
                _signal_group(node.proc, signal.SIGTERM)
        deadline = time.monotonic() + 5
        for node in reversed(self.nodes):
            try:
                node.proc.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                _signal_group(node.proc, signal.SIGKILL)
                node.proc.wait()
        shutil.rmtree(self.temp, ignore_errors=True)


def _signal_group(proc: subprocess.Popen[str], signum: int) -> None:
    try:
        os.killpg(proc.pid, signum)
    except ProcessLookupError:
        pass

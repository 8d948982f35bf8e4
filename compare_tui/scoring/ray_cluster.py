"""`RayScorers`: command scorers on a Ray cluster (the optional `compare-tui[ray]` extra).

What travels, and why as an explicit payload: each scorer call carries the task, the scorer and
the answer by value, and a reference to one object in the cluster's object store holding the
set's files (the bytes and modes of every file the set's digest covers: the scorers' scripts and
schemas), put there once per set and checked against the digest's hashes first. A worker writes
them into a fresh folder and runs the same `score_command` this machine runs
(`scoring/on_worker.py`), so no worker reads the driver's disk by path, and what ran is exactly
what the run's digest names (a Ray `working_dir` would upload the whole folder, and be checked
against nothing). compare-tui's own code travels as the job's Ray runtime environment
(`py_modules`), so every worker runs the driver's version of the sandbox; the workers need
Python with compare-tui's dependencies and Ray (`pip install 'compare-tui[ray]'`).

Results come back to the run's process, which alone writes them (the engine's writer). A node
lost mid-scorer: Ray runs the call again elsewhere, at most `RETRIES` more times; its result is
taken once. A call that cannot finish within its wait (no node could take it, or every retry was
lost) comes back `unavailable`: its task stays not done, and a resume scores it again.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import os
import socket
import stat
from collections.abc import AsyncGenerator, Mapping, Sequence
from pathlib import Path
from typing import Any

from compare_tui.errors import CompareTuiError
from compare_tui.goldset.models import GoldenSet
from compare_tui.scoring.dispatch import score
from compare_tui.scoring.executor import RayNode, RayPlacement, Scored, ScoreItem, is_command
from compare_tui.scoring.result import ScoreResult
from compare_tui.settings import current

RETRIES = 2
"""Times Ray runs a scorer again on another node after the node running it was lost."""
DEFAULT_WAIT_S = 300.0
"""How long a scorer may wait to be placed on a node, beyond its own time limit (and each retry's),
before its task is left not done. `COMPARE_TUI_SCORER_WAIT_S` overrides it."""
CONNECT_TIMEOUT_S = 5.0
"""The TCP probe of the cluster's address, before Ray is asked to connect (Ray itself waits long)."""


class ScorerClusterError(CompareTuiError):
    """The scorer cluster cannot be used: the run is refused before any model request."""


def _probe(address: str) -> None:
    """Refuse at once an address where nothing listens (Ray would retry for half a minute)."""
    hostport = address.removeprefix("ray://")
    host, sep, port = hostport.rpartition(":")
    if not sep or not port.isdigit():
        raise ScorerClusterError(
            f"--scorers ray={address}: not an address; give `auto` (a cluster started on this machine), "
            "`ray://HOST:10001` (Ray Client) or the head's GCS address `HOST:6379`"
        )
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=CONNECT_TIMEOUT_S):
            pass
    except OSError as exc:
        raise ScorerClusterError(
            f"the Ray cluster at {address} cannot be reached ({exc}); nothing was sent to any model. "
            "Start the cluster (`ray start --head`), correct the address, or score on this machine "
            "(--scorers local)"
        ) from None


def _wait_from_env() -> float:
    """`$COMPARE_TUI_SCORER_WAIT_S` (checked by `settings.current`), else the default."""
    wait = current().scorer_wait_s
    return DEFAULT_WAIT_S if wait is None else wait


def _set_payload(goldset: GoldenSet) -> dict[str, tuple[bytes, int]]:
    """Every file the set's digest covers, with its mode, checked against the digest's hash."""
    payload = {}
    for rel, sha in goldset.files.items():
        path = goldset.root / rel
        try:
            data = path.read_bytes()
            mode = stat.S_IMODE(os.stat(path).st_mode)
        except OSError as exc:
            raise ScorerClusterError(f"{path}: cannot be read to send to the scorer cluster ({exc})") from None
        if hashlib.sha256(data).hexdigest() != sha:
            raise ScorerClusterError(
                f"{path} changed since the golden set was loaded (its digest names another content); "
                "run again so the run's digest and the scorers agree"
            )
        payload[rel] = (data, mode)
    return payload


def _remote_score(set_files: Mapping[str, tuple[bytes, int]], task: Any, spec: Any, answer: Any) -> Any:
    """The Ray task: runs on a worker (imports there), says which node it ran on."""
    import ray

    from compare_tui.scoring.on_worker import score_on_worker

    util: Any = ray.util  # untyped in Ray's stubs
    node = {"node_id": ray.get_runtime_context().get_node_id(), "node_ip": util.get_node_ip_address()}
    return score_on_worker(set_files, task, spec, answer, node)


class RayScorers:
    """Command scorers on a Ray cluster; `connect()` first (it refuses an unusable cluster)."""

    kind = "ray"

    def __init__(
        self,
        address: str = "auto",
        *,
        jobs: int | None = None,
        wait_s: float | None = None,
        resources: Mapping[str, float] | None = None,
    ) -> None:
        """`jobs`: scorers in flight at once (None: the cluster's CPUs when it connects);
        `wait_s`: see `DEFAULT_WAIT_S`; `resources`: extra Ray resources each scorer needs."""
        if jobs is not None and jobs < 1:
            raise ValueError(f"scorer jobs must be at least 1, not {jobs}")
        self.address = address
        self.jobs = jobs
        self.wait_s = wait_s if wait_s is not None else _wait_from_env()
        self.resources = dict(resources or {})
        self.nodes: list[RayNode] = []
        self.gcs_address: str | None = None
        self._ray: Any = None
        self._remote: Any = None
        self._payloads: dict[str, Any] = {}
        self._slots: asyncio.Semaphore | None = None
        self._slots_loop: asyncio.AbstractEventLoop | None = None

    def connect(self) -> None:
        """Connect to the cluster, ship compare-tui's code with the job, and list its nodes.

        Raises `ScorerClusterError` (nothing sent to any model) when Ray is not installed, the
        address does not answer, or the cluster has no CPU for a scorer."""
        try:
            import ray
        except ImportError:
            raise ScorerClusterError(
                "--scorers ray needs Ray on this machine: pip install 'compare-tui[ray]' "
                "(or score on this machine with --scorers local)"
            ) from None
        import compare_tui

        if self.address != "auto":
            _probe(self.address)
        _cluster_messages_to_stderr()
        try:
            ray.init(
                address=self.address,
                # By path, not the module object: Ray Client (ray://) pickles the runtime environment.
                runtime_env={"py_modules": [str(Path(compare_tui.__file__).parent)]},
                namespace="compare-tui",
                logging_level=logging.ERROR,
                log_to_driver=False,
            )
        except Exception as exc:  # noqa: BLE001 - Ray raises ConnectionError, RuntimeError, ValueError…
            if self.address == "auto":  # Ray's own words here advise flags of its CLI, not ours
                raise ScorerClusterError(
                    "--scorers ray looks for a Ray cluster started on this machine and found none; nothing "
                    "was sent to any model. Start one (`ray start --head`), name a cluster "
                    "(--scorers ray=ray://HOST:10001) or score here (--scorers local)"
                ) from None
            raise ScorerClusterError(
                f"could not connect to the Ray cluster at {self.address}: {type(exc).__name__}: {exc}; "
                "nothing was sent to any model. Start it (`ray start --head`) or correct --scorers"
            ) from None
        self._ray = ray
        try:  # what `auto` (or a client address) resolved to; Ray Client does not say
            self.gcs_address = str(ray.get_runtime_context().gcs_address)
        except Exception:  # noqa: BLE001 - not available through Ray Client
            self.gcs_address = None
        cluster: Any = ray  # `ray.nodes` is untyped
        self.nodes = [
            {"node_id": n["NodeID"], "address": n["NodeManagerAddress"], "cpus": n["Resources"].get("CPU", 0)}
            for n in cluster.nodes()
            if n.get("Alive")
        ]
        cpus = int(sum(n["cpus"] for n in self.nodes))
        if cpus < 1:
            self.close()
            raise ScorerClusterError(
                f"the Ray cluster at {self.address} has no CPU for a scorer (nodes: {len(self.nodes)}); "
                "add a node with CPUs (`ray start --address … --num-cpus N`)"
            )
        self.jobs = self.jobs or cpus
        self._remote = ray.remote(num_cpus=1, max_retries=RETRIES, retry_exceptions=False, resources=self.resources)(
            _remote_score
        )

    def describe(self) -> RayPlacement:
        return {
            "kind": self.kind,
            "address": self.address,
            "gcs_address": self.gcs_address,
            "nodes": self.nodes,
            "jobs": self.jobs,
            "retries": RETRIES,
            "wait_s": self.wait_s,
            "payload": "task, scorer and answer by value; the set's digested files once per set "
            "(object store); compare-tui's code as the job's runtime environment",
        }

    def _payload(self, goldset: GoldenSet) -> Any:
        ref = self._payloads.get(goldset.digest)
        if ref is None:
            ref = self._payloads[goldset.digest] = self._ray.put(_set_payload(goldset))
        return ref

    async def score_batch(self, goldset: GoldenSet, items: Sequence[ScoreItem]) -> AsyncGenerator[Scored, None]:
        if self._remote is None:
            raise RuntimeError("RayScorers.connect() was not called")
        for item in items:
            if not is_command(item):
                yield Scored(item, score(item.task, item.spec, item.answer, set_root=goldset.root))
        commands = [item for item in items if is_command(item)]
        if not commands:
            return
        loop = asyncio.get_running_loop()
        if self._slots is None or self._slots_loop is not loop:  # a semaphore serves one event loop
            self._slots, self._slots_loop = asyncio.Semaphore(self.jobs or 1), loop
        payload = self._payload(goldset)
        for finished in asyncio.as_completed([self._one(payload, item) for item in commands]):
            yield await finished

    async def _one(self, payload: Any, item: ScoreItem) -> Scored:
        assert self._slots is not None
        # At most `jobs` calls in flight, so a call in flight is one the cluster can start now:
        # its wait then measures placement, not a queue of our own making.
        async with self._slots:
            ref = self._remote.remote(payload, item.task, item.spec, item.answer)
            wait = self.wait_s + (item.spec.timeout_s + 1) * (RETRIES + 1)
            try:
                result, where = await asyncio.wait_for(asyncio.wrap_future(ref.future()), wait)
            except TimeoutError:
                self._ray.cancel(ref, force=True)
                return Scored(
                    item,
                    None,
                    f"no node of the Ray cluster at {self.address} finished the scorer within {wait:g}s "
                    "(none could take it, or each was lost); the task is left not done: resume the run",
                )
            except asyncio.CancelledError:
                self._ray.cancel(ref, force=True)
                raise
            except Exception as exc:  # noqa: BLE001 - a lost node after the retries, a worker that crashed
                return Scored(
                    item,
                    None,
                    f"the scorer could not be run on the Ray cluster at {self.address} "
                    f"({type(exc).__name__}: {str(exc).splitlines()[0][:200] if str(exc) else ''}); "
                    "the task is left not done: resume the run",
                )
        return Scored(item, _placed(result, where, self.gcs_address or self.address))

    def close(self) -> None:
        if self._ray is not None:
            self._ray.shutdown()
            self._ray = None
            self._remote = None
            self._payloads.clear()


def _cluster_messages_to_stderr() -> None:
    """Ray prints the cluster's error messages (a node marked dead, a worker killed) to the
    driver's stdout, where they would corrupt `run --json`: send them to stderr instead."""
    import ray._private.worker as ray_worker

    original = getattr(ray_worker, "print_to_stdstream", None)
    if original is None or getattr(original, "compare_tui_stderr", False):
        return

    def to_stderr(data: dict[str, Any], ignore_prefix: bool) -> None:
        original({**data, "is_err": True}, ignore_prefix)

    to_stderr.compare_tui_stderr = True  # type: ignore[attr-defined]
    ray_worker.print_to_stdstream = to_stderr


def _placed(result: ScoreResult, where: Mapping[str, str], address: str) -> ScoreResult:
    """`result` with where it ran added to its isolation (what the report states)."""
    isolation = dict(result.isolation or {})
    isolation["ran_on"] = f"ray node {where.get('node_ip')} ({str(where.get('node_id'))[:8]}) of {address}"
    return ScoreResult(result.outcome, result.detail, result.data, isolation)

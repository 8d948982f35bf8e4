"""Command scorers on a real local multi-node Ray cluster (`--scorers ray=ADDRESS`).

The cluster (a head and a second raylet, one CPU each, `tests/support/ray_cluster.py`) lives in
a loopback-only network namespace for this module alone; the fake model server and every
`compare-tui run` that uses the cluster run inside it. Model answers come from the fake server:
what is under test is where and how the answers are scored.
"""

from __future__ import annotations

import json
import os
import socket
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.fake_openai import FakeServer
from tests.support.ray_cluster import CLIENT_PORT, GCS_PORT, SECRET, LoopbackNamespace, RayTestCluster
from tests.tui.test_tui_data import write_catalogue

ROOT = Path(__file__).resolve().parents[2]

CHECK = """\
import os, sys, time
task = os.environ["COMPARE_TUI_TASK_ID"]
delay = float(open(sys.argv[1]).read())
marks = sys.argv[2] if len(sys.argv) > 2 else None
if marks:
    open(os.path.join(marks, f"{task}-{os.getpid()}.start"), "w").close()
time.sleep(delay)
n = int(task[1:])
if n % 5 == 4:
    print("the check itself broke on", task)
    sys.exit(3)
print("checked", task)
sys.exit(0 if n % 2 == 0 else 1)
"""

PROBE = f"""\
import os, socket, sys
wrong = []
if "{SECRET}" in os.environ:
    wrong.append("inherited {SECRET}")
cwd = os.getcwd()
if not os.path.basename(cwd).startswith("compare-tui-score-") or cwd != os.environ.get("COMPARE_TUI_WORKDIR"):
    wrong.append("cwd " + cwd)
if not os.path.exists("answer.txt"):
    wrong.append("no answer.txt")
if not os.path.exists(os.path.join(os.environ["COMPARE_TUI_SET_ROOT"], "probe.py")):
    wrong.append("the set's files did not travel")
try:
    socket.create_connection(("127.0.0.1", {GCS_PORT}), timeout=2).close()
    wrong.append("reached the cluster's port {GCS_PORT}")
except OSError:
    pass
print("sandbox held" if not wrong else "; ".join(wrong))
sys.exit(1 if wrong else 0)
"""


def _write_set(root: Path, n: int, delay: float, marks: Path | None = None, timeout_s: float = 20) -> Path:
    (root / "tasks").mkdir(parents=True)
    (root / "check.py").write_text(CHECK)
    (root / "probe.py").write_text(PROBE)
    (root / "delay.txt").write_text(str(delay))
    run = ["python3", "check.py", "delay.txt"] + ([str(marks)] if marks else [])
    (root / "golden.toml").write_text(
        'workload_id = "ray-scorers"\nname = "Ray scorers"\nversion = "1.0.0"\n'
        f'[default_scorer]\nkind = "command"\nrun = {json.dumps(run)}\ntimeout_s = {timeout_s}\n'
        "[run]\nmax_tokens = 8\n"
    )
    for i in range(n):
        task = {"id": f"t{i}", "input": {"prompt": f"t{i}"}, "expected": {"text": "fox"}}
        (root / "tasks" / f"t{i}.json").write_text(json.dumps(task))
    return root


def _add_sandbox_tasks(root: Path) -> None:
    probe = {"kind": "command", "run": ["python3", "probe.py"], "timeout_s": 20}
    slow = {"kind": "command", "run": ["python3", "-c", "import time; time.sleep(30)"], "timeout_s": 1}
    for task_id, scorer in (("sandbox", probe), ("too-slow", slow)):
        task = {"id": task_id, "input": {"prompt": task_id}, "expected": {"text": "fox"}, "scorer": scorer}
        (root / "tasks" / f"{task_id}.json").write_text(json.dumps(task))


def _env(tmp: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("COMPARE_TUI_", "RAY_"))}
    env["PYTHONPATH"] = str(ROOT)
    env["COMPARE_TUI_STATE_DIR"] = str(tmp / "state")
    return env


class _Bench:
    """The namespace, the cluster, and a fake model server inside the namespace."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.ns = LoopbackNamespace().__enter__()
        self.cluster = RayTestCluster(self.ns, nodes=2)
        self.server: subprocess.Popen[str] | None = None
        try:
            self.cluster.start()
            self.server = subprocess.Popen(
                self.ns.command([sys.executable, "-m", "tests.support.fake_openai", "--mode", "zero-delay"]),
                cwd=ROOT,
                env=_env(tmp),
                stdout=subprocess.PIPE,
                text=True,
            )
            assert self.server.stdout is not None
            self.url = self.server.stdout.readline().strip()
            assert self.url.startswith("http://127.0.0.1:"), self.url
            self.catalogue = write_catalogue(tmp / "models.toml", self.url)
        except BaseException:
            self.close()
            raise

    def run(self, goldset: Path, store: Path, *options: str, wait: bool = True) -> subprocess.Popen[str]:
        argv = [sys.executable, "-m", "compare_tui", "run", str(goldset), "--model", "fake-a"]
        argv += ["--models", str(self.catalogue), "--store", str(store), "--concurrency", "4", "--json", *options]
        proc = subprocess.Popen(
            self.ns.command(argv), env=_env(self.tmp), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        if wait:
            proc.wait(240)
        return proc

    def close(self) -> None:
        if self.server is not None:
            self.server.terminate()
            self.server.wait(10)
        self.cluster.stop()
        self.ns.__exit__()


@pytest.fixture(scope="module")
def bench(tmp_path_factory):
    b = _Bench(tmp_path_factory.mktemp("ray"))
    try:
        yield b
    finally:
        b.close()


def _attempts(store: Path) -> list[dict]:
    with sqlite3.connect(store) as db:
        db.row_factory = sqlite3.Row
        return [dict(r) for r in db.execute("SELECT * FROM attempts ORDER BY task_id, attempt")]


def _environment(store: Path) -> dict:
    with sqlite3.connect(store) as db:
        (raw,) = db.execute("SELECT environment FROM runs").fetchone()
    return json.loads(raw)


def _finish(proc: subprocess.Popen[str]) -> tuple[int, dict | None, str]:
    out, err = proc.communicate(240)
    return proc.returncode, (json.loads(out) if out.strip() else None), err


@pytest.fixture(scope="module")
def scored_both_ways(bench):
    goldset = _write_set(bench.tmp / "set", 10, 0.3)
    _add_sandbox_tasks(goldset)
    local, ray, client = bench.tmp / "local.sqlite", bench.tmp / "ray.sqlite", bench.tmp / "client.sqlite"
    runs = {
        "local": _finish(bench.run(goldset, local, "--scorers", "local", wait=False)),
        "ray": _finish(bench.run(goldset, ray, "--scorers", f"ray={bench.cluster.address}", wait=False)),
        # The same cluster through Ray Client (ray://), the way a remote cluster is reached.
        "client": _finish(bench.run(goldset, client, "--scorers", f"ray=ray://127.0.0.1:{CLIENT_PORT}", wait=False)),
    }
    return runs, local, ray, client


def test_the_cluster_scores_as_this_machine_does(scored_both_ways):
    runs, local, ray, client = scored_both_ways
    for name, (code, summary, err) in runs.items():
        assert code == 0, f"{name}: {err}"
        assert summary["runs"][0]["status"] == "completed"

    def outcomes(store):
        return {a["task_id"]: (a["outcome"], a["score_detail"]) for a in _attempts(store)}

    assert outcomes(local) == outcomes(ray) == outcomes(client)
    seen = outcomes(ray)
    assert seen["t0"] == ("pass", "command passed: checked t0")
    assert seen["t1"] == ("fail", "command failed: checked t1")
    assert seen["t4"][0] == "error" and "exit code 3" in seen["t4"][1]
    assert len(_attempts(ray)) == 12  # one attempt per task, none written twice

    # The run states where its scorers ran: the cluster, its two nodes, each scorer's node.
    where = _environment(ray)["scorers"]
    assert where["kind"] == "ray" and where["address"] == "127.0.0.1:6379"
    assert len(where["nodes"]) == 2 and where["jobs"] == 2
    assert runs["ray"][1]["scorers"]["nodes"] == where["nodes"]
    placed = {json.loads(a["isolation"])["ran_on"] for a in _attempts(ray)}
    assert len(placed) == 2 and all(p.startswith("ray node 127.0.0.1") for p in placed)
    report = subprocess.run(
        [sys.executable, "-m", "compare_tui", "report", runs["ray"][1]["comparison"], "--store", str(ray)],
        env=_env(ray.parent),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert report.returncode == 0, report.stderr
    assert "ran on a Ray cluster (ray node 127.0.0.1" in " ".join(report.stdout.split())
    assert _environment(local)["scorers"]["kind"] == "local"


def test_the_sandbox_holds_on_a_worker(scored_both_ways):
    _, _, ray, _ = scored_both_ways
    by_task = {a["task_id"]: a for a in _attempts(ray)}
    probe = by_task["sandbox"]
    # Cleaned environment (the node's secret is gone), a fresh temp dir, the set's files there,
    # and no network: the probe could not reach the cluster's own port from inside the sandbox.
    assert (probe["outcome"], probe["score_detail"]) == ("pass", "command passed: sandbox held")
    isolation = json.loads(probe["isolation"])
    assert isolation["tempdir"] and isolation["clean_env"] and isolation["network_namespace"] is True
    slow = by_task["too-slow"]
    assert slow["outcome"] == "error" and "timeout after 1s (process group killed)" in slow["score_detail"]


def test_a_node_lost_mid_run_is_retried_on_the_head_nothing_lost_or_doubled(bench):
    marks = bench.tmp / "marks"
    marks.mkdir()
    goldset = _write_set(bench.tmp / "set-kill", 6, 3.0, marks)
    store = bench.tmp / "kill.sqlite"
    proc = bench.run(goldset, store, "--scorers", f"ray={bench.cluster.address}", wait=False)
    deadline = time.monotonic() + 120
    while len(list(marks.glob("*.start"))) < 2:  # one scorer on each node
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.1)
    bench.cluster.kill_node(1)
    code, summary, err = _finish(proc)
    attempts = _attempts(store)
    assert code == 0, (err, attempts)
    assert summary["runs"][0]["status"] == "completed" and summary["runs"][0]["not_done"] == 0, (err, attempts)
    assert sorted(a["task_id"] for a in attempts) == [f"t{i}" for i in range(6)]  # each once
    started = [p.name.split("-")[0] for p in marks.glob("*.start")]
    retried = {t for t in started if started.count(t) > 1}
    assert retried, f"no scorer was started twice: {sorted(started)}"
    head = {json.loads(a["isolation"])["ran_on"] for a in attempts if a["task_id"] in retried}
    assert len(head) == 1, (head, err)
    outcomes = {a["task_id"]: a["outcome"] for a in attempts}
    assert outcomes == {"t0": "pass", "t1": "fail", "t2": "pass", "t3": "fail", "t4": "error", "t5": "fail"}
    bench.cluster.add_node()  # for any test after this one


UNPLACEABLE = """\
import json, sys
from pathlib import Path
from compare_tui.engine import CollectingObserver, EngineSession, NewRunPlan, ResumePlan, RunOverrides
from compare_tui.scoring.ray_cluster import RayScorers
from compare_tui.store import Store
from tests.support.fake_openai import FakeServer

goldset, catalogue, db, address = (Path(a) for a in sys.argv[1:5])
with FakeServer() as server, Store.open(db) as store:
    catalogue.write_text(catalogue.read_text().replace("http://127.0.0.1:9/v1", server.url))
    # A scorer that needs a resource no node has: it can never be placed.
    nowhere = RayScorers(str(address), wait_s=0.5, resources={"no-such-resource": 1})
    nowhere.connect()
    plan = NewRunPlan(goldset, ("fake-a",), RunOverrides())
    first = EngineSession(store, plan, catalogue, CollectingObserver(), scorers=nowhere).run()
    nowhere.close()
    run_id = store.list_runs()[0].id
    attempts = [(a.task_id, a.outcome, a.error_class) for a in store.attempts_for_run(run_id)]
    asked = len(server.requests)
    placeable = RayScorers(str(address))
    placeable.connect()
    second = EngineSession(store, ResumePlan((run_id,)), catalogue, CollectingObserver(), scorers=placeable).run()
    placeable.close()
    tally = store.pass_rate_summary(run_id)
    print(json.dumps({"first": list(first), "attempts": attempts, "asked": asked, "second": list(second),
                      "not_done": tally.not_done, "passed": tally.passed}))
"""


def test_a_scorer_no_node_can_take_leaves_its_task_not_done_and_resumable(bench):
    goldset = _write_set(bench.tmp / "set-nowhere", 2, 0.1, timeout_s=1)
    catalogue = write_catalogue(bench.tmp / "models-nowhere.toml")
    store = bench.tmp / "nowhere.sqlite"
    argv = [sys.executable, "-c", UNPLACEABLE, str(goldset), str(catalogue), str(store), bench.cluster.address]
    out = subprocess.run(bench.ns.command(argv), env=_env(bench.tmp), capture_output=True, text=True, timeout=240)
    assert out.returncode == 0, out.stderr[-3000:]
    seen = json.loads(out.stdout.strip().splitlines()[-1])
    assert seen["first"] == ["incomplete"]
    assert sorted(seen["attempts"]) == [["t0", "error", "scorer_unavailable"], ["t1", "error", "scorer_unavailable"]]
    assert seen["second"] == ["completed"] and seen["not_done"] == 0 and seen["passed"] == 1


def test_an_unreachable_cluster_refuses_the_run_before_any_model_request(tmp_path):
    goldset = _write_set(tmp_path / "set", 2, 0.1)
    with socket.socket() as s:  # a port where nothing listens
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with FakeServer() as server:
        catalogue = write_catalogue(tmp_path / "models.toml", server.url)
        argv = [sys.executable, "-m", "compare_tui", "run", str(goldset), "--model", "fake-a"]
        argv += ["--models", str(catalogue), "--store", str(tmp_path / "runs.sqlite")]
        argv += ["--scorers", f"ray=127.0.0.1:{port}"]
        out = subprocess.run(argv, env=_env(tmp_path), capture_output=True, text=True, timeout=120)
        assert out.returncode == 2, out.stderr
        assert f"the Ray cluster at 127.0.0.1:{port} cannot be reached" in out.stderr
        assert "nothing was sent to any model" in out.stderr
        assert server.requests == []
    with sqlite3.connect(tmp_path / "runs.sqlite") as db:
        assert db.execute("SELECT count(*) FROM runs").fetchone() == (0,)


def test_no_cluster_on_this_machine_is_said_in_our_words_not_rays(monkeypatch):
    import ray

    from compare_tui.scoring.ray_cluster import RayScorers, ScorerClusterError

    def no_instance(**_: object) -> None:  # what Ray raises when `auto` finds no cluster
        raise ConnectionError(
            "Could not find any running Ray instance. Please specify the one to connect to by setting "
            "the `--address` flag or `RAY_ADDRESS` environment variable."
        )

    monkeypatch.setattr(ray, "init", no_instance)
    with pytest.raises(ScorerClusterError) as refused:
        RayScorers("auto").connect()
    said = str(refused.value)
    assert "found none" in said and "--scorers local" in said and "ray start --head" in said
    assert "--address" not in said and "RAY_ADDRESS" not in said

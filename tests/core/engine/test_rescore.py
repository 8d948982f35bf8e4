"""`compare-tui rescore`: a stored run's answers scored again, with no request to any model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from compare_tui.cli import main
from compare_tui.report import build_report, load_report_inputs
from compare_tui.store import Store
from tests.support.builders import hosted_catalogue, write_set
from tests.support.fake_openai import FakeServer, text


@pytest.fixture
def world(tmp_path: Path):
    # Every task is answered "billing"; t2 expects "bug" (a typo the team will fix).
    with FakeServer(default=text("billing")) as server:
        goldset = write_set(tmp_path / "set", {"t0": "billing", "t1": "billing", "t2": "bug"})
        models = tmp_path / "models.toml"
        hosted_catalogue(models, server.url, ("fake-a", "fake-b"))
        yield server, goldset, models, tmp_path / "runs.sqlite"


def _run(goldset: Path, models: Path, store: Path, *extra: str) -> None:
    assert main(["run", str(goldset), "--models", str(models), "--store", str(store), *extra]) == 0


def _audit_rows(store: Path) -> int:
    with Store.open(store) as s:
        return s._read("SELECT count(*) AS n FROM audit")[0]["n"]


def _fix_t2(goldset: Path) -> None:
    task = json.loads((goldset / "tasks" / "t2.json").read_text())
    task["expected"]["text"] = "billing"
    (goldset / "tasks" / "t2.json").write_text(json.dumps(task))


def test_rescore_moves_figures_without_a_request(world, capsys) -> None:
    server, goldset, models, store = world
    _run(goldset, models, store, "--model", "fake-a")
    with Store.open(store) as s:
        source = s.list_runs()[0]
    requests, audit = len(server.requests), _audit_rows(store)
    assert requests >= 3
    _fix_t2(goldset)
    capsys.readouterr()
    assert main(["rescore", source.id[:8], "--store", str(store), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    (rescored,) = out["runs"]
    assert rescored["source_run"] == source.id and rescored["requests"] == 0
    assert rescored["changed"] == [{"task": "t2", "from": "fail", "to": "pass"}]
    assert len(server.requests) == requests and _audit_rows(store) == audit
    with Store.open(store) as s:
        run = s.get_run(rescored["run"])
        outcomes = {a.task_id: str(a.outcome) for a in s.attempts_for_run(run.id)}
        report = build_report(load_report_inputs(s, run.id))
    assert outcomes == {"t0": "pass", "t1": "pass", "t2": "pass"}
    assert run.started_at == source.started_at and run.task_inputs == source.task_inputs
    caveat = next(c for c in report.caveats if c.code == "rescored")
    assert source.id in caveat.text and "scored later" in caveat.text and "t2 fail → pass" in caveat.text


def test_rescore_refuses_a_changed_input_naming_the_task(world, capsys) -> None:
    server, goldset, models, store = world
    _run(goldset, models, store, "--model", "fake-a")
    task = json.loads((goldset / "tasks" / "t1.json").read_text())
    task["input"]["prompt"] = "something else"
    (goldset / "tasks" / "t1.json").write_text(json.dumps(task))
    with Store.open(store) as s:
        before = len(s.list_runs())
        run_id = s.list_runs()[0].id
    capsys.readouterr()
    assert main(["rescore", run_id, "--store", str(store)]) == 2
    err = capsys.readouterr().err
    assert "input of 1 task(s) changed" in err and "t1" in err
    with Store.open(store) as s:
        assert len(s.list_runs()) == before


def test_rescore_a_run_made_before_input_digests(world, capsys) -> None:
    server, goldset, models, store = world
    _run(goldset, models, store, "--model", "fake-a")
    with Store.open(store) as s:
        run = s.list_runs()[0]
        s.update_run(run.id, task_inputs=None)
    capsys.readouterr()
    # Same set: nothing to doubt, so it rescores.
    assert main(["rescore", run.id, "--store", str(store)]) == 0
    _fix_t2(goldset)
    assert main(["rescore", run.id, "--store", str(store)]) == 2
    assert "before compare-tui recorded each task's input" in capsys.readouterr().err


def test_rescore_a_comparison_links_the_new_runs(world, capsys) -> None:
    server, goldset, models, store = world
    _run(goldset, models, store, "--baseline", "fake-a", "--model", "fake-b")
    requests = len(server.requests)
    with Store.open(store) as s:
        comparison = s.list_comparisons()[0]
    _fix_t2(goldset)
    capsys.readouterr()
    assert main(["rescore", comparison.id, "--store", str(store), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert len(out["runs"]) == 2 and len(server.requests) == requests
    with Store.open(store) as s:
        linked = s.get_comparison(out["comparison"])
        assert linked.baseline == comparison.baseline
        assert linked.run_ids == [r["run"] for r in out["runs"]]
        assert [r["source_run"] for r in out["runs"]] == comparison.run_ids
        report = build_report(load_report_inputs(s, linked.id))
    assert [row.pass_rate.rate for row in report.models] == [1.0, 1.0] and report.decision is not None


def test_rescore_runs_command_scorers_through_the_executor_each_result_to_its_own_attempt(world, capsys) -> None:
    server, goldset, models, store = world
    for i in range(3, 8):
        (goldset / "tasks" / f"t{i}.json").write_text(
            json.dumps({"id": f"t{i}", "input": {"prompt": f"t{i}"}, "expected": {"text": "billing"}})
        )
    check = goldset / "check.py"
    # Passes the tasks whose number has the parity given: the rescore flips every outcome.
    check.write_text(
        "import os, sys\nn = int(os.environ['COMPARE_TUI_TASK_ID'][1:])\nsys.exit(0 if n % 2 == 0 else 1)\n"
    )
    manifest = goldset / "golden.toml"
    manifest.write_text(
        manifest.read_text().replace(
            '[default_scorer]\nkind = "exact"\nnormalize = ["case", "whitespace"]',
            '[default_scorer]\nkind = "command"\nrun = ["python3", "check.py"]',
        )
    )
    _run(goldset, models, store, "--model", "fake-a")
    check.write_text(check.read_text().replace("n % 2 == 0", "n % 2 == 1"))
    with Store.open(store) as s:
        source = s.list_runs()[0]
    capsys.readouterr()
    assert main(["rescore", source.id, "--store", str(store), "--json"]) == 0
    (rescored,) = json.loads(capsys.readouterr().out)["runs"]
    with Store.open(store) as s:
        attempts = s.attempts_for_run(rescored["run"])
    assert {a.task_id: str(a.outcome) for a in attempts} == {
        f"t{i}": "pass" if i % 2 == 1 else "fail" for i in range(8)
    }
    assert all(a.isolation and a.isolation["tempdir"] for a in attempts)
    assert len(rescored["changed"]) == 8


def test_a_rescore_that_moves_nothing_writes_nothing_and_says_so(world, capsys) -> None:
    # Issue 48, item 7: a rescore that moved nothing still wrote runs and a comparison, and
    # `report latest` moved to them.
    server, goldset, models, store = world
    _run(goldset, models, store, "--baseline", "fake-a", "--model", "fake-b")
    with Store.open(store) as s:
        comparison = s.list_comparisons()[0]
        runs_before = [r.id for r in s.list_runs()]
    capsys.readouterr()
    assert main(["rescore", comparison.id, "--store", str(store)]) == 0
    out = capsys.readouterr().out
    assert "no outcome moved" in out and "nothing written" in out
    assert main(["rescore", runs_before[0], "--store", str(store), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["runs"] == [] and doc["unchanged"] == [runs_before[0]] and doc["comparison"] is None
    with Store.open(store) as s:
        assert [r.id for r in s.list_runs()] == runs_before
        assert [c.id for c in s.list_comparisons()] == [comparison.id]


def test_a_rescored_run_is_marked_in_the_runs_list(world, capsys) -> None:
    server, goldset, models, store = world
    _run(goldset, models, store, "--model", "fake-a")
    with Store.open(store) as s:
        source = s.list_runs()[0]
    _fix_t2(goldset)
    capsys.readouterr()
    assert main(["rescore", source.id, "--store", str(store), "--json"]) == 0
    (rescored,) = json.loads(capsys.readouterr().out)["runs"]
    assert main(["runs", "list", "--store", str(store), "--json"]) == 0
    listed = {r["id"]: r for r in json.loads(capsys.readouterr().out)}
    assert listed[rescored["run"]]["rescore_of"] == source.id and listed[source.id]["rescore_of"] is None
    assert main(["runs", "list", "--store", str(store)]) == 0
    text = capsys.readouterr().out
    assert "↻ rescored" in text and f"of {source.id[:8]}, not a" in text

"""Nothing measured is never a result: an attempt whose endpoint failed leaves its task not
done, the run ends `incomplete` (resumable), a resume retries exactly those tasks, and an
endpoint that does not answer is refused before anything is sent (issue 22, item 1).

Against the fault-injecting server on loopback (real HTTP and SSE); the end-to-end version
with a real llama-server stopped mid-run is tests/integration/test_not_done_local.py.
"""

from __future__ import annotations

import json

import pytest

from compare_tui.cli import main
from compare_tui.engine import CollectingObserver, RetryPolicy, RunExecutor, RunOverrides, prepare_resume, prepare_run
from compare_tui.engine.prepare import RunRefusedError
from compare_tui.engine.reachability import Reachability, is_reachable, probe_endpoint, refuse_unreachable
from compare_tui.engine.runner import OUTAGE_AFTER
from compare_tui.report import build_report, load_report_inputs
from compare_tui.store import Store
from compare_tui.vocabulary import Reach
from tests.core.engine.test_chaos_helpers import write_catalogue
from tests.support.builders import hosted_entry, load, write_set
from tests.support.fake_openai import FakeServer, fail_then, http_error, text

FAST_RETRY = RetryPolicy(max_retries=3, base_s=0.01, cap_s=0.05)
DEAD = "http://127.0.0.1:9/v1"  # the discard port: nothing listens there
REFUSED = Reachability(Reach.UNREACHABLE, reason="Connection refused")
HTTP_500 = Reachability(Reach.HTTP, 500)


@pytest.fixture
def store(tmp_path):
    with Store.open(tmp_path / "runs.sqlite") as s:
        yield s


async def _execute(store, prepared, **kw):
    observer = CollectingObserver()
    status = await RunExecutor(store, prepared, observer=observer, retry=FAST_RETRY, **kw).execute()
    return status, observer


async def test_resume_retries_exactly_the_tasks_that_measured_nothing(tmp_path, store):
    # "flaky" gets a 503 on its first four requests (one attempt and its three retries).
    script = {"a": text("ok"), "flaky": fail_then(4, http_error(503), text("ok")), "b": text("no")}
    goldset = load(write_set(tmp_path / "set", dict.fromkeys(script, "ok")))
    with FakeServer(script) as server:
        entry = hosted_entry(server.url)
        prepared = prepare_run(store, goldset, entry, RunOverrides(concurrency=1), environ={})
        status, observer = await _execute(store, prepared)
        run = store.get_run(prepared.run.id)
        assert status == run.status == "incomplete"
        assert run.error.startswith("1 of 3 tasks not done: nothing was measured (http_5xx ×1 (HTTP 503")
        summary = store.pass_rate_summary(run.id)
        assert (summary.passed, summary.failed, summary.errored, summary.not_done) == (1, 1, 0, 1)
        report = build_report(load_report_inputs(store, run.id))
        [row] = report.models
        assert (row.pass_rate.passed, row.pass_rate.scored, row.counts.missing) == (1, 2, 1)
        assert row.not_measured == (("http_5xx", 1),)

        asked_before = len(server.requests)
        resumed = prepare_resume(store, run.id, goldset, entry, environ={})
        status, observer = await _execute(store, resumed)
        asked = [r.task for r in server.requests[asked_before:] if r.path.endswith("/chat/completions")]
    assert status == "completed" and asked == ["flaky"]  # exactly the task not done, once
    assert store.get_run(run.id).error is None
    summary = store.pass_rate_summary(run.id)
    assert (summary.passed, summary.failed, summary.not_done) == (2, 1, 0)
    [attempt] = [a for a in store.attempts_for_run(run.id) if a.task_id == "flaky"]
    assert (attempt.attempt, attempt.outcome, attempt.error_class) == (1, "pass", None)  # replaced
    # Every request is in the audit ledger, the failed ones included: 4 + 1 for "flaky".
    assert sum(1 for row in store.audit_for_run(run.id) if row.task_id == "flaky") == 5
    row = build_report(load_report_inputs(store, run.id)).models[0]
    assert (row.pass_rate.passed, row.pass_rate.scored, row.counts.missing, row.not_measured) == (2, 3, 0, ())


async def test_a_completed_run_is_not_resumed(tmp_path, store):
    goldset = load(write_set(tmp_path / "set", {"a": "ok"}))
    with FakeServer(default=text("ok")) as server:
        prepared = prepare_run(store, goldset, hosted_entry(server.url), RunOverrides(), environ={})
        assert (await _execute(store, prepared))[0] == "completed"
        with pytest.raises(RunRefusedError, match="already completed"):
            prepare_resume(store, prepared.run.id, goldset, hosted_entry(server.url), environ={})


async def test_a_server_that_went_away_stops_the_run_and_leaves_the_rest_not_done(tmp_path, store):
    goldset = load(write_set(tmp_path / "set", {f"t{i:02d}": "ok" for i in range(20)}))
    prepared = prepare_run(store, goldset, hosted_entry(DEAD), RunOverrides(concurrency=1), environ={})
    status, observer = await _execute(store, prepared)
    run = store.get_run(prepared.run.id)
    assert status == "incomplete"
    # Only the first OUTAGE_AFTER tasks were asked (each with its retries); the rest wait.
    assert len(store.attempts_for_run(run.id)) == OUTAGE_AFTER
    assert len(store.audit_for_run(run.id)) == OUTAGE_AFTER * (FAST_RETRY.max_retries + 1)
    assert "20 of 20 tasks not done" in run.error and f"{20 - OUTAGE_AFTER} not tried" in run.error
    assert store.pass_rate_summary(run.id).not_done == 20
    finished = [e for e in observer.events if type(e).__name__ == "AttemptFinished"]
    assert {e.outcome for e in finished} == {"not_done"} and all(e.task_done for e in finished)


def test_the_probe_tells_a_server_from_no_server():
    assert probe_endpoint(DEAD).reach == Reach.UNREACHABLE
    with FakeServer(default=text("ok")) as server:
        assert probe_endpoint(server.url) == Reachability(Reach.HEALTHY, 200)
    assert not is_reachable(REFUSED) and not is_reachable(Reachability(Reach.HTTP, 503))
    assert is_reachable(Reachability(Reach.HEALTHY, 200)) and is_reachable(Reachability(Reach.WANTS_KEY, 401))
    assert is_reachable(Reachability(Reach.HTTP, 404))
    assert [str(REFUSED), str(Reachability(Reach.WANTS_KEY, 401)), str(Reachability(Reach.HTTP, 503))] == [
        "unreachable: Connection refused",
        "up (HTTP 401: wants a key)",
        "HTTP 503",
    ]


def test_an_unreachable_endpoint_is_refused_naming_the_model_and_what_to_do():
    probed = []
    entries = [hosted_entry(DEAD, name="a"), hosted_entry(DEAD, name="b")]
    with pytest.raises(RunRefusedError) as refused:
        refuse_unreachable(entries, prober=lambda url: probed.append(url) or REFUSED)
    assert refused.value.model_name == "a" and probed == [DEAD]  # one probe per endpoint
    assert "is unreachable: Connection refused; nothing was sent" in refused.value.reason


def test_a_keyless_5xx_is_left_to_the_key_check_for_an_entry_with_a_key():
    # LiteLLM 1.108.7 without a key database answers a keyless GET /v1/models 500 (it fails
    # importing its database client): the check with the key (`check_key`) decides, and
    # refuses a 5xx then. An entry without a key is still refused.
    keyed = hosted_entry(DEAD, name="gw", key_env="GW_KEY", gateway="litellm")
    refuse_unreachable([keyed], prober=lambda url: HTTP_500)
    with pytest.raises(RunRefusedError, match="is HTTP 500; nothing was sent"):
        refuse_unreachable([hosted_entry(DEAD, name="plain")], prober=lambda url: HTTP_500)
    with pytest.raises(RunRefusedError, match="is unreachable"):
        refuse_unreachable([keyed], prober=lambda url: REFUSED)


def test_cli_refuses_a_run_on_a_dead_endpoint_before_writing_anything(tmp_path, capsys):
    set_path = write_set(tmp_path / "set", {"a": "ok"})
    models = write_catalogue(tmp_path / "models.toml", DEAD)
    store_path = tmp_path / "runs.sqlite"
    code = main(["run", str(set_path), "--model", "fake", "--models", str(models), "--store", str(store_path)])
    err = capsys.readouterr().err
    assert code == 2
    assert f"refused: fake: the endpoint {DEAD} is unreachable" in err and "nothing was sent" in err
    with Store.open(store_path) as store:
        assert store.list_runs() == [] and store.list_comparisons() == []


def test_cli_reports_an_incomplete_run_and_its_resume_finishes_it(tmp_path, capsys):
    script = {"a": text("ok"), "flaky": fail_then(4, http_error(503), text("ok"))}
    set_path = write_set(tmp_path / "set", dict.fromkeys(script, "ok"))
    store_path = tmp_path / "runs.sqlite"
    with FakeServer(script) as server:
        models = write_catalogue(tmp_path / "models.toml", server.url)
        base = ["--models", str(models), "--store", str(store_path), "--json"]
        code = main(["run", str(set_path), "--model", "fake", "--concurrency", "1", *base])
        [run] = json.loads(capsys.readouterr().out)["runs"]
        assert code == 1 and run["status"] == "incomplete" and run["not_done"] == 1
        assert f"--resume {run['id']}" in run["reason"]
        code = main(["run", "--resume", run["id"], *base])
        [again] = json.loads(capsys.readouterr().out)["runs"]
    assert code == 0 and again["status"] == "completed" and (again["pass"], again["not_done"]) == (2, 0)


def test_home_health_reads_a_keyless_probe_for_what_a_run_of_the_entry_would_meet():
    """A gateway that answers a keyless probe 500 (LiteLLM without a key database) or 401 is up for
    an entry with a key (a run asks again with it); for an entry without one a key is wanted."""
    from compare_tui.engine.reachability import health_for
    from compare_tui.tui.screens.home import short_health

    wants_401, wants_403 = Reachability(Reach.WANTS_KEY, 401), Reachability(Reach.WANTS_KEY, 403)
    healthy, http_503 = Reachability(Reach.HEALTHY, 200), Reachability(Reach.HTTP, 503)
    assert str(health_for(HTTP_500, has_key=True)) == "up (HTTP 500 without a key; a run asks again with its key)"
    assert str(health_for(wants_401, has_key=True)) == "up (HTTP 401 without a key; a run asks again with its key)"
    assert str(health_for(wants_401, has_key=False)) == "wants a key (HTTP 401; the entry has no key_env)"
    assert str(health_for(HTTP_500, has_key=False)) == "HTTP 500"
    assert str(health_for(healthy, has_key=True)) == "healthy"
    assert str(health_for(REFUSED, has_key=True)) == "unreachable: Connection refused"
    shown = [
        short_health(health_for(v, k))
        for v, k in [(HTTP_500, True), (wants_403, False), (http_503, False), (healthy, False)]
    ]
    assert shown == ["✓ up", "✗ wants a key", "✗ HTTP 503", "✓ healthy"]


def test_a_reader_given_a_store_path_that_does_not_exist_refuses_it_and_leaves_nothing_behind(tmp_path):
    import subprocess
    import sys

    missing = tmp_path / "typo" / "runs.sqlite"
    for args in (["report", "latest"], ["publish", "latest", "--out", str(tmp_path / "out")], ["runs", "list"]):
        done = subprocess.run(
            [sys.executable, "-m", "compare_tui", *args, "--store", str(missing)],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 2, (args, done.stdout, done.stderr)
        assert f"no store at {missing}" in done.stderr
    assert not missing.exists() and not missing.parent.exists()

"""Through a real LiteLLM proxy (issue 23, point 5): `litellm[proxy]` pinned in its own virtual
environment (`scripts/test.sh`), on loopback in front of the session's llama-servers.

A golden set through the gateway gets the direct run's answers and token counts; a tool-call
run and a judge go through it; its `sk-…` master key is confirmed by `GET /v1/models` (no key
database) for a declared gateway and refused, nothing sent, for a provider host; through the
CLI a wrong key refuses the run before any task (exit 2) and the master key runs it (LiteLLM
answers the keyless pre-run probe 500); the upstream stopped mid-run leaves a resumable run.

The proxy fails the tests (never skips them) when it cannot be provisioned or started."""

from __future__ import annotations

import asyncio
import socket
from pathlib import Path

import pytest

from compare_tui import local
from compare_tui.catalogue import check_key, load_catalogue, resolve_key
from compare_tui.catalogue.gateway import BY_MODELS
from compare_tui.cli import main
from compare_tui.engine import RunExecutor, RunOverrides, RunRefusedError, prepare_resume, prepare_run
from compare_tui.engine.prepare import check_model
from compare_tui.engine.retry import RetryPolicy
from compare_tui.goldset import load_golden_set
from compare_tui.judge import execute_judging, load_rubric, prepare_pair_judging
from compare_tui.judge.run.call import JudgeSettings
from compare_tui.report import build_report, load_report_inputs
from compare_tui.store import Store
from compare_tui.toolcall import RunRequest, RunSettings, execute, official_suite, select
from tests.support.builders import write_set
from tests.support.litellm_proxy import LiteLLMProxy, ProxyUnavailable, free_port
from tests.support.stop_mid_run import StopServerMidRun

pytestmark = pytest.mark.integration

MODEL = "smollm2-135m"
DEDICATED = "smollm2-dedicated"
"""A route to a llama-server only the outage test starts (and stops): never the session's."""
SET = Path(__file__).resolve().parents[2] / "sample_sets" / "support-triage"
SHORT = RunOverrides(concurrency=1, max_tokens=16, temperature=0.0)
"""One request at a time, temperature 0: the direct run and the gateway run get the same batches."""


@pytest.fixture(scope="module")
def dedicated_port() -> int:
    """Where the outage test's own llama-server listens (the gateway routes `DEDICATED` there)."""
    return free_port()


@pytest.fixture(scope="module")
def gateway(local_cluster, dedicated_port, tmp_path_factory):
    """The proxy, with a route per session model and one to a dedicated port (started only by
    the outage test). Stopped at the end of the module."""
    catalogue = load_catalogue(local_cluster.catalogue_path)
    routes = {name: catalogue.get(name).endpoint for name in ("smollm2-135m", "gemma3-270m")}
    routes[DEDICATED] = f"http://127.0.0.1:{dedicated_port}/v1"
    # The gateway's own retries of a failed upstream are off on the dedicated route only: the
    # outage test then takes seconds, not minutes (LiteLLM's answers are the same, sooner).
    proxy = LiteLLMProxy(tmp_path_factory.mktemp("litellm"), routes, no_retries=frozenset({DEDICATED}))
    try:
        proxy.start()
    except ProxyUnavailable as exc:
        pytest.fail(f"could not start the LiteLLM proxy:\n{exc}", pytrace=False)
    try:
        yield proxy
    finally:
        proxy.stop()


def _answers(store: Store, run_id: str) -> dict[str, tuple]:
    return {
        a.task_id: (a.outcome, a.answer_text, a.tool_calls, a.prompt_tokens, a.completion_tokens, a.error_class)
        for a in store.attempts_for_run(run_id)
    }


def _run(store: Store, entry, environ: dict[str, str], overrides: RunOverrides = SHORT, observer=None, retry=None):
    prepared = prepare_run(store, load_golden_set(SET), entry, overrides, environ=environ)
    status = asyncio.run(RunExecutor(store, prepared, observer=observer, retry=retry).execute())
    return prepared.run.id, status


# ---------------------------------------------------------------- the same answers, tool calls, a judge


@pytest.fixture(scope="module")
def direct_and_gateway_runs(gateway, local_cluster, tmp_path_factory):
    """support-triage on smollm2, straight to llama-server and through the proxy.

    A pass over the set comes first: a llama-server with 4 slots reuses cached prompt prefixes,
    and at temperature 0 a pass that starts from another cache state (a fresh server, or one
    other tests used) differs on a few answers from one that starts where a pass over the same
    set left it (5 of 21 here, found with and without the gateway). After it, the gateway run
    and the direct run both start from that state."""
    store = Store.open(tmp_path_factory.mktemp("gw-runs") / "runs.sqlite")
    direct = load_catalogue(local_cluster.catalogue_path).get(MODEL)
    env = {"GW_KEY": gateway.master_key}
    _run(store, direct, {})
    runs = {"gateway": _run(store, gateway.entry(MODEL), env), "direct": _run(store, direct, {})}
    try:
        yield store, runs
    finally:
        store.close()


def test_a_golden_set_through_the_gateway_gets_the_direct_answers_and_tokens(direct_and_gateway_runs, gateway):
    store, runs = direct_and_gateway_runs
    assert {status for _, status in runs.values()} == {"completed"}
    direct, through = (_answers(store, runs[side][0]) for side in ("direct", "gateway"))
    assert len(direct) == len(load_golden_set(SET).tasks) and through == direct  # task by task, every field
    assert all(row[3] and row[4] for row in through.values())  # usage came through the stream
    gateway_run = store.get_run(runs["gateway"][0])
    assert gateway_run.environment["key_check"] == BY_MODELS  # no key database: the master key, by /v1/models
    assert gateway_run.environment["server"]["props"] is None  # what the gateway hides…
    caveats = build_report(load_report_inputs(store, runs["gateway"][0])).caveats
    assert any(c.code == "gateway" and "stated, not verified" in c.text for c in caveats)  # …said
    for path in Path(store.path).parent.glob("runs.sqlite*"):
        assert gateway.master_key.encode() not in path.read_bytes()


def test_a_tool_call_run_through_the_gateway_matches_the_direct_one(gateway, local_cluster):
    suite = official_suite()
    scenarios = select(suite.scenarios, ["S01", "S14", "S19", "S23"])
    settings = RunSettings(max_tokens=24, timeout_s=240, concurrency=1)
    direct_entry = load_catalogue(local_cluster.catalogue_path).get("gemma3-270m")
    direct = asyncio.run(execute(RunRequest(direct_entry, suite, scenarios, settings)))
    through = asyncio.run(
        execute(
            RunRequest(gateway.entry("gemma3-270m"), suite, scenarios, settings), environ={"GW_KEY": gateway.master_key}
        )
    )
    outcomes = [{r.scenario_id: (r.outcome, r.status) for r in run.results} for run in (direct, through)]
    assert outcomes[0] == outcomes[1] and len(outcomes[1]) == len(scenarios)


def test_a_judge_through_the_gateway(gateway, tmp_path):
    # Three tasks (a judge's prompt is long: each call costs seconds on a shared CPU), answered
    # by both session models through the gateway, judged there by smollm2.
    labels = {"refund-please": "billing", "app-crashes": "bug", "reset-password": "account"}
    goldset_path = write_set(tmp_path / "set", labels, max_tokens=8)
    env = {"GW_KEY": gateway.master_key}
    with Store.open(tmp_path / "runs.sqlite") as store:
        runs = []
        for route in ("gemma3-270m", MODEL):
            prepared = prepare_run(store, load_golden_set(goldset_path), gateway.entry(route), SHORT, environ=env)
            assert asyncio.run(RunExecutor(store, prepared).execute()) == "completed"
            runs.append(store.get_run(prepared.run.id))
        plan = prepare_pair_judging(
            store,
            *runs,
            gateway.entry(MODEL, name="judge-via-litellm"),
            load_rubric(None, "reference"),
            settings=JudgeSettings(max_tokens=16, concurrency=1),
            environ=env,
        )
        before = gateway.requests_to("POST", "/v1/chat/completions")
        tally = asyncio.run(execute_judging(store, plan))
        judgements = store.judgements_for(plan.judging.id)
    assert tally.requested == len(plan.jobs) == 2 * len(labels)
    # Every call was answered (a tiny judge may name no verdict: `unparseable`, never a
    # transport or HTTP failure), with the gateway's usage.
    assert {j.error_class for j in judgements} <= {None, "unparseable"}
    assert all(j.completion_tokens for j in judgements)
    assert gateway.requests_to("POST", "/v1/chat/completions") - before == len(plan.jobs)


# ---------------------------------------------------------------- keys


def test_the_master_key_is_confirmed_for_a_declared_gateway_and_refused_on_a_provider_host(gateway, monkeypatch):
    env = {"GW_KEY": gateway.master_key}
    assert check_key(gateway.entry(MODEL), resolve_key(gateway.entry(MODEL), env)) == BY_MODELS
    connections: list[object] = []

    def no_network(*args, **kwargs):
        connections.append(args)
        raise OSError("the test forbids any connection here")

    monkeypatch.setattr(socket, "create_connection", no_network)
    monkeypatch.setattr(socket, "getaddrinfo", no_network)
    on_provider = gateway.entry(MODEL, endpoint="https://api.openai.com/v1")
    with pytest.raises(RunRefusedError, match="provider's own API host") as refused:
        check_model(on_provider, environ=env)
    undeclared = gateway.entry(MODEL, gateway=None)
    with pytest.raises(RunRefusedError, match='gateway = "litellm"'):
        check_model(undeclared, environ=env)
    assert connections == [] and gateway.master_key not in str(refused.value)


def test_through_the_cli_a_wrong_key_is_refused_before_any_task_and_the_master_key_runs(
    gateway, tmp_path, monkeypatch, capsys
):
    catalogue = tmp_path / "models.toml"
    catalogue.write_text(f"""[[model]]
name = "gw"
kind = "hosted"
endpoint = "{gateway.url}"
model = "{MODEL}"
revision = "test"
weights_digest = "sha256:{"0" * 64}"
key_env = "GW_KEY"
gateway = "litellm"
[model.cost]
basis = "hardware"
usd_per_hour = 0.1
""")
    small_set = write_set(tmp_path / "set", {"refund-please": "billing", "app-crashes": "bug"}, max_tokens=8)
    common = [
        "run",
        str(small_set),
        "--model",
        "gw",
        "--models",
        str(catalogue),
        "--store",
        str(tmp_path / "runs.sqlite"),
        "--concurrency",
        "1",
    ]
    monkeypatch.setenv("COMPARE_TUI_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("GW_KEY", "sk-" + "0" * 40)
    chats = gateway.requests_to("POST", "/v1/chat/completions")
    assert main(common) == 2
    err = capsys.readouterr().err
    assert "did not confirm" in err and "No connected db." in err and "nothing was sent" in err
    assert "0" * 40 not in err
    assert gateway.requests_to("POST", "/v1/chat/completions") == chats
    with Store.open(tmp_path / "runs.sqlite") as store:
        assert store.list_runs() == []
    # The master key: the keyless pre-run probe gets LiteLLM's 500, the check with the key a 200.
    monkeypatch.setenv("GW_KEY", gateway.master_key)
    assert main(common) == 0
    out = capsys.readouterr().out
    assert "completed" in out and gateway.master_key not in out
    assert gateway.requests_to("POST", "/v1/chat/completions") == chats + 2


# ---------------------------------------------------------------- the upstream stopped mid-run

STOP_AFTER = 4
FAST_RETRY = RetryPolicy(max_retries=3, base_s=0.01, cap_s=0.05)
"""The engine's retries without their waits (the gateway's own retries still take their time)."""


def test_the_upstream_stopped_mid_run_leaves_a_resumable_run(gateway, dedicated_port, tmp_path, monkeypatch):
    monkeypatch.setenv("COMPARE_TUI_STATE_DIR", str(tmp_path / "state"))  # apart from the session's servers
    port = dedicated_port

    def start_upstream() -> None:
        local.up([MODEL], parallel=1, ctx=1024, port=port, threads=1, catalogue_path=tmp_path / "models.toml")

    env = {"GW_KEY": gateway.master_key}
    entry = gateway.entry(DEDICATED)
    start_upstream()
    try:
        with Store.open(tmp_path / "runs.sqlite") as store:
            observer = StopServerMidRun(MODEL, STOP_AFTER)
            try:
                run_id, status = _run(store, entry, env, observer=observer, retry=FAST_RETRY)
            finally:
                if observer.stopper is not None:
                    observer.stopper.join()
            assert status == "incomplete"
            run = store.get_run(run_id)
            assert "tasks not done: nothing was measured" in run.error and "upstream" in run.error
            row = build_report(load_report_inputs(store, run_id)).models[0]
            assert row.counts.errored == 0 and row.counts.missing >= 1
            assert dict(row.not_measured).get("upstream", 0) >= 1

            start_upstream()  # the same port: the gateway's route finds it again
            resumed = prepare_resume(store, run_id, load_golden_set(SET), entry, environ=env)
            assert asyncio.run(RunExecutor(store, resumed).execute()) == "completed"
            row = build_report(load_report_inputs(store, run_id)).models[0]
            assert (row.counts.missing, row.not_measured) == (0, ())
            assert len(store.attempts_for_run(run_id)) >= len(load_golden_set(SET).tasks)
    finally:
        local.down([MODEL])


def test_the_proxy_needs_its_provisioned_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("COMPARE_TUI_LITELLM_VENV", str(tmp_path / "none"))
    with pytest.raises(ProxyUnavailable, match="scripts/test.sh"):
        LiteLLMProxy(tmp_path, {}).start()

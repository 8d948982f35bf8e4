"""Environment capture and server identity, against the fake OpenAI server."""

from __future__ import annotations

import hashlib
import json
import platform

import httpx

from compare_tui import __version__
from compare_tui.engine.environment import capture_environment, cpu_model, fetch_server_identity
from tests.support.fake_openai import DEFAULT_PROPS, FakeServer


def test_capture_environment_describes_this_host_and_keeps_what_it_is_given(tmp_path):
    env = capture_environment(server_identity={"base_url": "x"}, gpu={"measured": False}, settings={"attempts": 2})
    assert env["compare_tui_version"] == __version__
    assert env["python"] == platform.python_version()
    assert env["cpu_count"] >= 1 and env["host"] and env["os"]
    assert env["server"] == {"base_url": "x"} and env["gpu"] == {"measured": False}
    assert env["settings"] == {"attempts": 2}
    json.dumps(env)  # stored as JSON
    assert capture_environment()["server"] is None


def test_cpu_model_reads_proc_cpuinfo(tmp_path):
    info = tmp_path / "cpuinfo"
    info.write_text(
        "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R) Platinum 8480+\n\nprocessor\t: 1\n"
    )
    assert cpu_model(info) == "Intel(R) Xeon(R) Platinum 8480+"
    assert cpu_model(tmp_path / "missing") == (platform.processor() or None)


async def test_llama_cpp_identity_keeps_models_build_template_ctx_and_slots():
    template = "{# long template #}" + "x" * 5000
    props = {**DEFAULT_PROPS, "chat_template": template}
    with FakeServer(models=("smollm2-135m",), props=props) as srv:
        identity = await fetch_server_identity(srv.url + "/", {"Authorization": "Bearer sk-virtual"})
        sent = srv.requests
    assert identity["models"] == {"ids": ["smollm2-135m"]}
    p = identity["props"]
    assert p["build_info"] == "b9999-fake0000" and p["n_ctx"] == 4096 and p["total_slots"] == 4
    assert p["chat_template"] == template[:2000] and p["chat_template_chars"] == len(template)
    assert p["chat_template_sha256"] == hashlib.sha256(template.encode()).hexdigest()
    assert [r.path for r in sent] == ["/v1/models", "/props"]  # /props is beside /v1
    assert all(r.headers["authorization"] == "Bearer sk-virtual" for r in sent)


async def test_server_without_props_is_not_an_error():
    with FakeServer(props=None) as srv:
        identity = await fetch_server_identity(srv.url, None)
    assert identity["models"] == {"ids": ["fake-model"]} and identity["props"] is None


async def test_unreachable_or_odd_servers_are_recorded_never_raised():
    with FakeServer() as srv:
        dead = srv.url
    identity = await fetch_server_identity(dead, {"Authorization": "Bearer secret"}, timeout=2)
    assert "ConnectError" in identity["models"]["error"]
    assert "ConnectError" in identity["props"]["error"]
    assert "secret" not in json.dumps(identity)

    def odd(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/models"):
            return httpx.Response(200, text="<html>not json</html>")
        return httpx.Response(500, json={"error": "boom"})

    identity = await fetch_server_identity("http://gw.example/v1", None, transport=httpx.MockTransport(odd))
    assert identity["models"] == {"error": "GET http://gw.example/v1/models did not return JSON"}
    assert identity["props"] == {"error": "GET http://gw.example/props returned HTTP 500"}


async def test_a_run_reads_props_once_for_its_serving_reading_and_its_environment(tmp_path):
    from compare_tui.engine import CollectingObserver, RunExecutor, RunOverrides, prepare_run
    from compare_tui.store import Store
    from tests.support.builders import hosted_entry, load, write_set

    goldset = load(write_set(tmp_path / "set", {"t0": "billing", "t1": "billing"}))
    with Store.open(tmp_path / "runs.sqlite") as store, FakeServer() as srv:
        prepared = prepare_run(store, goldset, hosted_entry(srv.url), RunOverrides(), environ={})
        await RunExecutor(store, prepared, observer=CollectingObserver()).execute()
        props_reads = [r for r in srv.requests if r.path == "/props"]
        run = store.get_run(prepared.run.id)
    assert len(props_reads) == 1  # the serving reading's answer feeds the environment too
    server = run.environment["server"]
    assert server["models"] == {"ids": ["fake-model"]} and server["base_url"] == srv.url
    assert server["props"]["build_info"] == DEFAULT_PROPS["build_info"] and server["props"]["total_slots"] == 4
    assert run.serving[0]["fingerprint"]["build"] == DEFAULT_PROPS["build_info"]

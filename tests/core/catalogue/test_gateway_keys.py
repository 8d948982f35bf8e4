"""Gateway virtual keys (issue 23, points 1 and 2): a LiteLLM `sk-…` key is sent only to a
declared gateway on a host that is not a provider's API, and only once the gateway confirmed
it (`/key/info`, else `/v1/models` with the key); a key the endpoint rejects refuses the run
before any task is sent, quoting the gateway's message with the key masked.

The gateway is the fake OpenAI server with LiteLLM-like key checks (`GatewayKeys`), over
real HTTP on loopback."""

from __future__ import annotations

import secrets

import pytest

from compare_tui.catalogue import ModelRefused, check_key, is_provider_host, resolve_key
from compare_tui.catalogue.gateway import BY_KEY_INFO, BY_LISTING, BY_MODELS
from compare_tui.cli import main
from compare_tui.engine import RunExecutor, RunOverrides, RunRefusedError, prepare_run
from compare_tui.store import Store
from tests.core.engine.test_chaos_helpers import write_catalogue
from tests.support.builders import hosted_entry, load, write_set
from tests.support.fake_openai import FakeServer, GatewayKeys, text

MASTER = "sk-" + secrets.token_hex(20)
ISSUED = "sk-" + secrets.token_hex(11)
WRONG = "sk-" + secrets.token_hex(20)


def _chat_requests(server: FakeServer) -> list:
    return [r for r in server.requests if r.path.endswith("/chat/completions")]


# ---------------------------------------------------------------- the key policy (no network)


def test_an_sk_key_is_accepted_only_for_a_declared_gateway_off_provider_hosts() -> None:
    env = {"GW_KEY": MASTER}
    gateway = hosted_entry("http://127.0.0.1:4000/v1", key_env="GW_KEY", gateway="litellm")
    assert resolve_key(gateway, env) == MASTER
    plain = hosted_entry("http://127.0.0.1:4000/v1", key_env="GW_KEY")
    with pytest.raises(ModelRefused, match='gateway = "litellm"') as refused:
        resolve_key(plain, env)
    assert MASTER not in str(refused.value) and "vk-" not in str(refused.value)
    for url in (
        "https://api.openai.com/v1",
        "https://api.deepseek.com/v1",
        "https://API.Anthropic.com/v1",
        "https://myco.openai.azure.com/openai/v1",
    ):
        on_provider = hosted_entry(url, key_env="GW_KEY", gateway="litellm")
        with pytest.raises(ModelRefused, match="provider's own API host") as refused:
            resolve_key(on_provider, env)
        assert MASTER not in str(refused.value)


@pytest.mark.parametrize("key", ["sk-proj-" + "a" * 40, "sk-ant-" + "b" * 40, "gsk_" + "c" * 40])
def test_keys_that_name_their_provider_stay_refused_for_a_gateway(key: str) -> None:
    gateway = hosted_entry("http://127.0.0.1:4000/v1", key_env="GW_KEY", gateway="litellm")
    with pytest.raises(ModelRefused, match="provider API key") as refused:
        resolve_key(gateway, {"GW_KEY": key})
    assert key not in str(refused.value)


def test_provider_hosts() -> None:
    assert is_provider_host("https://api.openai.com/v1") and is_provider_host("https://eu.api.openai.com/v1")
    assert not is_provider_host("http://127.0.0.1:4000/v1") and not is_provider_host(
        "https://notapi.openai.com.example/v1"
    )


# ---------------------------------------------------------------- the gateway confirms


def test_without_a_database_the_master_key_is_confirmed_by_v1_models() -> None:
    with FakeServer(gateway=GatewayKeys(master=MASTER)) as gw:
        entry = hosted_entry(gw.url, key_env="GW_KEY", gateway="litellm")
        assert check_key(entry, MASTER) == BY_MODELS
        assert [r.path for r in gw.requests] == ["/key/info", "/v1/models"]
        assert all(r.headers["authorization"] == f"Bearer {MASTER}" for r in gw.requests)
        with pytest.raises(ModelRefused, match="No connected db") as refused:
            check_key(entry, WRONG)
    assert WRONG not in str(refused.value) and "nothing was sent" in str(refused.value)


def test_with_a_database_an_issued_key_is_confirmed_by_key_info() -> None:
    with FakeServer(gateway=GatewayKeys(master=MASTER, issued=(ISSUED,), database=True)) as gw:
        entry = hosted_entry(gw.url, key_env="GW_KEY", gateway="litellm")
        assert check_key(entry, ISSUED) == BY_KEY_INFO
        assert [r.path for r in gw.requests] == ["/key/info"]
        with pytest.raises(ModelRefused, match="Invalid proxy server token") as refused:
            check_key(entry, WRONG)  # the gateway echoes the key: the message must not
    assert WRONG not in str(refused.value) and "[redacted]" in str(refused.value)


def test_a_virtual_key_the_endpoint_rejects_is_refused_quoting_it() -> None:
    key = "vk-" + secrets.token_hex(16)
    with FakeServer(gateway=GatewayKeys(master=MASTER)) as gw:
        entry = hosted_entry(gw.url, key_env="GW_KEY")
        with pytest.raises(ModelRefused, match=r"HTTP 400: No connected db\.") as refused:
            check_key(entry, key)
        assert [r.path for r in gw.requests] == ["/v1/models"]  # no /key/info for a non-sk key
    assert key not in str(refused.value)
    with FakeServer() as plain:  # an endpoint that accepts anything
        assert check_key(hosted_entry(plain.url, key_env="GW_KEY"), key) == BY_LISTING


def test_an_unreachable_gateway_refuses_the_key_check() -> None:
    entry = hosted_entry("http://127.0.0.1:9/v1", key_env="GW_KEY", gateway="litellm")
    with pytest.raises(ModelRefused, match="could not ask .* nothing was sent"):
        check_key(entry, MASTER)


# ---------------------------------------------------------------- through the engine and the CLI


async def test_a_confirmed_gateway_key_is_sent_and_recorded_as_confirmed_never_stored(tmp_path) -> None:
    goldset = load(write_set(tmp_path / "set", {"a": "ok"}))
    with (
        Store.open(tmp_path / "runs.sqlite") as store,
        FakeServer({"a": text("ok")}, gateway=GatewayKeys(master=MASTER)) as gw,
    ):
        entry = hosted_entry(gw.url, key_env="GW_KEY", gateway="litellm")
        prepared = prepare_run(store, goldset, entry, RunOverrides(), environ={"GW_KEY": MASTER})
        assert await RunExecutor(store, prepared).execute() == "completed"
        assert _chat_requests(gw)[-1].headers["authorization"] == f"Bearer {MASTER}"
        assert store.get_run(prepared.run.id).environment["key_check"] == BY_MODELS
    for path in tmp_path.glob("runs.sqlite*"):
        assert MASTER.encode() not in path.read_bytes()


async def test_a_refused_key_writes_no_run_and_sends_no_task(tmp_path) -> None:
    goldset = load(write_set(tmp_path / "set", {"a": "ok"}))
    with (
        Store.open(tmp_path / "runs.sqlite") as store,
        FakeServer({"a": text("ok")}, gateway=GatewayKeys(master=MASTER)) as gw,
    ):
        entry = hosted_entry(gw.url, key_env="GW_KEY", gateway="litellm")
        with pytest.raises(RunRefusedError, match="did not confirm"):
            prepare_run(store, goldset, entry, RunOverrides(), environ={"GW_KEY": WRONG})
        assert _chat_requests(gw) == [] and store.list_runs() == []


def test_cli_run_with_a_wrong_key_exits_2_before_any_task(tmp_path, monkeypatch, capsys) -> None:
    set_path = write_set(tmp_path / "set", {f"t{i}": "ok" for i in range(5)})
    monkeypatch.setenv("COMPARE_TUI_STATE_DIR", str(tmp_path / "state"))
    with FakeServer(default=text("ok"), gateway=GatewayKeys(master=MASTER)) as gw:
        catalogue = write_catalogue(tmp_path / "models.toml", gw.url, key_env="GW_KEY", gateway="litellm")
        common = [
            "run",
            str(set_path),
            "--model",
            "fake",
            "--models",
            str(catalogue),
            "--store",
            str(tmp_path / "runs.sqlite"),
            "--concurrency",
            "1",
        ]
        monkeypatch.setenv("GW_KEY", WRONG)
        assert main(common) == 2
        err = capsys.readouterr().err
        assert "No connected db." in err and "nothing was sent" in err and WRONG not in err
        assert _chat_requests(gw) == []
        monkeypatch.setenv("GW_KEY", MASTER)
        assert main(common) == 0
        assert len(_chat_requests(gw)) == 5
        assert MASTER not in capsys.readouterr().out


def test_cli_run_without_a_key_against_a_gateway_that_wants_one_exits_2(tmp_path, monkeypatch, capsys) -> None:
    set_path = write_set(tmp_path / "set", {"t0": "ok"})
    monkeypatch.setenv("COMPARE_TUI_STATE_DIR", str(tmp_path / "state"))
    with FakeServer(default=text("ok"), gateway=GatewayKeys(master=MASTER)) as gw:
        catalogue = write_catalogue(tmp_path / "models.toml", gw.url, gateway="litellm")
        code = main(
            [
                "run",
                str(set_path),
                "--model",
                "fake",
                "--models",
                str(catalogue),
                "--store",
                str(tmp_path / "runs.sqlite"),
            ]
        )
        assert code == 2 and "no key_env" in capsys.readouterr().err
        assert _chat_requests(gw) == []


def test_models_add_through_a_gateway_confirms_an_sk_key_first(tmp_path, monkeypatch, capsys) -> None:
    catalogue = tmp_path / "models.toml"
    with FakeServer(gateway=GatewayKeys(master=MASTER)) as gw:
        add = [
            "models",
            "add",
            "gw-model",
            "--kind",
            "hosted",
            "--endpoint",
            gw.url,
            "--model",
            "fake-model",
            "--gateway",
            "litellm",
            "--key-env",
            "GW_KEY",
            "--revision",
            "r1",
            "--price-in",
            "0.1",
            "--price-out",
            "0.2",
            "--price-date",
            "2026-12-01",
            "--price-source",
            "test",
            "--models",
            str(catalogue),
        ]
        monkeypatch.setenv("GW_KEY", WRONG)
        assert main(add) == 2
        err = capsys.readouterr().err
        assert "did not confirm" in err and WRONG not in err and not catalogue.exists()
        assert [r.path for r in gw.requests] == ["/key/info", "/v1/models"]  # the probe never ran
        monkeypatch.setenv("GW_KEY", MASTER)
        assert main(add) == 0
    text_written = catalogue.read_text()
    assert 'gateway = "litellm"' in text_written and MASTER not in text_written

"""`compare-tui gateway up|status|down` end to end: the real pinned LiteLLM proxy (provisioned by
`scripts/test.sh`) in front of a loopback fake provider that demands its own provider key.

Proves, as a user would see it: a run of the hosted-shaped baseline through the gateway
completes; the provider key reached the provider (so the proxy read it) and appears nowhere
compare-tui writes (store, state folder, catalogue, its own output); a wrong gateway key is
refused before the first task; a wrong provider key is refused by `gateway up` itself (its one
check request, an audit-ledger row), which stops the proxy and writes no catalogue entry;
`status` and `down` act on the recorded pid."""

from __future__ import annotations

import os
import re
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.builders import write_set
from tests.support.fake_openai import FakeServer, ProviderKey, text
from tests.support.litellm_proxy import litellm_executable

ROOT = Path(__file__).resolve().parents[2]
PROVIDER_KEY = "sk-proj-" + "Zq7" * 12


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("COMPARE_TUI_") and not k.endswith("_API_KEY")}
    env.update(
        PYTHONPATH=str(ROOT),
        COMPARE_TUI_STATE_DIR=str(tmp_path / "state"),
        COMPARE_TUI_LITELLM_VENV=str(litellm_executable().parent.parent),
    )
    env.update(extra)
    return env


def _cli(env: dict[str, str], *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "compare_tui", *args], env=env, capture_output=True, text=True, timeout=timeout
    )


@pytest.fixture
def provider():
    with FakeServer(default=text("billing"), gateway=ProviderKey(PROVIDER_KEY)) as server:
        yield server


def test_hosted_baseline_through_gateway_up(tmp_path: Path, provider: FakeServer) -> None:
    models, store = tmp_path / "models.toml", tmp_path / "runs.sqlite"
    goldset = write_set(tmp_path / "set", {"t0": "billing", "t1": "billing"})
    user_env = _env(tmp_path, OPENAI_API_KEY=PROVIDER_KEY)
    outputs: list[str] = []
    up = _cli(
        user_env, "gateway", "up", "--provider", "openai", "--model", "fake-model", "--api-base", provider.url,
        "--price-in", "0.15", "--price-out", "0.6", "--price-date", "2026-12-01", "--price-source", "test",
        "--models", str(models), "--store", str(store),
    )  # fmt: skip
    outputs += [up.stdout, up.stderr]
    try:
        assert up.returncode == 0, up.stderr
        # `up` asked the provider for one token through the gateway, with the provider key.
        checks = [r for r in provider.requests if r.path.endswith("/chat/completions")]
        assert len(checks) == 1 and checks[0].body["max_tokens"] == 1
        assert _check_rows(store) == [(200, "done")]
        gateway_key = re.search(r"export COMPARE_TUI_GATEWAY_KEY=(sk-[0-9a-f]+)", up.stdout).group(1)
        status = _cli(user_env, "gateway", "status")
        outputs += [status.stdout, status.stderr]
        assert status.returncode == 0 and "healthy" in status.stdout

        # A wrong gateway key: refused before the first task, nothing reaches the provider.
        wrong = _cli(
            {**user_env, "COMPARE_TUI_GATEWAY_KEY": "sk-" + "0" * 40},
            "run", str(goldset), "--model", "openai-fake-model", "--models", str(models), "--store", str(store),
        )  # fmt: skip
        outputs += [wrong.stdout, wrong.stderr]
        assert wrong.returncode == 2 and "nothing was sent" in wrong.stderr
        assert len([r for r in provider.requests if r.path.endswith("/chat/completions")]) == 1

        run = _cli(
            {**user_env, "COMPARE_TUI_GATEWAY_KEY": gateway_key},
            "run", str(goldset), "--model", "openai-fake-model", "--models", str(models), "--store", str(store),
        )  # fmt: skip
        outputs += [run.stdout, run.stderr]
        assert run.returncode == 0, run.stderr
        chats = [r for r in provider.requests if r.path.endswith("/chat/completions")]
        assert len(chats) == 3
        assert all(r.headers.get("authorization") == f"Bearer {PROVIDER_KEY}" for r in chats)
        report = _cli(user_env, "report", "latest", "--store", str(store), "--format", "md")
        outputs += [report.stdout, report.stderr]
        assert "openai-fake-model" in report.stdout and "token" in report.stdout.lower()
    finally:
        down = _cli(user_env, "gateway", "down")
        outputs += [down.stdout, down.stderr]
    assert "stopped" in down.stdout or "killed" in down.stdout
    assert _cli(user_env, "gateway", "status").returncode == 1
    # The provider key is nowhere compare-tui wrote or printed.
    written = [p for p in (tmp_path / "state").rglob("*") if p.is_file()] + [models]
    written += [p for p in tmp_path.glob("runs.sqlite*") if p.is_file()]
    for path in written:
        assert PROVIDER_KEY.encode() not in path.read_bytes(), path
    assert all(PROVIDER_KEY not in text for text in outputs)
    assert "os.environ/OPENAI_API_KEY" in (tmp_path / "state" / "gateway" / "litellm.yaml").read_text()


def _check_rows(store: Path) -> list[tuple[int | None, str]]:
    from compare_tui.local.provider_check import CHECK_TASK_ID

    with sqlite3.connect(store) as conn:
        query = "SELECT status, state FROM audit WHERE task_id = ? AND run_id IS NULL ORDER BY id"
        return [tuple(row) for row in conn.execute(query, [CHECK_TASK_ID])]


def test_a_wrong_provider_key_is_refused_by_up(tmp_path: Path, provider: FakeServer) -> None:
    models, store = tmp_path / "models.toml", tmp_path / "runs.sqlite"
    wrong_key = "sk-proj-" + "Wr0" * 12
    user_env = _env(tmp_path, OPENAI_API_KEY=wrong_key, COMPARE_TUI_GATEWAY_KEY="sk-" + "1" * 40)
    up = _cli(
        user_env, "gateway", "up", "--provider", "openai", "--model", "fake-model", "--api-base", provider.url,
        "--price-in", "0.15", "--price-out", "0.6", "--price-date", "2026-12-01", "--price-source", "test",
        "--models", str(models), "--store", str(store),
    )  # fmt: skip
    try:
        assert up.returncode == 2, (up.stdout, up.stderr)
        line = up.stderr.strip()
        assert "openai refused the key in $OPENAI_API_KEY" in line and "HTTP 401" in line, line
        assert "the gateway was stopped and nothing was written to the catalogue" in line
        assert "Export the right key in OPENAI_API_KEY" in line and "LiteLLM" not in line and "\n" not in line
        assert wrong_key not in up.stdout + up.stderr and "sk-" + "1" * 40 not in up.stdout + up.stderr
        # The one check request reached the provider, with the (wrong) key the proxy read.
        chats = [r for r in provider.requests if r.path.endswith("/chat/completions")]
        assert len(chats) == 1 and chats[0].headers.get("authorization") == f"Bearer {wrong_key}"
        assert _check_rows(store) == [(401, "done")]
        # Nothing left behind: no gateway recorded or running, no catalogue entry.
        status = _cli(user_env, "gateway", "status")
        assert status.returncode == 1 and "no gateway recorded" in status.stdout
        assert not models.exists() or "openai-fake-model" not in models.read_text()
    finally:
        _cli(user_env, "gateway", "down")


def test_up_refuses_without_the_provider_key_and_starts_nothing(tmp_path: Path, monkeypatch) -> None:
    from compare_tui.local import gateway

    env = {"PATH": os.environ.get("PATH", "")}
    # monkeypatch restores the session's own state dir (the local servers' records) afterwards.
    monkeypatch.setenv("COMPARE_TUI_STATE_DIR", str(tmp_path / "state"))
    with pytest.raises(gateway.GatewayError, match=r"\$OPENAI_API_KEY is not set.*compare-tui never does"):
        gateway.up(
            provider="openai", model="m", route="m", key_env="OPENAI_API_KEY", gateway_key="sk-x",
            gateway_key_env="GW", litellm=str(litellm_executable()), environ=env,
        )  # fmt: skip
    assert gateway.read_record() is None and gateway.down() == "nothing recorded"


def test_the_config_names_the_key_variable_never_a_key() -> None:
    from compare_tui.local.gateway import config_text

    config = config_text("anthropic", "claude-x", "claude-x", "MY_KEY", None)
    assert '"api_key": "os.environ/MY_KEY"' in config and '"master_key": "os.environ/LITELLM_MASTER_KEY"' in config
    assert '"model": "anthropic/claude-x"' in config


def test_price_from_litellms_bundled_table_says_where_it_came_from() -> None:
    from compare_tui.local.gateway import table_price

    price = table_price(litellm_executable(), "openai", "gpt-4o-mini")
    assert price is not None and price.usd_per_mtok_input > 0 and price.usd_per_mtok_output > 0
    assert "bundled price table" in price.source and re.fullmatch(r"\d{4}-\d{2}-\d{2}", price.captured)
    assert table_price(litellm_executable(), "openai", "no-such-model-anywhere") is None

"""`compare-tui canary` end to end: the real pinned LiteLLM proxy (`gateway up`, one proxy whose
restarts apply each change of the split), the session's real llama-servers as the baseline A and
the good candidate, and a loopback fake server as a candidate worse than A.

Traffic is a script of chat requests to the workload's alias through the proxy, as an
application would send them. Proves, as a user sees it on the CLI: B worse → `canary watch`
rolls B back to 0 before the second step, the alias restored to A alone, with the audit ledger
holding one `done` replay to A per pair; B as good as A → the verdict settles `no worse` and
`canary advance` moves the weight; then a weight changed by hand → the watch's next step and
`canary advance` refuse, naming it, and the file is left as the person wrote it.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from compare_tui.store import DecisionRecord, Store
from tests.support.fake_openai import FakeServer, text
from tests.support.litellm_proxy import litellm_executable

ROOT = Path(__file__).resolve().parents[2]
WORKLOAD = "greetings"
GATEWAY_KEY = "sk-" + "5" * 40
PROMPTS = [
    "Say hello to Ana.",
    "Greet the new team member.",
    "Write a one-line welcome.",
    "Say good morning.",
    "Reply with a friendly greeting.",
    "Welcome a customer in one sentence.",
]

pytestmark = pytest.mark.integration


def _write_set(root: Path) -> Path:
    """Every task checks that the answer holds a word (any letter): both small models pass it at
    temperature 0; the fake worse candidate answers digits only."""
    (root / "tasks").mkdir(parents=True)
    (root / "golden.toml").write_text(
        f'workload_id = "{WORKLOAD}"\nname = "Greetings"\nversion = "1.0.0"\n'
        '[default_scorer]\nkind = "regex"\npattern = "[A-Za-z]"\n[run]\nmax_tokens = 8\n'
    )
    for i, prompt in enumerate(PROMPTS):
        task = {"id": f"g{i}", "input": {"prompt": prompt}, "expected": {"text": "a greeting"}}
        (root / "tasks" / f"g{i}.json").write_text(json.dumps(task))
    return root


def _cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [sys.executable, "-m", "compare_tui", *args], env=env, capture_output=True, text=True, timeout=400
    )
    print(f"$ compare-tui {' '.join(args)}\n{done.stdout}{done.stderr}")  # the screen, quoted by -s
    return done


def _traffic(url: str, count: int) -> list[str]:
    """`count` requests to the alias, four at a time; the deployment that answered each."""

    def one(i: int) -> str:
        body = {
            "model": WORKLOAD,
            "messages": [{"role": "user", "content": PROMPTS[i % len(PROMPTS)]}],
            "max_tokens": 8,
            "temperature": 0,
        }
        response = httpx.post(
            f"{url}/chat/completions",
            json=body,
            headers={"Authorization": f"Bearer {GATEWAY_KEY}"},
            timeout=120,
            trust_env=False,
        )
        response.raise_for_status()
        return response.headers.get("x-litellm-model-id", "")

    with ThreadPoolExecutor(4) as pool:
        return list(pool.map(one, range(count)))


def _wait_for_lines(log: Path, lines: int) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if log.exists() and log.read_text().count("\n") >= lines:
            return
        time.sleep(0.2)
    raise AssertionError(f"the traffic log {log} did not reach {lines} lines")


def _config_alias(config: Path) -> list[dict]:
    return [e for e in json.loads(config.read_text())["model_list"] if e["model_name"].startswith(WORKLOAD)]


def test_the_canary_loop_through_the_real_gateway(local_cluster, tmp_path: Path) -> None:
    started = time.monotonic()
    models, store_path = tmp_path / "models.toml", tmp_path / "runs.sqlite"
    goldset = _write_set(tmp_path / "set")
    with FakeServer(default=text("42 42 42")) as worse:
        models.write_text(
            local_cluster.catalogue_path.read_text()
            + f'\n[[model]]\nname = "digits-only"\nkind = "hosted"\nendpoint = "{worse.url}"\nmodel = "fake-model"\n'
            'revision = "test"\nweights_digest = "sha256:' + "0" * 64 + '"\n'
        )
        a_endpoint = next(s.endpoint for s in local_cluster.servers if s.name == "smollm2-135m")
        env = {k: v for k, v in os.environ.items() if not k.startswith("COMPARE_TUI_") and not k.endswith("_API_KEY")}
        env.update(
            PYTHONPATH=str(ROOT), COMPARE_TUI_STATE_DIR=str(tmp_path / "state"), UPSTREAM_KEY="sk-none",
            COMPARE_TUI_GATEWAY_KEY=GATEWAY_KEY, COMPARE_TUI_LITELLM_VENV=str(litellm_executable().parent.parent),
        )  # fmt: skip
        with Store.open(store_path) as store:
            store.record_decision(DecisionRecord(workload_id=WORKLOAD, model="smollm2-135m", kind="initial"))
        common = ("--models", str(models), "--store", str(store_path))
        up = _cli(
            env, "gateway", "up", "--provider", "openai", "--model", "smollm2-135m", "--api-base", a_endpoint,
            "--key-env", "UPSTREAM_KEY", "--price-in", "0", "--price-out", "0", "--price-date", "2026-12-07",
            "--price-source", "test", *common,
        )  # fmt: skip
        try:
            assert up.returncode == 0, up.stderr
            record = json.loads((tmp_path / "state" / "gateway" / "gateway.json").read_text())
            url = f"http://127.0.0.1:{record['port']}/v1"
            config, log = Path(record["config"]), Path(record["traffic_log"])
            # 1. B worse than A: rolled back before the second step, every replay audited.
            start = _cli(env, "canary", "start", WORKLOAD, "--set", str(goldset), "--model", "digits-only",
                         "--steps", "50,75,100", "--min-pairs", "5", "--margin-pp", "25", *common)  # fmt: skip
            assert start.returncode == 0, start.stderr
            served = _traffic(url, 30)
            assert {"smollm2-135m", "digits-only"} <= set(served)
            _wait_for_lines(log, 31)  # the check request of `up`, then the traffic
            watch = _cli(env, "canary", "watch", WORKLOAD, "--once", *common)
            assert watch.returncode == 4, watch.stdout + watch.stderr
            assert "rolled back: digits-only weight 0%, alias 'greetings' restored to smollm2-135m" in watch.stdout
            alias = _config_alias(config)
            assert [e["model_info"]["id"] for e in alias] == ["smollm2-135m"] and "weight" not in alias[0][
                "litellm_params"
            ]
            assert set(_traffic(url, 4)) == {"smollm2-135m"}  # the restarted proxy serves A alone
            with sqlite3.connect(store_path) as conn:
                pairs = conn.execute("SELECT paired, replay_audit_id FROM canary_pairs ORDER BY seq").fetchall()
                audit = conn.execute(
                    "SELECT id, state, status, model FROM audit WHERE task_id LIKE 'canary:%' ORDER BY id"
                ).fetchall()
                weights = conn.execute("SELECT to_weight FROM canary_changes ORDER BY id").fetchall()
            assert pairs and all(p == -1 for p, _ in pairs)
            assert [a[0] for a in audit] == [r for _, r in pairs]  # one audited replay per pair, nothing else
            assert {a[1:] for a in audit} == {("done", 200, "smollm2-135m")}
            assert [w for (w,) in weights] == [50.0, 0.0]  # never the second step

            # 2. B as good as A: the verdict settles and a person's advance moves the weight.
            start = _cli(env, "canary", "start", WORKLOAD, "--set", str(goldset), "--model", "gemma3-270m",
                         "--steps", "50,75,100", "--min-pairs", "5", "--margin-pp", "25", *common)  # fmt: skip
            assert start.returncode == 0, start.stderr
            lines = log.read_text().count("\n")
            _traffic(url, 60)
            _wait_for_lines(log, lines + 60)
            watch = _cli(env, "canary", "watch", WORKLOAD, "--once", *common)
            assert watch.returncode == 0, watch.stdout + watch.stderr
            status = _cli(env, "canary", "status", WORKLOAD, "--json", "--store", str(store_path))
            document = json.loads(status.stdout)
            assert (document["verdict"], document["move"], document["weight"]) == ("no worse", "ready", 50.0)
            advance = _cli(env, "canary", "advance", WORKLOAD, *common)
            assert advance.returncode == 0 and "gemma3-270m now takes 75%" in advance.stdout
            assert {e["model_info"]["id"]: e["litellm_params"]["weight"] for e in _config_alias(config)} == {
                "smollm2-135m": 25.0,
                "gemma3-270m": 75.0,
            }

            # 3. A weight changed by hand: the next automatic step refuses and names it.
            document = json.loads(config.read_text())
            for entry in document["model_list"]:
                if entry.get("model_info", {}).get("id") == "gemma3-270m":
                    entry["litellm_params"]["weight"] = 10
            config.write_text(json.dumps(document))
            edited = config.read_text()
            watch = _cli(env, "canary", "watch", WORKLOAD, "--once", *common)
            assert watch.returncode == 5
            assert "changed by hand" in watch.stderr and "gemma3-270m 28.6% (weight 10)" in watch.stderr
            assert "last wrote gemma3-270m 75%" in watch.stderr
            refused = _cli(env, "canary", "advance", WORKLOAD, *common)
            assert refused.returncode == 5 and "changed by hand" in refused.stderr
            assert config.read_text() == edited
            history = _cli(env, "baseline", "history", WORKLOAD, "--store", str(store_path))
            changes = [line.split(": ", 1)[1].split()[0] for line in history.stdout.splitlines() if "  canary " in line]
            assert changes == ["refused", "advanced", "started", "rolled", "started"]
        finally:
            _cli(env, "gateway", "down")
    print(f"wall time {time.monotonic() - started:.0f} s")

"""A `canary watch` killed with SIGKILL in the middle of its pass resumes its evidence exactly:
the real CLI in a child process, a loopback baseline that answers each replay after 0.25 s, the
kill after a few pairs, then a second watch to the end."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from compare_tui import canary
from compare_tui.catalogue import load_catalogue
from compare_tui.store import Store
from tests.support.builders import write_set
from tests.support.fake_openai import FakeServer, text

ROOT = Path(__file__).resolve().parents[3]
ALIAS = "engine-test"
LINES = 16


def _catalogue(path: Path, url: str) -> Path:
    tables = [
        f'[[model]]\nname = "{name}"\nkind = "hosted"\nendpoint = "{endpoint}"\nmodel = "fake-model"\n'
        f'revision = "test"\nweights_digest = "sha256:{"0" * 64}"\n'
        for name, endpoint in (("model-a", url), ("model-b", url + "/b"))
    ]
    path.write_text("\n".join(tables))
    return path


def _pairs(store: Path) -> list[tuple[str, int, int | None]]:
    with sqlite3.connect(store) as conn:
        return conn.execute("SELECT call_id, seq, replay_audit_id FROM canary_pairs ORDER BY seq").fetchall()


def test_a_killed_watch_resumes_at_the_next_line_with_the_same_evidence(tmp_path: Path) -> None:
    with FakeServer(default=text("billing", headers_delay_s=0.25)) as server:
        models = _catalogue(tmp_path / "models.toml", server.url)
        config, log, store_path = tmp_path / "litellm.yaml", tmp_path / "traffic.jsonl", tmp_path / "runs.sqlite"
        config.write_text(json.dumps({"model_list": []}))
        log.write_text("")
        goldset = write_set(tmp_path / "set", {f"t{i}": "billing" for i in range(LINES)})
        with Store.open(store_path) as store:
            canary.start(
                store, load_catalogue(models), workload_id=ALIAS, alias=ALIAS, baseline="model-a", candidate="model-b",
                set_path=goldset, steps=(50.0, 100.0), shadow=False, margin_pp=10.0, min_pairs=100,
                auto_advance=False, max_usd_per_day=None, config_path=config, traffic_log=str(log),
                restart=lambda: None, decided_by="test",
            )  # fmt: skip
        with log.open("a") as out:
            for i in range(LINES):
                line = {
                    "litellm_call_id": f"call-{i:02d}", "model_group": ALIAS, "model_id": "model-b", "status": "success",
                    "messages": [{"role": "user", "content": f"t{i}"}],
                    "response": {"choices": [{"message": {"role": "assistant", "content": "billing"}}]},
                }  # fmt: skip
                out.write(json.dumps(line) + "\n")
        argv = [sys.executable, "-m", "compare_tui", "canary", "watch", ALIAS, "--once", "--replays-per-s", "1000"]
        argv += ["--models", str(models), "--store", str(store_path)]
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        first = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        while len(_pairs(store_path)) < 4 and time.monotonic() < deadline:
            time.sleep(0.05)
        first.send_signal(signal.SIGKILL)
        first.wait()
        killed_at = len(_pairs(store_path))
        assert 4 <= killed_at < LINES
        second = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120)
        assert second.returncode == 3, second.stdout + second.stderr  # hold: no step is due
        assert f"{LINES - killed_at} requests of model-b replayed" in second.stdout
    pairs = _pairs(store_path)
    assert [(call, seq) for call, seq, _ in pairs] == [(f"call-{i:02d}", i) for i in range(LINES)]
    with sqlite3.connect(store_path) as conn:
        rows = conn.execute("SELECT id, task_id, state FROM audit ORDER BY id").fetchall()
    done = {row_id for row_id, _, state in rows if state == "done"}
    assert {audit_id for _, _, audit_id in pairs} <= done  # every pair's replay is a completed row
    # At most the one replay in flight at the kill is left `sent`, or made again on resume.
    assert len(rows) - LINES <= 1

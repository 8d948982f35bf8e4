"""`compare-tui audit`: the audit ledger read back, by state, per model and per run; after a real
`kill -9` of a run its in-flight requests are `sent`, and `unknown` once the run is resumed."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from compare_tui.cli import main
from compare_tui.store import AuditRow, ComparisonRecord, Store
from compare_tui.store.audit_ledger import AuditScope, since_timestamp
from compare_tui.vocabulary import AuditState
from tests.core.commands.test_cli_run import _cli, _env
from tests.core.report.test_report import make_run
from tests.support.builders import hosted_catalogue, write_set
from tests.support.fake_openai import Answer, FakeServer, text


def _row(state: AuditState, model: str = "model-a", **owner) -> AuditRow:
    return AuditRow(endpoint="http://127.0.0.1:9/v1", model=model, task_id="t01", attempt=1, state=state, **owner)


@pytest.fixture
def ledger_store(tmp_path: Path) -> Path:
    path = tmp_path / "runs.sqlite"
    with Store.open(path) as store:
        store.create_run(make_run("run-a", "model-a", comparison_id="cmp-1"))
        store.create_run(make_run("run-b", "model-b", comparison_id="cmp-1"))
        store.create_run(make_run("run-c", "model-a"))
        store.create_comparison(ComparisonRecord(id="cmp-1", name="bake-off", run_ids=["run-a", "run-b"]))
        for state in (AuditState.DONE, AuditState.DONE, AuditState.SENT, AuditState.UNKNOWN):
            store.record_audit(_row(state, run_id="run-a"))
        store.record_audit(_row(AuditState.CANCELLED, "model-b", run_id="run-b"))
        store.record_audit(_row(AuditState.DONE, run_id="run-c"))
        store.record_audit(_row(AuditState.DONE, "judge-model"))  # a judge call: no run
    return path


def test_the_ledger_is_counted_by_state_per_model_and_per_run(ledger_store: Path):
    with Store.open(ledger_store) as store:
        whole = store.audit_ledger(AuditScope())
        assert whole.counts.as_json() == {"sent": 1, "done": 4, "unknown": 1, "cancelled": 1, "total": 7}
        assert {m: c.total for m, c in whole.per_model.items()} == {"judge-model": 1, "model-a": 5, "model-b": 1}
        assert [(r.run_id, r.kind, r.counts.total) for r in whole.per_run] == [
            ("run-a", "run", 4),
            ("run-b", "run", 1),
            ("run-c", "run", 1),
            (None, "none", 1),  # requests of no run last
        ]
        assert [row.state for row in whole.unsettled] == [AuditState.SENT, AuditState.UNKNOWN, AuditState.CANCELLED]
        assert all(isinstance(row.state, AuditState) for row in whole.unsettled)  # the vocabulary's, not strings
        owner = store.audit_owner("cmp")  # a comparison: its runs, nothing else
        assert (owner.noun, owner.run_ids) == ("comparison", ("run-a", "run-b"))
        of_comparison = store.audit_ledger(AuditScope(run_ids=owner.run_ids))
        assert of_comparison.counts.total == 5 and set(of_comparison.per_model) == {"model-a", "model-b"}
        assert store.audit_ledger(AuditScope(since="2999-01-01T00:00:00Z")).counts.total == 0


def test_audit_prints_counts_and_the_rows_not_done(ledger_store: Path, capsys):
    assert main(["audit", "run-a", "--store", str(ledger_store)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("audit ledger of run run-a: 4 request(s)\n  sent 1 · done 2 · unknown 1 · cancelled 0\n")
    assert "per model  sent  done  unknown  cancelled  total\nmodel-a       1     2        1          0      4" in out
    assert "not done (2):" in out and "unknown: its sender died before reading the answer" in out
    assert "run run-a: no live process holds it (killed?)" in out and "compare-tui run --resume run-a" in out
    assert main(["audit", "cmp-1", "--json", "--store", str(ledger_store)]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["scope"]["of"] == "comparison" and doc["scope"]["run_ids"] == ["run-a", "run-b"]
    assert doc["states"] == {"sent": 1, "done": 2, "unknown": 1, "cancelled": 1, "total": 5}
    assert [m["model"] for m in doc["per_model"]] == ["model-a", "model-b"]
    assert [r["run_id"] for r in doc["per_run"]] == ["run-a", "run-b"] and doc["per_run"][0]["executing"] is False
    assert [row["state"] for row in doc["not_done"]] == ["sent", "unknown", "cancelled"]


def test_audit_refuses_what_it_cannot_read_in_one_line(ledger_store: Path, capsys):
    assert main(["audit", "zzz", "--store", str(ledger_store)]) == 2
    assert "no comparison, run or tool-call run with id 'zzz'" in capsys.readouterr().err
    assert main(["audit", "--since", "yesterday", "--store", str(ledger_store)]) == 2
    assert "neither a duration back from now" in capsys.readouterr().err


NOW = datetime(2026, 12, 7, 12, 0, tzinfo=UTC)


@given(st.integers(0, 10_000), st.sampled_from(["s", "m", "h", "d", "w"]))
def test_since_takes_a_duration_back_from_now(n, unit):
    units = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days", "w": "weeks"}
    expected = NOW - timedelta(**{units[unit]: n})
    assert since_timestamp(f"{n}{unit}", now=NOW) == expected.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def test_since_takes_a_date_or_a_time_in_utc_unless_it_names_its_zone():
    assert since_timestamp("2026-12-07") == "2026-12-07T00:00:00.000000Z"
    assert since_timestamp("2026-12-07T13:05") == "2026-12-07T13:05:00.000000Z"
    assert since_timestamp("2026-12-07T13:05+01:00") == "2026-12-07T12:05:00.000000Z"
    assert since_timestamp("2026-12-07T13:05:00Z") == "2026-12-07T13:05:00.000000Z"
    with pytest.raises(ValueError, match="30m, 2h, 3d, 1w"):
        since_timestamp("last tuesday")


def test_after_a_kill_9_the_requests_in_flight_are_sent_then_unknown_once_resumed(tmp_path: Path):
    """A real run killed with SIGKILL while two requests wait on the server."""
    hang = {f"t{i:02d}": Answer(text="ok", headers_delay_s=60) for i in range(10, 20)}
    with FakeServer(hang, default=text("ok")) as server:
        goldset = write_set(tmp_path / "set", {f"t{i:02d}": "ok" for i in range(20)})
        models = hosted_catalogue(tmp_path / "models.toml", server.url)
        store_path = tmp_path / "runs.sqlite"
        argv = _cli("run", str(goldset), "--model", "fake", "--models", str(models), "--store", str(store_path))
        proc = subprocess.Popen([*argv, "--concurrency", "2"], env=_env(tmp_path), stdout=subprocess.PIPE, text=True)
        end = time.monotonic() + 60
        while time.monotonic() < end and sum(1 for r in server.requests if r.path.endswith("/completions")) < 12:
            time.sleep(0.05)
        time.sleep(0.3)  # the ten answered attempts committed; two requests hang on the server
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=30)

        audit = subprocess.run(
            _cli("audit", "--store", str(store_path), "--json"), env=_env(tmp_path), capture_output=True, text=True
        )
        assert audit.returncode == 0, audit.stderr
        doc = json.loads(audit.stdout)
        assert doc["states"] == {"sent": 2, "done": 10, "unknown": 0, "cancelled": 0, "total": 12}
        (run,) = doc["per_run"]
        assert run["models"] == ["fake-model"] and run["executing"] is False
        assert sorted(row["task_id"] for row in doc["not_done"]) == ["t10", "t11"]

        server.script = {}  # the server answers again
        resumed = subprocess.run(
            _cli("run", "--resume", run["run_id"], "--models", str(models), "--store", str(store_path)),
            env=_env(tmp_path),
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert resumed.returncode == 0, resumed.stderr
    after = subprocess.run(
        _cli("audit", run["run_id"][:8], "--store", str(store_path)), env=_env(tmp_path), capture_output=True, text=True
    )
    assert after.returncode == 0, after.stderr
    assert "sent 0 · done 20 · unknown 2 · cancelled 0" in after.stdout
    assert "unknown: its sender died before reading the answer: the server may have had it" in after.stdout

"""The store's decisions (baseline promotions) and a comparison's named baseline (schema v7)."""

from __future__ import annotations

import sqlite3

import pytest

from compare_tui.store import (
    ComparisonRecord,
    DecisionRecord,
    RunRecord,
    Store,
    StoreError,
    schema,
)


def _runs(store: Store, *models: str) -> list[str]:
    ids = []
    for model in models:
        run = store.create_run(RunRecord(goldset_id="triage", model_name=model, task_count=1))
        ids.append(run.id)
    return ids


def test_a_comparison_keeps_its_baseline_and_it_can_be_changed(tmp_path):
    with Store.open(tmp_path / "runs.sqlite") as store:
        ids = _runs(store, "a", "b")
        made = store.create_comparison(ComparisonRecord(run_ids=ids, baseline="a"))
        assert store.get_comparison(made.id).baseline == "a"
        assert store.set_comparison_baseline(made.id, "b").baseline == "b"
        assert store.set_comparison_baseline(made.id, None).baseline is None
        plain = store.create_comparison(ComparisonRecord(run_ids=ids))
        assert store.get_comparison(plain.id).baseline is None


def test_the_latest_decision_is_the_baseline_and_history_is_newest_first(tmp_path):
    with Store.open(tmp_path / "runs.sqlite") as store:
        assert store.current_baseline("triage") is None and store.baseline_history("triage") == []
        store.record_decision(
            DecisionRecord(workload_id="triage", model="a", kind="initial", decided_at="2026-01-01T00:00:00Z")
        )
        store.record_decision(
            DecisionRecord(
                workload_id="triage",
                model="b",
                previous_model="a",
                kind="forced",
                reason="cheaper, watched by hand",
                decided_at="2026-01-02T00:00:00Z",
                figures={"verdict": "inconclusive"},
                pins={"b": {"digest": "x"}},
            )
        )
        store.record_decision(DecisionRecord(workload_id="other", model="a", decided_at="2026-01-03T00:00:00Z"))
        current = store.current_baseline("triage")
        assert current is not None and current.model == "b" and current.figures == {"verdict": "inconclusive"}
        assert [d.model for d in store.baseline_history("triage")] == ["b", "a"]
        assert store.workloads_with_baseline("a") == ["other"]
        assert store.workloads_with_baseline("b") == ["triage"]
        assert list(store.current_baselines()) == ["other", "triage"]


def test_a_forced_decision_without_a_reason_is_refused(tmp_path):
    with Store.open(tmp_path / "runs.sqlite") as store:
        with pytest.raises(StoreError, match="--reason"):
            store.record_decision(DecisionRecord(workload_id="triage", model="b", kind="forced"))
        assert store.current_baseline("triage") is None


def test_a_v6_store_gains_the_baseline_column_and_keeps_its_comparisons(tmp_path):
    path = tmp_path / "runs.sqlite"
    conn = sqlite3.connect(path)
    for migration in schema.MIGRATIONS[:6]:
        migration(conn)
    conn.execute("INSERT INTO meta VALUES ('app', 'compare-tui'), ('schema_version', '6')")
    conn.execute("INSERT INTO comparisons (id, name, created_at) VALUES ('c1', 'old', '2026-01-01T00:00:00.000000Z')")
    conn.commit()
    conn.close()
    with Store.open(path) as store:
        assert store.schema_version == schema.CURRENT_VERSION
        old = store.get_comparison("c1")
        assert old.name == "old" and old.baseline is None


def test_a_v9_store_gains_the_recorded_margin_and_new_comparisons_keep_theirs(tmp_path):
    path = tmp_path / "runs.sqlite"
    conn = sqlite3.connect(path)
    for migration in schema.MIGRATIONS[:9]:
        migration(conn)
    conn.execute("INSERT INTO meta VALUES ('app', 'compare-tui'), ('schema_version', '9')")
    conn.execute("INSERT INTO comparisons (id, name, created_at) VALUES ('c1', 'old', '2026-01-01T00:00:00.000000Z')")
    conn.commit()
    conn.close()
    with Store.open(path) as store:
        assert store.schema_version == schema.CURRENT_VERSION
        assert store.get_comparison("c1").margin_pp is None  # nothing was recorded before the data
        made = store.create_comparison(ComparisonRecord(name="new", margin_pp=3.0))
        assert store.get_comparison(made.id).margin_pp == 3.0

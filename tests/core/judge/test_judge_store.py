"""The judge tables: deterministic ids, idempotent writes, latest label wins, cascade on delete."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from compare_tui.store import RunNotFoundError, RunRecord, Store
from compare_tui.store.judgements import (
    JudgementRecord,
    JudgingRecord,
    PairLabelRecord,
    judgement_id,
    judging_id,
)
from compare_tui.store.schema import CURRENT_VERSION


@pytest.fixture
def store(tmp_path):
    with Store.open(tmp_path / "runs.sqlite") as s:
        yield s


def _runs(store):
    return [store.create_run(RunRecord(goldset_id="g", model_name=m)).id for m in ("a", "b")]


def _judging(base, cand, judge="judge", digest="sha256:" + "1" * 64):
    return JudgingRecord(
        kind="pair",
        run_id=base,
        other_run_id=cand,
        judge_model=judge,
        rubric_digest=digest,
        mode="direct",
        rubric="Be right.",
        judge_entry={"name": judge, "model": judge},
    )


def test_ids_are_deterministic_over_runs_judge_and_rubric(store):
    base, cand = _runs(store)
    one = _judging(base, cand)
    assert one.id == _judging(base, cand).id == judging_id("pair", base, cand, "judge", one.rubric_digest)
    assert (
        len(
            {
                one.id,
                _judging(cand, base).id,
                _judging(base, cand, judge="other").id,
                _judging(base, cand, digest="sha256:" + "2" * 64).id,
            }
        )
        == 4
    )
    record = JudgementRecord(judging_id=one.id, task_id="t1", ordering="ab", verdict="A", preferred="baseline")
    assert record.id == judgement_id(one.id, "t1", "ab") == f"{one.id}:t1:ab"
    with pytest.raises(ValidationError, match="judgement id must be"):
        JudgementRecord(id="made-up", judging_id=one.id, task_id="t1", ordering="ab")
    assert store.schema_version == CURRENT_VERSION


def test_writes_are_idempotent_and_a_failed_call_is_a_row(store):
    base, cand = _runs(store)
    judging = store.save_judging(_judging(base, cand))
    again = store.save_judging(_judging(base, cand).model_copy(update={"created_at": "2030-01-01T00:00:00Z"}))
    assert again.created_at == judging.created_at  # identity and birth date never change
    failed = JudgementRecord(
        judging_id=judging.id, task_id="t1", ordering="ab", error_class="http_5xx", error="HTTP 500"
    )
    store.record_judgement(failed)
    assert store.decided_judgement_ids(judging.id) == set()
    assert store.judgements_for(judging.id)[0].failed
    store.record_judgement(failed.model_copy(update={"verdict": "B", "preferred": "candidate", "error_class": None}))
    rows = store.judgements_for(judging.id)
    assert len(rows) == 1 and rows[0].verdict == "B" and store.decided_judgement_ids(judging.id) == {failed.id}


def test_lookup_by_prefix_latest_and_listing(store):
    base, cand = _runs(store)
    judging = store.save_judging(_judging(base, cand))
    assert store.get_judging(judging.id[:5]).id == judging.id
    assert store.get_judging("latest").id == judging.id
    assert [j.id for j in store.list_judgings(run_id=cand)] == [judging.id]
    assert store.list_judgings(kind="grade") == []
    with pytest.raises(RunNotFoundError):
        store.get_judging("ffff")
    store.set_judging_current(judging.id, "scorer")
    assert store.get_judging(judging.id).current == "scorer"


def test_the_latest_pair_label_wins_and_all_are_kept(store):
    base, cand = _runs(store)
    store.add_pair_label(PairLabelRecord(run_id=base, other_run_id=cand, task_id="t1", label="tie", reviewer="ann"))
    later = store.add_pair_label(
        PairLabelRecord(run_id=base, other_run_id=cand, task_id="t1", label="candidate", reviewer="bob", note="clearer")
    )
    labels = store.pair_labels(base, cand)
    assert labels["t1"].label == "candidate" and labels["t1"].reviewer == "bob" and labels["t1"].id == later.id
    assert store.pair_labels(cand, base) == {}


def test_deleting_a_run_deletes_its_judgings_judgements_and_labels(store):
    base, cand = _runs(store)
    judging = store.save_judging(_judging(base, cand))
    store.record_judgement(
        JudgementRecord(judging_id=judging.id, task_id="t1", ordering="ab", verdict="A", preferred="baseline")
    )
    store.add_pair_label(PairLabelRecord(run_id=base, other_run_id=cand, task_id="t1", label="tie"))
    store.delete_run(cand)
    assert store.list_judgings() == [] and store.judgements_for(judging.id) == []
    assert store.pair_labels(base, cand) == {}


def test_an_older_store_gains_the_judge_tables(tmp_path):
    import sqlite3

    from compare_tui.store import schema

    path = tmp_path / "old.sqlite"
    conn = sqlite3.connect(path, isolation_level=None)
    for migration in schema.MIGRATIONS[:3]:  # v1-v3: every migration before the judges' (v4, v5)
        migration(conn)
    conn.execute("INSERT INTO meta VALUES ('app', 'compare-tui'), ('schema_version', '3')")
    conn.close()
    with Store.open(path) as store:
        assert store.schema_version == CURRENT_VERSION
        base, cand = _runs(store)
        assert store.save_judging(_judging(base, cand)).reply_form == "text"

"""How `publish` writes fast without changing a byte: report.json's text from `indented_json`
(the same as `json.dumps(…, indent=2, ensure_ascii=False)`), the cyclic collector kept out of a
publish and switched back on after it, and answers with and without tool calls read the one
way the page shows them. Speed itself is measured in bench/bench_publish.py, never asserted."""

from __future__ import annotations

import enum
import gc
import json
import math
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import compare_tui.publish.bundle as bundle
from compare_tui.publish import PublishError, publish_experiment, publish_report
from compare_tui.publish.details import Masker, task_details
from compare_tui.publish.indented_json import indented_json
from compare_tui.report import build_report, load_report_inputs, render_json
from compare_tui.store import AttemptRecord, Store
from tests.core.test_publish import VIRTUAL, fill_store
from tests.core.test_report import make_run

scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True, allow_infinity=True) | st.text()
keys = st.text() | st.integers() | st.floats(allow_nan=False) | st.booleans() | st.none()
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.tuples(inner, inner) | st.dictionaries(keys, inner, max_size=4),
    max_leaves=30,
)


@settings(max_examples=400, deadline=None)
@given(values)
def test_indented_json_is_json_dumps_with_an_indent_of_two_byte_for_byte(value):
    assert indented_json(value) == json.dumps(value, indent=2, ensure_ascii=False)


class Level(enum.IntEnum):
    LOW = 1


class Word(str, enum.Enum):  # noqa: UP042 (a str-mixin enum, as older code writes them)
    PASS = "pass"


class Ratio(float):
    pass


def test_subclasses_odd_keys_and_non_finite_numbers_read_as_json_dumps_reads_them():
    value = {
        "level": Level.LOW,
        "word": Word.PASS,
        "ratio": Ratio(0.5),
        7: [math.nan, math.inf, -math.inf],
        2.5: {},
        True: [],
        None: 'é \u2028 \ud800 "q" \\ \n',
        False: [[{}]],
        "nested": [{"a": [1, {"b": None}]}],
    }
    assert indented_json(value) == json.dumps(value, indent=2, ensure_ascii=False)


@pytest.mark.parametrize("value", [{1, 2}, {"x": object()}, [b"bytes"], {(1, 2): 3}])
def test_what_json_dumps_refuses_is_refused_too(value):
    with pytest.raises(TypeError):
        json.dumps(value, indent=2, ensure_ascii=False)
    with pytest.raises(TypeError):
        indented_json(value)


@pytest.fixture
def store_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("WT17_TEST_KEY", VIRTUAL)
    return fill_store(tmp_path / "runs.sqlite")


def test_report_json_is_exactly_render_json_of_the_report(store_path, tmp_path):
    from compare_tui.insights import build_insights, insights_document, load_insight_inputs

    with Store.open(store_path) as store:
        published = publish_report(store, "cmp-1", tmp_path / "b")
        expected = render_json(build_report(load_report_inputs(store, "cmp-1")))
        insights = insights_document(build_insights(load_insight_inputs(store, "cmp-1")))
    document = json.loads(published.report.read_text(encoding="utf-8"))
    # The report's document, then the insights as `report --format json` adds them.
    assert list(document)[-1] == "insights" and document.pop("insights") == insights
    assert document == json.loads(expected)


def test_the_collector_is_off_during_a_publish_and_back_on_after_it(store_path, tmp_path, monkeypatch):
    seen: list[bool] = []
    page = bundle.comparison_page

    def watched(*args, **kwargs):
        seen.append(gc.isenabled())
        return page(*args, **kwargs)

    monkeypatch.setattr(bundle, "comparison_page", watched)
    assert gc.isenabled()
    with Store.open(store_path) as store:
        publish_report(store, "cmp-1", tmp_path / "b")
        assert seen == [False] and gc.isenabled()
        (tmp_path / "file").write_text("x")
        with pytest.raises(PublishError):  # a publish that fails switches it back on too
            publish_report(store, "cmp-1", tmp_path / "file")
        assert seen == [False, False] and gc.isenabled()
        gc.disable()
        try:  # a caller that had switched it off keeps it off
            publish_report(store, "cmp-1", tmp_path / "c")
            assert not gc.isenabled()
        finally:
            gc.enable()


def test_an_experiment_publish_leaves_the_collector_on_even_when_it_fails(store_path, tmp_path):
    from compare_tui.store import StoreError

    with Store.open(store_path) as store, pytest.raises(StoreError):
        publish_experiment(store, "missing", tmp_path / "e")
    assert gc.isenabled()


def test_answers_with_and_without_tool_calls_read_as_the_page_shows_them(tmp_path):
    with Store.open(tmp_path / "runs.sqlite") as store:
        run = store.create_run(make_run("run-t", "m"))
        store.record_attempts(
            [
                AttemptRecord(run_id=run.id, task_id="t1", attempt=1, outcome="pass", answer_text="billing"),
                AttemptRecord(
                    run_id=run.id,
                    task_id="t2",
                    attempt=1,
                    outcome="pass",
                    answer_text="",
                    tool_calls=[{"id": "c1", "name": "lookup", "arguments": '{"b": 2, "a": 1}'}],
                ),
                AttemptRecord(
                    run_id=run.id,
                    task_id="t3",
                    attempt=1,
                    outcome="fail",
                    answer_text="let me check",
                    tool_calls=[{"id": "c2", "name": "find", "arguments": "not json"}],
                ),
                AttemptRecord(run_id=run.id, task_id="t4", attempt=1, outcome="fail", answer_text=""),
            ]
        )
        details = task_details(store, [run], ["t1", "t2", "t3", "t4"], Masker([run], {}), {})
    answers = [d.attempts[run.id][0].answer for d in details]
    assert answers == ["billing", '[tool call] lookup({"a":1,"b":2})', "let me check\n[tool call] find(not json)", ""]

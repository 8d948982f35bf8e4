"""A run's stored serving readings (`RunRecord.serving`) are read back typed, once, by
`endpoint.account.ServingReading`: never raising on what older runs stored, and giving back
exactly what the engine wrote."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from compare_tui.endpoint.account import (
    ServingReading,
    StoredIdentity,
    StoredServerLatency,
    StoredToolsReach,
    latest_fingerprint,
    latest_reading,
    stack_of,
    stored_readings,
)
from compare_tui.endpoint.fingerprint import FIELDS
from compare_tui.endpoint.prometheus import VLLM_METRICS, Histogram
from compare_tui.engine.server_latency import merged, serves_vllm
from compare_tui.engine.serving import check_serving, read_server
from compare_tui.engine.tools_reach import ToolsReach
from compare_tui.report.serving import serving_summary
from compare_tui.store import RunRecord
from tests.core.test_server_account import _entry
from tests.support.scripted_stacks import ScriptedServer, llama_cpp_routes, vllm_routes

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
reading_keys = st.sampled_from(["captured_at", "fingerprint", "notes", "unread", "not_served", "stated", "loaded"])
# Stored readings of any shape: the keys a reading has, holding any JSON value.
reading_like = st.dictionaries(reading_keys | st.text(max_size=6), json_values, max_size=6)


@given(st.lists(reading_like | json_values, max_size=4) | json_values)
def test_reading_back_never_raises_on_any_stored_shape(serving):
    readings = stored_readings(serving)
    assert all(isinstance(r, ServingReading) for r in readings)
    latest = latest_reading(serving)
    assert latest is None or latest == readings[-1]
    assert isinstance(dict(latest_fingerprint(serving if isinstance(serving, list) else [])), dict)
    stack_of(serving if isinstance(serving, list) else [])
    serves_vllm(serving if isinstance(serving, list) else [])


@given(st.lists(reading_like, max_size=3))
def test_the_report_reads_any_stored_reading_without_raising(serving):
    run = RunRecord(id="r", goldset_id="w", model_name="m").model_copy(update={"serving": serving})
    summary = serving_summary(run, "m")
    assert summary.read == bool(serving)


fingerprints = st.fixed_dictionaries(
    {}, optional={key: st.text(min_size=1, max_size=8) | st.integers(1, 10**6) for key, _ in FIELDS}
)
engine_readings = st.fixed_dictionaries(
    {
        "captured_at": st.text(min_size=1, max_size=25),
        "fingerprint": fingerprints,
        "notes": st.lists(st.text(max_size=10), max_size=3),
    },
    optional={
        "unread": st.text(max_size=20),
        "not_served": st.lists(st.text(max_size=10), max_size=3),
        "stated": st.dictionaries(st.text(min_size=1, max_size=10), st.text(max_size=10), min_size=1, max_size=2),
        "loaded": st.fixed_dictionaries({"status": st.sampled_from(["matched", "unchecked"]), "text": st.text()}),
    },
)


@given(engine_readings)
def test_what_the_engine_writes_round_trips(reading):
    parsed = ServingReading.from_stored(reading)
    assert parsed is not None and parsed.as_stored() == reading
    assert parsed.stack == (str(reading["fingerprint"]["stack"]) if reading["fingerprint"].get("stack") else None)


def test_readings_read_from_real_answers_round_trip_and_name_their_stack():
    for routes, model, stack in (
        (llama_cpp_routes("tiny"), "tiny", "llama.cpp llama-server"),
        (vllm_routes("org/m", root="/srv/m"), "org/m", "vLLM"),
    ):
        with ScriptedServer(routes) as server:
            entry = _entry(server.url, model)
            _, reading = check_serving(entry, read_server(entry, {}).reading, strict=False)
        parsed = ServingReading.from_stored(reading)
        assert parsed is not None and parsed.as_stored() == reading and parsed.loaded is not None
        assert parsed.stack == stack == stack_of([reading])
        assert serves_vllm([reading]) is (stack == "vLLM")
    with ScriptedServer({}) as server:  # nothing answers: the reading says why
        unread = read_server(_entry(server.url, "m"), {}).reading
    parsed = ServingReading.from_stored(unread)
    assert parsed is not None and parsed.unread and parsed.fingerprint == {} and parsed.as_stored() == unread


def test_an_older_runs_odd_reading_reads_as_absent_fields_not_an_error():
    old = [{"fingerprint": ["not", "a", "dict"], "notes": "one note", "loaded": "matched"}, 7]
    (reading,) = stored_readings(old)
    assert (reading.fingerprint, reading.notes, reading.loaded, reading.captured_at) == ({}, (), None, None)
    assert stack_of(old) is None and not serves_vllm(old) and latest_fingerprint(old) == {}


@given(json_values)
def test_a_stored_tools_check_and_identity_read_back_without_raising(value):
    reach = StoredToolsReach.from_stored(value)
    assert reach is None or isinstance(reach.reached, bool)
    identity = StoredIdentity.of({"server": value})
    assert identity.recorded == (value if isinstance(value, dict) else {})


@given(st.booleans(), st.text(max_size=30))
def test_the_tools_check_the_engine_writes_reads_back_as_written(reached, how):
    assert StoredToolsReach.from_stored(ToolsReach(reached, how).as_dict()) == StoredToolsReach(reached, how)
    assert StoredToolsReach.from_stored({"reached": "yes", "how": how}) is None  # not the engine's shape


@given(json_values | st.dictionaries(st.sampled_from(["source", "ttft", "e2e", "executions"]), json_values))
def test_stored_server_latency_reads_back_without_raising(value):
    recorded = StoredServerLatency.from_stored(value)
    assert recorded is None or recorded.executions >= 1


bucket_counts = st.lists(st.integers(0, 50), min_size=1, max_size=4)


@given(bucket_counts, st.integers(0, 20), st.integers(0, 20))
def test_the_server_latency_the_engine_merges_reads_back_as_written(counts, first, second):
    cumulative = [sum(counts[: i + 1]) for i in range(len(counts))]
    bounds = [0.1 * (i + 1) for i in range(len(counts) - 1)] + [float("inf")]
    ttft = Histogram(tuple(zip(bounds, map(float, cumulative), strict=True)), 1.5)
    delta = {"source": VLLM_METRICS, "ttft": ttft.as_dict(), "e2e": None}
    stored = merged(merged(None, delta, first), delta, second)
    recorded = StoredServerLatency.from_stored(stored)
    assert recorded is not None and recorded.source == VLLM_METRICS and recorded.e2e is None
    assert (recorded.requests_answered, recorded.executions) == (first + second, 2)
    assert recorded.ttft is not None and recorded.ttft.as_dict() == stored["ttft"]

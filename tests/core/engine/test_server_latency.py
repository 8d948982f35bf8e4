"""The TTFT cross-check's pure parts: the Prometheus text parser, the histogram-quantile
estimator (Hypothesis), the reading of vLLM's histograms, and the report's figure and caveat."""

from __future__ import annotations

import math
import statistics

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compare_tui.endpoint.prometheus import Histogram, histogram, parse_exposition, quantile
from compare_tui.engine.server_latency import HistogramReading, histograms_in, merged
from compare_tui.report.inputs import AttemptFacts
from compare_tui.report.server_latency import LLAMA, VLLM, cross_check, cross_check_caveats
from compare_tui.vocabulary import Outcome

# What vLLM 0.32 answered on GET /metrics (abridged: two buckets of each kind dropped).
VLLM_TEXT = """\
# HELP vllm:time_to_first_token_seconds Histogram of time to first token in seconds.
# TYPE vllm:time_to_first_token_seconds histogram
vllm:time_to_first_token_seconds_bucket{engine="0",le="0.08",model_name="smollm2-135m"} 5.0
vllm:time_to_first_token_seconds_bucket{engine="0",le="0.1",model_name="smollm2-135m"} 7.0
vllm:time_to_first_token_seconds_bucket{engine="0",le="0.25",model_name="smollm2-135m"} 18.0
vllm:time_to_first_token_seconds_bucket{engine="0",le="+Inf",model_name="smollm2-135m"} 18.0
vllm:time_to_first_token_seconds_count{engine="0",model_name="smollm2-135m"} 18.0
vllm:time_to_first_token_seconds_sum{engine="0",model_name="smollm2-135m"} 2.0512
vllm:time_to_first_token_seconds_created{engine="0",model_name="smollm2-135m"} 1.7966239407358615e+09
# HELP vllm:e2e_request_latency_seconds Histogram of e2e request latency in seconds.
# TYPE vllm:e2e_request_latency_seconds histogram
vllm:e2e_request_latency_seconds_bucket{engine="0",le="0.3",model_name="smollm2-135m"} 2.0
vllm:e2e_request_latency_seconds_bucket{engine="0",le="2.0",model_name="smollm2-135m"} 18.0
vllm:e2e_request_latency_seconds_bucket{engine="0",le="+Inf",model_name="smollm2-135m"} 18.0
vllm:e2e_request_latency_seconds_sum{engine="0",model_name="smollm2-135m"} 20.2
vllm:num_requests_running{engine="0",model_name="smollm2-135m"} 0.0
python_info{implementation="CPython",major="3",minor="11",patchlevel="7",version="3.11.7"} 1.0
"""


def test_vllm_histograms_are_read_for_the_served_model():
    reading = histograms_in(VLLM_TEXT, "smollm2-135m")
    assert reading.ttft is not None and reading.e2e is not None
    assert reading.ttft.buckets == ((0.08, 5.0), (0.1, 7.0), (0.25, 18.0), (math.inf, 18.0))
    assert reading.ttft.count == 18 and reading.ttft.sum == pytest.approx(2.0512)
    estimate = quantile(reading.ttft, 0.5)
    assert estimate is not None and (estimate.lower, estimate.upper) == (0.1, 0.25)
    assert estimate.value == pytest.approx(0.1 + 0.15 * (9 - 7) / (18 - 7))
    other = histograms_in(VLLM_TEXT.replace("smollm2-135m", "qwen"), "smollm2-135m")
    assert other.ttft is not None  # no series for the model: every series counts (one model served)
    assert histograms_in("# nothing here\n", "m") == HistogramReading(None, None)


def test_a_delta_is_the_runs_requests_and_a_restart_gives_none():
    before = histograms_in(VLLM_TEXT, "smollm2-135m")
    after = histograms_in(VLLM_TEXT.replace("18.0", "21.0").replace("} 7.0", "} 8.0"), "smollm2-135m")
    delta = after.since(before)
    assert delta is not None and delta["source"] == "vLLM /metrics"
    assert delta["ttft"]["buckets"] == [[0.08, 0.0], [0.1, 1.0], [0.25, 3.0], ["+Inf", 3.0]]
    assert after.since(after) is not None and before.since(after) is None  # counts went down
    twice = merged(merged(None, delta, 3), delta, 3)
    assert (twice["requests_answered"], twice["executions"]) == (6, 2)
    assert twice["ttft"]["buckets"][-1] == ["+Inf", 6.0]


@pytest.mark.parametrize(
    "line",
    ["no_value", 'm{le="1" 2', "m{le=1} 2", "m 1 2 3", 'm{a="x"} notanumber'],
)
def test_a_line_that_is_not_a_sample_is_refused_with_its_number(line):
    with pytest.raises(ValueError, match="metrics line 2"):
        parse_exposition("# HELP m x\n" + line + "\n")


# ---------------------------------------------------------------- Hypothesis: the parser

NAMES = st.from_regex(r"[a-zA-Z_:][a-zA-Z0-9_:]{0,20}", fullmatch=True)
LABEL_NAMES = st.from_regex(r"[a-zA-Z_][a-zA-Z0-9_]{0,10}", fullmatch=True)
LABEL_VALUES = st.text(st.characters(blacklist_categories=("Cs",)), max_size=12)
VALUES = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-(10**12), 10**12).map(float))


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _value(value: float) -> str:
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    return repr(value)


@given(
    st.lists(
        st.tuples(NAMES, st.dictionaries(LABEL_NAMES, LABEL_VALUES, max_size=4), VALUES, st.booleans()),
        max_size=12,
    )
)
@settings(max_examples=300, deadline=None)
def test_the_parser_reads_back_what_the_exposition_format_writes(samples):
    lines = []
    for name, labels, value, with_comment in samples:
        if with_comment:
            lines += [f"# HELP {name} some text", f"# TYPE {name} gauge", ""]
        rendered = ",".join(f'{k}="{_escape(v)}"' for k, v in labels.items())
        lines.append(f"{name}{{{rendered}}} {_value(value)}" if labels else f"{name} {_value(value)}")
    parsed = parse_exposition("\n".join(lines))
    assert [(s.name, dict(s.labels)) for s in parsed] == [(n, labels) for n, labels, _, _ in samples]
    for sample, (_, _, value, _) in zip(parsed, samples, strict=True):
        assert (math.isnan(sample.value) and math.isnan(value)) or sample.value == value


# ---------------------------------------------------------------- Hypothesis: the estimator


def _histogram(observations: list[float], bounds: list[float]) -> Histogram:
    """What a Prometheus client library would export for these observations."""
    edges = [*sorted(set(bounds)), math.inf]
    return Histogram(tuple((b, float(sum(1 for x in observations if x <= b))) for b in edges), sum(observations))


OBSERVATIONS = st.lists(st.floats(min_value=1e-4, max_value=100.0), min_size=1, max_size=60)
BOUNDS = st.lists(st.floats(min_value=1e-3, max_value=50.0), min_size=1, max_size=12)


@given(OBSERVATIONS, BOUNDS, st.floats(min_value=0.01, max_value=1.0))
@settings(max_examples=400, deadline=None)
def test_the_true_quantile_lies_in_the_estimates_bucket(observations, bounds, q):
    hist = _histogram(observations, bounds)
    estimate = quantile(hist, q)
    assert estimate is not None
    # The observation of rank ceil(q·n) is the quantile the histogram's rank q·n points at.
    true = sorted(observations)[max(1, math.ceil(q * len(observations) - 1e-9)) - 1]
    assert estimate.lower <= estimate.value <= estimate.upper
    assert estimate.lower < true <= estimate.upper or (estimate.lower == 0 and true <= estimate.upper)
    if math.isinf(estimate.upper):  # the open bucket: Prometheus answers its lower bound
        assert estimate.value == max(bounds)


@given(OBSERVATIONS, BOUNDS, st.floats(0.0, 1.0), st.floats(0.0, 1.0))
@settings(max_examples=200, deadline=None)
def test_the_estimate_never_falls_as_q_rises(observations, bounds, a, b):
    hist = _histogram(observations, bounds)
    low, high = quantile(hist, min(a, b)), quantile(hist, max(a, b))
    assert low is not None and high is not None and low.value <= high.value


@given(OBSERVATIONS, OBSERVATIONS, BOUNDS)
@settings(max_examples=200, deadline=None)
def test_the_histogram_of_two_runs_less_the_first_is_the_second(first, second, bounds):
    a, both = _histogram(first, bounds), _histogram(first + second, bounds)
    delta = both.minus(a)
    assert delta is not None
    assert delta.buckets == _histogram(second, bounds).buckets
    assert Histogram.from_dict(delta.as_dict()).buckets == delta.buckets
    assert a.minus(both) is None or not second  # counts that fell: a restart, not a run


def test_an_empty_histogram_and_a_q_outside_0_1_give_no_estimate():
    empty = Histogram(((1.0, 0.0), (math.inf, 0.0)))
    assert quantile(empty, 0.5) is None and quantile(_histogram([0.5], [1.0]), 1.5) is None
    assert histogram(parse_exposition('m_bucket{le="1"} 1\n'), "m") is None  # no +Inf bucket


# ---------------------------------------------------------------- the report's figure


def _attempts(pairs):
    return [
        AttemptFacts(f"t{i}", 1, Outcome.PASS, ttft_ms=client, server_ttft_ms=server)
        for i, (client, server) in enumerate(pairs)
    ]


def test_llama_cpp_timings_give_exact_medians_and_a_small_gap_no_caveat():
    pairs = [(120.0, 100.0), (130.0, 110.0), (140.0, 125.0)]
    check = cross_check("r", "m", {}, _attempts(pairs))
    assert check is not None and check.source == LLAMA and check.server_bucket_ms is None
    assert (check.server_p50_ms, check.client_p50_ms, check.requests) == (110.0, 130.0, 3)
    assert check.difference_ms == pytest.approx(statistics.fmean([20, 20, 15]))
    assert not check.large and cross_check_caveats(check) == []


def test_the_line_says_it_covers_every_request_not_the_tables_completed_tasks():
    # The latency table beside the line holds one value per completed task; this line's client
    # p50 is over every request, failed ones too, so the two differ and the line must say why.
    attempts = [AttemptFacts("t0", 1, Outcome.PASS, ttft_ms=100.0, server_ttft_ms=80.0)] + [
        AttemptFacts(f"t{i}", 1, Outcome.FAIL, ttft_ms=400.0, server_ttft_ms=380.0) for i in range(1, 4)
    ]
    check = cross_check("r", "m", {}, attempts)
    assert check is not None and check.client_p50_ms == 400.0
    line = check.line()
    assert line.startswith("m, every request (not only the completed tasks above): llama.cpp prompt processing")
    assert "(llama.cpp timings, 4 requests)" in line and line.endswith("client − server (means) +20 ms")


def test_a_gap_past_50_ms_and_a_quarter_of_the_clients_ttft_is_a_caveat():
    check = cross_check("r", "m", {}, _attempts([(400.0, 100.0)] * 3))
    assert check is not None and check.large
    [caveat] = cross_check_caveats(check)
    assert caveat.code == "ttft_cross_check" and "+300 ms" in caveat.text and "50 ms" in caveat.text
    slow = cross_check("r", "m", {}, _attempts([(4000.0, 3900.0)] * 3))  # 100 ms of 4 s: not large
    assert slow is not None and not slow.large


def test_a_llama_cpp_gap_names_the_wait_for_a_free_slot_that_prompt_ms_leaves_out():
    llama = cross_check("r", "m", {}, _attempts([(600.0, 100.0)] * 3))
    assert llama is not None
    [caveat] = cross_check_caveats(llama)
    assert "free server slot" in caveat.text
    reading = histograms_in(VLLM_TEXT, "smollm2-135m")
    recorded = merged(None, reading.since(HistogramReading(Histogram(()), None)) or {}, 18)
    vllm = cross_check("r", "m", {"server_latency": recorded}, _attempts([(900.0, None)] * 18))
    assert vllm is not None and vllm.large
    assert [c.text for c in cross_check_caveats(vllm) if "free server slot" in c.text] == []


def test_a_llama_cpp_gap_at_concurrency_within_the_slots_is_not_blamed_on_waiting_for_a_slot():
    # Issue 46: concurrency 2 on 2 slots, +783 ms: the caveat named slot waiting, which cannot be.
    within = cross_check("r", "m", {}, _attempts([(900.0, 117.0)] * 3), concurrency=2, slots=2)
    assert within is not None
    [caveat] = cross_check_caveats(within)
    assert "+783 ms" in caveat.text
    assert "not a wait for a free slot: the run's concurrency 2 is within the server's 2 slots" in caveat.text
    assert "waiting for a free server slot" not in caveat.text
    assert "before a slot starts on its prompt" in caveat.text
    beyond = cross_check("r", "m", {}, _attempts([(900.0, 117.0)] * 3), concurrency=4, slots=2)
    assert beyond is not None
    [caveat] = cross_check_caveats(beyond)
    assert "waiting for a free server slot (the run's concurrency 4 exceeds the server's 2 slots)" in caveat.text


def test_the_two_stacks_figures_are_labelled_for_what_each_spans():
    llama = cross_check("r", "m", {}, _attempts([(120.0, 100.0)] * 3))
    reading = histograms_in(VLLM_TEXT, "smollm2-135m")
    recorded = merged(None, reading.since(HistogramReading(Histogram(()), None)) or {}, 18)
    vllm = cross_check("r", "m", {"server_latency": recorded}, _attempts([(120.0, None)] * 18))
    assert llama is not None and vllm is not None
    assert (
        "llama.cpp prompt processing (timings.prompt_ms: from a slot starting on the prompt; no queue)" in llama.line()
    )
    assert "vLLM's own TTFT (arrival at the server to first token, its queue included)" in vllm.line()
    assert "server-side TTFT" not in llama.line() + vllm.line()


def test_a_resumed_runs_vllm_figure_says_which_executions_it_covers():
    reading = histograms_in(VLLM_TEXT, "smollm2-135m")
    recorded = merged(None, reading.since(HistogramReading(Histogram(()), None)) or {}, 18)
    # Interrupted once (that execution recorded no histogram), then resumed to the end.
    environment = {"server_latency": recorded, "resumes": ["2026-01-05T10:05:00Z"]}
    check = cross_check("r", "m", environment, _attempts([(120.0, None)] * 25))
    assert check is not None and check.partial
    assert "18 requests, 1 of the run's 2 executions" in check.line()
    partial = [c for c in cross_check_caveats(check) if c.code == "ttft_cross_check_partial"]
    assert partial and "covers 1 of the run's 2 executions (18 requests)" in partial[0].text
    both = merged(recorded, reading.since(HistogramReading(Histogram(()), None)) or {}, 18)
    whole = cross_check("r", "m", {"server_latency": both, "resumes": ["t"]}, _attempts([(120.0, None)] * 36))
    assert whole is not None and not whole.partial and "executions" not in whole.line()


def test_vllm_histograms_on_the_run_give_a_bucketed_median_and_an_exact_mean():
    reading = histograms_in(VLLM_TEXT, "smollm2-135m")
    recorded = merged(None, reading.since(HistogramReading(Histogram(()), None)) or {}, 16)
    check = cross_check("r", "m", {"server_latency": recorded}, _attempts([(120.0, None)] * 16))
    assert check is not None and check.source == VLLM
    assert check.server_bucket_ms == (100.0, 250.0)
    assert check.server_mean_ms == pytest.approx(2051.2 / 18)
    assert check.other_requests == 2  # 18 counted, 16 answered to this run
    codes = [c.code for c in cross_check_caveats(check)]
    assert codes == ["ttft_cross_check_shared"]
    assert "p50 ≈ " in check.line() and "(in 100–250 ms)" in check.line()


def test_a_scrape_reads_the_servers_metrics_and_gives_none_where_there_are_none():
    from compare_tui.engine.server_latency import read_histograms, serves_vllm
    from tests.support.scripted_stacks import ScriptedServer

    with ScriptedServer({("GET", "/metrics"): (200, VLLM_TEXT.encode())}) as server:
        reading = read_histograms(server.url, "smollm2-135m", {"Authorization": "Bearer k"})
        assert reading is not None and reading.ttft is not None and reading.ttft.count == 18
        assert [(m, p) for m, p, _, _ in server.requests] == [("GET", "/metrics")]  # beside /v1, not under it
    with ScriptedServer({}) as server:  # no /metrics: the cross-check is absent, never guessed
        assert read_histograms(server.url, "m", {}) is None
    assert serves_vllm([{"fingerprint": {"stack": "vLLM"}}])
    assert not serves_vllm([{"fingerprint": {"stack": "llama.cpp llama-server"}}]) and not serves_vllm([])

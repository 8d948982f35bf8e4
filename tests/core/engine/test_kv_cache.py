"""vLLM's KV-cache use, recorded beside the GPU figure and labelled as what it is."""

from __future__ import annotations

import pytest

from compare_tui.engine.kv_cache import KvCacheSampler, kv_cache_usage
from compare_tui.report import build_report, render_json
from tests.core.report.test_report import inputs, one
from tests.support.metrics_server import MetricsServer


def page(usage: float, model: str = "smollm2") -> str:
    return (
        "# HELP vllm:kv_cache_usage_perc KV-cache usage. 1 means 100 percent usage.\n"
        "# TYPE vllm:kv_cache_usage_perc gauge\n"
        f'vllm:kv_cache_usage_perc{{engine="0",model_name="{model}"}} {usage}\n'
        f'vllm:kv_cache_usage_perc{{engine="0",model_name="other"}} 0.99\n'
    )


def test_the_gauge_is_read_for_the_served_model_only():
    assert kv_cache_usage(page(0.25), "smollm2") == 0.25
    assert kv_cache_usage('vllm:kv_cache_usage_perc{engine="0"} 0.5\n', "smollm2") == 0.5  # unlabelled: the only one
    assert kv_cache_usage('vllm:num_requests_running{model_name="smollm2"} 1\n', "smollm2") is None
    with pytest.raises(ValueError, match="metrics line 1"):
        kv_cache_usage("not metrics at all\n", "smollm2")


def test_the_sampler_keeps_the_first_and_fullest_reading():
    with MetricsServer([page(0.0), page(0.25), page(0.5), page(0.125)]) as server:
        sampler = KvCacheSampler(server.url, "smollm2", interval_s=0.01)
        sampler.start()
        while server.requests < 4:
            pass
        kv = sampler.stop()
    assert kv["source"] == "vLLM /metrics" and kv["metric"] == "vllm:kv_cache_usage_perc"
    assert (kv["baseline"], kv["peak"]) == (0.0, 0.5) and kv["samples"] >= 4


def test_a_server_without_the_gauge_leaves_the_figure_absent_with_the_reason():
    with MetricsServer(['vllm:num_requests_running{model_name="smollm2"} 0\n']) as server:
        sampler = KvCacheSampler(server.url, "smollm2", interval_s=0.01)
        sampler.start()
        kv = sampler.stop()
    assert kv["reason"] == "ValueError: no vllm:kv_cache_usage_perc on the server's /metrics" and "peak" not in kv


def test_the_report_states_the_kv_cache_as_what_it_is_not_as_device_memory():
    gpu = {
        "measured": False,
        "reason": "NVML library not found",
        "kv_cache": {"source": "vLLM /metrics", "baseline": 0.0, "peak": 0.375, "samples": 9},
    }
    report = build_report(inputs(one("pp", gpu=gpu)))
    assert report.models[0].gpu.kv_cache_peak == 0.375
    (caveat,) = [c for c in report.caveats if c.code == "kv_cache"]
    assert caveat.text == (
        "vLLM's KV cache for model-a was at most 37.5 % full during the run (vllm:kv_cache_usage_perc on its "
        "/metrics): the share of the cache vLLM reserved at start-up, not GPU memory."
    )
    assert '"kv_cache_peak": 0.375' in render_json(report)
    plain = build_report(inputs(one("pp")))
    assert plain.models[0].gpu.kv_cache_peak is None and not [c for c in plain.caveats if c.code == "kv_cache"]

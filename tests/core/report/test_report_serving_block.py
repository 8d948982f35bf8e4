"""The serving block on every surface and the stack caveat (issue 46, item 3): a llama.cpp
Q4_K_M run against a vLLM bf16 run of one model, as a real start stores their readings."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rich.console import Console

from compare_tui.publish.comparison_page import comparison_page
from compare_tui.publish.details import Masker
from compare_tui.report import build_report, load_report_inputs, render_json, render_md
from compare_tui.report.render_text import render_text
from compare_tui.report.serving import STACK_CAVEAT, serving_block, serving_summary, stack_confound
from compare_tui.store import RunRecord
from tests.support.stack_comparison import (
    COMPARISON,
    ENTRIES,
    ENVIRONMENT,
    LLAMA_FINGERPRINT,
    VLLM_FINGERPRINT,
    build_stack_store,
)


def _report(tmp_path):
    store, _ = build_stack_store(tmp_path)
    try:
        return build_report(load_report_inputs(store, COMPARISON))
    finally:
        store.close()


def test_markdown_of_a_llamacpp_vs_vllm_comparison_has_the_serving_block_and_the_stack_caveat(tmp_path):
    report = _report(tmp_path)
    md = render_md(report)
    serving = md[md.index("## Serving") : md.index("## Caveats")]
    assert "| | qwen-llamacpp | qwen-vllm |" in serving
    assert "| stack | llama.cpp llama-server b6871-3d9d1e3 | vLLM 0.32.0 |" in serving
    assert "| quantisation / dtype | Q4_K - Medium | bf16 (stated, not checked) |" in serving
    assert (
        "| chat template | compare-tui's shipped qwen2.5-coder-tools.jinja, sha256:6f1c0ab20000 "
        "| the folder's tokenizer_config.json (stated, not checked) |"
    ) in serving
    assert "| context | 4096 per slot (8192 in all) | 4096 (max model length) |" in serving
    assert "| slots | 2 | not reported (vLLM does not expose --max-num-seqs) |" in serving
    assert "| threads | 1 | not reported |" in serving
    assert "| tool-call parser | llama.cpp's own, from the template (jinja) | hermes (stated, not checked) |" in serving
    caveats = md[md.index("## Caveats") :]
    assert f"- {STACK_CAVEAT}: the rows compared were served differently" in caveats
    assert "stack: llama.cpp llama-server (qwen-llamacpp); vLLM (qwen-vllm)" in caveats
    assert "quantisation: Q4_K - Medium (qwen-llamacpp); bf16 (qwen-vllm)" in caveats
    assert "| hardware:" not in caveats  # both ran on this machine


def test_the_terminal_at_80_columns_json_and_the_published_page_carry_the_same_block(tmp_path):
    store, _ = build_stack_store(tmp_path)
    inputs = load_report_inputs(store, COMPARISON)
    report = build_report(inputs)
    console = Console(width=80, record=True)
    console.print(render_text(report))
    text = console.export_text()
    assert "Serving (what answered each model" in text
    assert "    tool-call parser: hermes (stated, not checked)" in text
    assert "    slots: not reported (vLLM does not expose --max-num-seqs)" in text
    assert STACK_CAVEAT in " ".join(text.split())
    document = json.loads(render_json(report))
    block = {f["label"]: f for f in document["models"][1]["serving"]["block"]}
    assert block["tool-call parser"] == {
        "label": "tool-call parser",
        "value": "hermes (stated, not checked)",
        "checked": False,
    }
    assert block["stack"]["checked"] is True
    assert "stack_confound" in {c["code"] for c in document["caveats"]}
    page = comparison_page(report, document, [r.run for r in inputs.runs], None, Masker(()))
    serving = page[page.index('<section id="serving"') :]
    assert "shipped qwen2.5-coder-tools.jinja" in serving
    assert "hermes (stated, not checked)" in serving and '<a href="#serving"' in page
    store.close()


def _run(fingerprint, entry, environment=ENVIRONMENT, model="m"):
    return RunRecord(
        id=f"r-{model}",
        goldset_id="w",
        model_name=model,
        model_entry=entry,
        environment=environment,
        serving=[{"fingerprint": fingerprint}],
    )


def test_one_stack_one_quantisation_one_machine_is_no_stack_caveat_and_another_machine_is():
    a = serving_summary(_run(LLAMA_FINGERPRINT, ENTRIES["qwen-llamacpp"], model="a"), "a")
    b = serving_summary(_run(LLAMA_FINGERPRINT, ENTRIES["qwen-llamacpp"], model="b"), "b")
    assert stack_confound([a, b]) is None
    remote = ENTRIES["qwen-llamacpp"] | {"endpoint": "http://gpu-box:8080/v1"}
    c = serving_summary(_run(LLAMA_FINGERPRINT, remote, model="c"), "c")
    caveat = stack_confound([a, c])
    assert (
        caveat is not None
        and "hardware: CPU AMD EPYC 7B13, 2 cores (this machine) (a); the server at gpu-box" in caveat.text
    )
    # A run that read nothing (stored before v11) has no block and is left out, not "not reported".
    assert serving_summary(_run({}, {}).model_copy(update={"serving": []}), "x").block is None


def test_a_template_other_than_the_one_local_up_recorded_is_not_called_compare_tuis():
    changed = LLAMA_FINGERPRINT | {"chat_template_sha256": "ab" * 32}
    block = serving_block("m", changed, ENTRIES["qwen-llamacpp"], ENVIRONMENT)
    assert not block.shipped_template
    assert dict(block.rows())["chat template"] == (
        "sha256:abababababab (the catalogue calls it tool calls for Qwen2.5-Coder (qwen2.5-coder-tools.jinja))"
    )
    vllm = serving_block("v", VLLM_FINGERPRINT, ENTRIES["qwen-vllm"], ENVIRONMENT, {"devices": [{"name": "NVIDIA L4"}]})
    assert dict(vllm.rows())["hardware"] == "1 × NVIDIA L4 (this machine)"


LEAF = st.none() | st.booleans() | st.integers() | st.text(max_size=4)
JSON = (
    LEAF
    | st.lists(LEAF, max_size=2)
    | st.dictionaries(st.sampled_from(["name", "x", "chat_template_file"]), LEAF, max_size=2)
)
KEYS = st.sampled_from(
    [
        "stack",
        "engine_version",
        "quantisation",
        "slots",
        "max_model_len",
        "serving",
        "extra",
        "endpoint",
        "kind",
        "chat_template_sha256",
        "devices",
        "cpu_model",
        "template_mode",
        "context_per_slot",
    ]
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.dictionaries(KEYS, JSON, max_size=6),
    st.dictionaries(KEYS, JSON, max_size=6),
    st.dictionaries(KEYS, JSON, max_size=4),
    st.dictionaries(KEYS, JSON, max_size=3),
)
def test_the_block_reads_any_stored_shape_without_raising(fingerprint, entry, environment, gpu):
    block = serving_block("m", fingerprint, entry, environment, gpu)
    assert [label for label, _ in block.rows()][0] == "stack" and all(isinstance(v, str) for _, v in block.rows())


def test_a_run_whose_template_dropped_its_tool_tasks_tools_says_so_in_its_block_and_a_caveat():
    from compare_tui.report.serving import serving_caveats

    how = "llama.cpp POST /apply-template: 61 characters with the tools, 61 without"
    environment = ENVIRONMENT | {"tools_reach": {"reached": False, "how": how}}
    summary = serving_summary(_run(LLAMA_FINGERPRINT, ENTRIES["qwen-llamacpp"], environment), "smol")
    assert (
        summary.block is not None
        and dict(summary.block.rows())["tools in the prompt"] == f"NO: its template drops them ({how})"
    )
    [caveat] = [c for c in serving_caveats(summary, "verified") if c.code == "tools_not_in_prompt"]
    assert "the model never saw them" in caveat.text and how in caveat.text
    reached = serving_summary(
        _run(LLAMA_FINGERPRINT, ENTRIES["qwen-llamacpp"], ENVIRONMENT | {"tools_reach": {"reached": True, "how": "x"}}),
        "q",
    )
    assert not [c for c in serving_caveats(reached, "verified") if c.code == "tools_not_in_prompt"]

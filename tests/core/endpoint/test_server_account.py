"""What a server says about itself, parsed once into typed values (`endpoint.account`), and a run
start that reads the server's `/v1/models` once for both its serving reading and its identity."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from compare_tui.catalogue import ModelEntry, ServingNotes
from compare_tui.catalogue.serving_check import catalogue_differences
from compare_tui.diff.reproduce import differences
from compare_tui.endpoint.account import (
    LlamaProps,
    ModelListing,
    StoredIdentity,
    TokenizedPrompt,
    latest_fingerprint,
    vllm_cache_config,
)
from compare_tui.endpoint.fingerprint import (
    AUTO_ACCEPTED,
    AUTO_REFUSED,
    auto_tool_choice_of,
    differences_text,
    tools_reach_prompt,
)
from compare_tui.endpoint.prometheus import parse_exposition
from compare_tui.engine.environment import capture_environment
from compare_tui.engine.serving import read_server
from compare_tui.store import RunRecord
from tests.support.scripted_stacks import TEMPLATE, ScriptedServer, llama_cpp_routes, vllm_routes

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)


@given(json_values)
def test_parsers_never_raise_and_return_a_value_or_none(body):
    for parsed in (LlamaProps.parse(body), ModelListing.parse(body)):
        assert parsed is None or parsed == parsed  # frozen values compare
    StoredIdentity.of({"server": body})


def test_llama_props_are_typed_once():
    props = LlamaProps.parse(
        {
            "default_generation_settings": {"n_ctx": 1024.0},
            "total_slots": 4,
            "chat_template": TEMPLATE,
            "build_info": " b6500 ",
            "chat_template_caps": "{'supports_tools': false, 'supports_parallel_tool_calls': True}",
        }
    )
    assert props is not None
    assert (props.context_per_slot, props.total_slots, props.context_total, props.build_info) == (
        1024,
        4,
        4096,
        "b6500",
    )
    assert props.caps == {"supports_parallel_tool_calls": True, "supports_tools": False}
    assert props.chat_template_sha256 and len(props.chat_template_sha256) == 64
    assert LlamaProps.parse({"models": []}) is None  # not llama.cpp's


def test_a_vllm_listing_is_told_from_another_stacks():
    listing = ModelListing.parse(vllm_routes("org/m", root="/srv/m")[("GET", "/v1/models")][1])
    assert listing is not None and listing.ids == ["org/m"]
    item = listing.find("org/m")
    assert item is not None and item.vllm and item.root == "/srv/m" and item.max_model_len == 32768
    llama = ModelListing.parse(llama_cpp_routes("tiny")[("GET", "/v1/models")][1])
    assert llama is not None and llama.owners == {"llamacpp"} and not llama.models[0].vllm


def _entry(endpoint: str, model: str) -> ModelEntry:
    return ModelEntry.model_validate(
        {
            "name": "m",
            "kind": "hosted",
            "endpoint": endpoint,
            "model": model,
            "revision": "r",
            "weights_digest": "sha256:" + "0" * 64,
            "cost": {
                "basis": "token_price",
                "usd_per_mtok_input": 1,
                "usd_per_mtok_output": 1,
                "captured": "2026-01-01",
                "source": "x",
            },
        }
    )


def test_a_vllm_run_start_reads_the_listing_once_for_the_reading_and_the_identity():
    with ScriptedServer(vllm_routes("org/m", root="/srv/m")) as server:
        read = read_server(_entry(server.url, "org/m"), {})
        listings = [r for r in server.requests if r[1] == "/v1/models"]
    assert len(listings) == 1
    assert read.identity is not None  # the runner asks nothing again
    stored = StoredIdentity.of(capture_environment(server_identity=read.identity))
    assert stored.model_ids == ("org/m",) and stored.props is None and stored.props_error is None
    assert read.reading["fingerprint"]["loaded_folder"] == "/srv/m"


def test_a_llama_cpp_identity_is_read_back_typed():
    with ScriptedServer(llama_cpp_routes("tiny")) as server:
        read = read_server(_entry(server.url, "tiny"), {})
    stored = StoredIdentity.of({"server": read.identity})
    assert stored.model_ids == ("tiny",)
    assert stored.prop("build_info") == "b6500-1a2b3c4d" and stored.prop("n_ctx") == 1024
    assert latest_fingerprint([read.reading])["slots"] == 4
    assert latest_fingerprint([]) == {}


CACHE_INFO = (
    'vllm:cache_config_info{_block_size_resolved="True",block_size="128",cache_dtype="auto",'
    'enable_prefix_caching="True",engine="0",gpu_memory_utilization="0.92",kv_cache_memory_bytes="1073741824",'
    'num_gpu_blocks="364",num_gpu_blocks_override="None",prefix_caching_hash_algo="sha256"} 1.0\n'
)


def test_vllm_configuration_is_read_from_what_0_32_answers():
    """The shapes vLLM 0.32 answers (seen on the provisioned CPU build): `/metrics`' cache info
    gauge, `/tokenize`'s ids, and the 400s to a `tool_choice: "auto"` request."""
    cache = vllm_cache_config(parse_exposition("# TYPE vllm:cache_config_info gauge\n" + CACHE_INFO))
    assert cache == (
        "block_size=128, cache_dtype=auto, enable_prefix_caching=True, prefix_caching_hash_algo=sha256, "
        "gpu_memory_utilization=0.92, kv_cache_memory_bytes=1073741824"
    )  # num_gpu_blocks is derived at each start from free memory: left out
    assert vllm_cache_config(parse_exposition("x 1\n")) is None
    refused = {
        "error": {"message": '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set'}
    }
    past = {"error": {"message": "max_tokens=2049 cannot be greater than max_model_len=2048."}}
    assert auto_tool_choice_of(400, refused) == AUTO_REFUSED and auto_tool_choice_of(400, past) == AUTO_ACCEPTED
    assert auto_tool_choice_of(404, None) is None
    a, b = TokenizedPrompt.parse({"count": 3, "tokens": [1, 2, 3]}), TokenizedPrompt.parse({"tokens": [1, 2]})
    assert a and b and tools_reach_prompt(a, b) == "yes" and tools_reach_prompt(b, b) == "no"
    assert TokenizedPrompt.parse({"tokens": [1, "x"]}) is None


def test_drift_in_vllm_template_and_auto_tool_choice_is_named_at_run_start_and_by_reproduce(tmp_path):
    served = {
        "stack": "vLLM",
        "rendered_prompt_sha256": "b" * 64,
        "auto_tool_choice": AUTO_REFUSED,
        "cache_config": "x",
    }
    stated = {"extra": {"rendered_prompt_sha256": "a" * 64, "auto_tool_choice": AUTO_ACCEPTED, "cache_config": "x"}}
    entry = _entry("http://127.0.0.1:9/v1", "m").model_copy(update={"serving": ServingNotes.model_validate(stated)})
    text = differences_text(catalogue_differences(entry, served))
    assert "rendered prompt (template with tools) sha256:aaaaaaaaaaaaaaaa… → sha256:bbbbbbbbbbbbbbbb…" in text
    assert f"auto tool choice {AUTO_ACCEPTED} → {AUTO_REFUSED}" in text and "KV cache" not in text
    one = RunRecord(
        id="a" * 8, goldset_id="w", model_name="m", serving=[{"fingerprint": {"auto_tool_choice": AUTO_ACCEPTED}}]
    )
    two = one.model_copy(update={"id": "b" * 8, "serving": [{"fingerprint": {"auto_tool_choice": AUTO_REFUSED}}]})
    assert "serving auto tool choice" in {d.what for d in differences(one, two)}

"""What a server says about itself, parsed once into typed values (`endpoint.account`), and a run
start that reads the server's `/v1/models` once for both its serving reading and its identity."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from compare_tui.catalogue import ModelEntry
from compare_tui.endpoint.account import LlamaProps, ModelListing, StoredIdentity, latest_fingerprint
from compare_tui.engine.environment import capture_environment
from compare_tui.engine.serving import read_server
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

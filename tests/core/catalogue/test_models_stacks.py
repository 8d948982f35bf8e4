"""`models add` against Ollama's and vLLM's documented shapes (scripted loopback server), hosted
entries and gateways; and the pure readers of each stack's self-description."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from compare_tui.catalogue import HOST_ATTESTED, VERIFIED, load_catalogue, verify_weights
from compare_tui.catalogue.adding import AddRequest, add_model
from compare_tui.catalogue.server_facts import from_llama_props, from_ollama, from_vllm
from tests.support.scripted_stacks import OLLAMA_DIGEST, ScriptedServer, ollama_routes, openai_models, vllm_routes


def test_ollama_digest_is_the_revision_and_its_named_blob_is_pinned(tmp_path):
    blob = tmp_path / "blobs" / f"sha256-{OLLAMA_DIGEST}"
    blob.parent.mkdir()
    blob.write_bytes(b"GGUF ollama blob")
    path = tmp_path / "models.toml"
    with ScriptedServer(ollama_routes("llama3.2:latest", blob=str(blob))) as server:
        outcome = add_model(AddRequest(name="llama3.2", endpoint=server.url, model="llama3.2", usd_per_hour=0.3), path)
        show = [r for r in server.requests if r[1] == "/api/show"]
    assert json.loads(show[0][3]) == {"model": "llama3.2"}
    entry = load_catalogue(path).get("llama3.2")
    assert entry.revision == f"ollama:sha256:{OLLAMA_DIGEST}"
    assert entry.serving.stack == "Ollama" and entry.serving.quantisation == "Q4_K_M"
    assert entry.serving.context_size == 131072
    assert entry.serving.extra["ollama_parameter_size"] == "3.2B"
    assert entry.weights_dir == blob.parent and list(entry.files) == [blob.name]
    assert any("named by the server" in f for f in outcome.findings)
    assert verify_weights(entry).label == VERIFIED


def test_vllm_max_model_len_and_root_folder(tmp_path):
    weights = tmp_path / "qwen"
    weights.mkdir()
    (weights / "model.safetensors").write_bytes(b"\x08\x00\x00\x00\x00\x00\x00\x00{}      ")
    path = tmp_path / "models.toml"
    with ScriptedServer(vllm_routes("qwen", root=str(weights))) as server:
        add_model(AddRequest(name="qwen", endpoint=server.url, revision="main", usd_per_hour=2.0), path)
        probed = {r[1] for r in server.requests}
    entry = load_catalogue(path).get("qwen")
    assert entry.serving.stack == "vLLM" and entry.serving.context_size == 32768
    assert entry.serving.extra["vllm_root"] == str(weights)
    assert entry.weights_dir == weights and "/props" not in probed  # vLLM is known from /v1/models
    assert verify_weights(entry).label == VERIFIED


def test_hosted_entry_through_a_gateway_is_host_attested_and_says_what_the_gateway_hides(tmp_path, monkeypatch):
    monkeypatch.setenv("GW_KEY", "vk-test-1234")
    path = tmp_path / "models.toml"
    routes = {("GET", "/v1/models"): (200, openai_models("gpt-x", owned_by="openai"))}
    with ScriptedServer(routes) as server:
        outcome = add_model(
            AddRequest(
                name="gpt-x",
                kind="hosted",
                endpoint=server.url,
                revision="2026-11-01",
                key_env="GW_KEY",
                price_in=0.15,
                price_out=0.6,
                price_date="2026-11-30",
                price_source="https://example.com/p",
                gateway="litellm",
            ),
            path,
        )
        auth = {r[2].get("Authorization") for r in server.requests}
    entry = load_catalogue(path).get("gpt-x")
    assert auth == {"Bearer vk-test-1234"}  # the virtual key was used for the probe
    assert entry.gateway == "litellm" and entry.files == {} and entry.weights_dir is None
    assert entry.serving.extra["provenance"] == HOST_ATTESTED
    assert entry.cost.basis == "token_price" and entry.cost.captured == "2026-11-30"
    assert any("through the litellm gateway" in f and "timings" in f for f in outcome.findings)
    assert verify_weights(entry).label == HOST_ATTESTED
    assert "vk-test-1234" not in path.read_text()


def test_readers_recognise_only_their_own_shape():
    assert from_llama_props({"models": []}) is None
    assert from_vllm({"id": "x", "owned_by": "openai"}) is None
    assert from_ollama({"data": []}, None, "x") is None
    facts = from_llama_props({"build_info": "b1", "n_ctx": 2048})
    assert facts.serving == {"build": "b1", "context_size": 2048}


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)


@given(json_values, json_values)
def test_readers_never_raise_on_any_json(a, b):
    for facts in (from_llama_props(a), from_vllm(a), from_ollama(a, b, "m")):
        assert facts is None or isinstance(facts.serving, dict)


@given(
    st.dictionaries(
        st.sampled_from(
            ["build_info", "total_slots", "n_ctx", "chat_template", "default_generation_settings", "model_path"]
        ),
        json_values,
    )
)
def test_llama_props_reader_keeps_only_well_typed_values(props):
    facts = from_llama_props(props)
    if facts is not None:
        assert all(isinstance(v, (str, int)) for v in facts.serving.values())
        if "context_size" in facts.serving:
            assert facts.serving["context_size"] > 0

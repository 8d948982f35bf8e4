"""What a vLLM server loaded by repository id, checked through the Hugging Face cache on this
machine (`catalogue.hf_cache`), and the files beside the weights that shape answers pinned with
them. The cache is laid out as `huggingface_hub` lays it out: blobs, snapshot links, refs."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from compare_tui.catalogue import ModelEntry, ModelRefused, load_catalogue, verify_weights
from compare_tui.catalogue.adding import AddRequest, add_model
from compare_tui.catalogue.errors import CatalogueEditError
from compare_tui.catalogue.hf_cache import CachedSnapshot, NotResolved, resolve_repo
from compare_tui.catalogue.pinning import pin_weights, weight_files
from compare_tui.catalogue.serving_check import check_loaded
from compare_tui.engine.serving import loaded_label
from compare_tui.vocabulary import Provenance
from tests.core.experiment.test_experiment_helpers import cli
from tests.support.scripted_stacks import ScriptedServer, vllm_routes

REPO = "HuggingFaceTB/SmolLM2-135M-Instruct"
COMMIT = "a" * 40


def lay_out_cache(cache: Path, repo: str, files: dict[str, bytes], commit: str = COMMIT) -> Path:
    """`models--ORG--NAME/{blobs,snapshots/COMMIT,refs/main}` as the hub library writes it:
    each snapshot file a relative link to its blob (named by its sha256)."""
    repo_dir = cache / ("models--" + repo.replace("/", "--"))
    snapshot = repo_dir / "snapshots" / commit
    (repo_dir / "blobs").mkdir(parents=True, exist_ok=True)
    snapshot.mkdir(parents=True, exist_ok=True)
    for name, data in files.items():
        blob = repo_dir / "blobs" / hashlib.sha256(data).hexdigest()
        blob.write_bytes(data)
        os.symlink(os.path.relpath(blob, snapshot), snapshot / name)
    (repo_dir / "refs").mkdir(exist_ok=True)
    (repo_dir / "refs" / "main").write_text(commit)
    return snapshot


SMOL = {
    "model.safetensors": b"\x08\x00\x00\x00\x00\x00\x00\x00{}      smol",
    "tokenizer_config.json": b'{"chat_template": "{{ messages }}"}',
    "config.json": b"{}",
}


def _entry(folder: Path, endpoint: str = "http://127.0.0.1:9/v1") -> ModelEntry:
    root, files = weight_files(folder, [])
    pins = pin_weights(root, files)
    return ModelEntry.model_validate(
        {
            "name": "m",
            "kind": "local",
            "endpoint": endpoint,
            "model": "m",
            "revision": "r",
            "weights_dir": str(root),
            "files": pins.files,
            "weights_digest": pins.digest,
            "cost": {"basis": "hardware", "usd_per_hour": 0.1},
        }
    )


def test_a_repository_id_resolves_through_refs_main_to_its_snapshot(tmp_path):
    cache = tmp_path / "hub"
    snapshot = lay_out_cache(cache, REPO, SMOL)
    resolved = resolve_repo(REPO, cache)
    assert isinstance(resolved, CachedSnapshot) and resolved.folder == snapshot and resolved.commit == COMMIT
    assert isinstance(resolve_repo("Qwen/Qwen2.5", cache), NotResolved)
    assert "not in the Hugging Face cache" in resolve_repo("Qwen/Qwen2.5", cache).why  # type: ignore[union-attr]
    (cache / f"models--{REPO.replace('/', '--')}" / "refs" / "main").write_text("b" * 40)
    assert "whose snapshot is not in" in resolve_repo(REPO, cache).why  # type: ignore[union-attr]


def test_the_served_repository_is_checked_against_the_pins_through_the_cache(tmp_path):
    cache = tmp_path / "hub"
    snapshot = lay_out_cache(cache, REPO, SMOL)
    fingerprint = {"stack": "vLLM", "loaded_folder": REPO}
    pinned_there = _entry(snapshot)
    assert check_loaded(pinned_there, fingerprint, hf_cache=cache).status == "matched"
    other = tmp_path / "qwen"
    other.mkdir()
    (other / "model.safetensors").write_bytes(b"qwen weights, another model")
    refused = check_loaded(_entry(other), fingerprint, hf_cache=cache)
    assert refused.status == "mismatch" and str(snapshot) in refused.text and "qwen" in refused.text
    unresolved = check_loaded(pinned_there, fingerprint, hf_cache=tmp_path / "empty")
    assert unresolved.status == "unchecked" and "could not be found on this machine" in unresolved.text
    assert unresolved.label(Provenance.VERIFIED) == Provenance.NOT_IN_HF_CACHE
    assert loaded_label(Provenance.VERIFIED, {"loaded": unresolved.as_dict()}) == Provenance.NOT_IN_HF_CACHE
    assert loaded_label(Provenance.VERIFIED, {"loaded": {"status": "matched", "text": ""}}) == Provenance.VERIFIED


def test_models_add_pins_a_repository_from_the_cache_and_refuses_another_folder_before_hashing(tmp_path, monkeypatch):
    cache = tmp_path / "hub"
    snapshot = lay_out_cache(cache, REPO, SMOL)
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    qwen = tmp_path / "qwen"
    qwen.mkdir()
    (qwen / "model.safetensors").write_bytes(b"qwen weights, another model, bigger")
    path = tmp_path / "models.toml"
    hashed: list[str] = []
    with ScriptedServer(vllm_routes(REPO)) as server:
        outcome = add_model(AddRequest(name="smol", endpoint=server.url, usd_per_hour=0.1), path)
        with pytest.raises(CatalogueEditError, match="nothing was hashed") as refused:
            add_model(
                AddRequest(name="hf-wrong", endpoint=server.url, weights_dir=qwen, revision="y", usd_per_hour=0.1),
                path,
                progress=lambda name, done, total: hashed.append(name),
            )
    entry = load_catalogue(path).get("smol")
    assert entry.weights_dir == snapshot and entry.revision == COMMIT
    assert set(entry.files) == {"model.safetensors", "tokenizer_config.json"}  # config.json is not pinned
    assert any("found in the Hugging Face cache" in f for f in outcome.findings)
    assert str(snapshot) in str(refused.value) and hashed == []
    assert "hf-wrong" not in load_catalogue(path)


def test_an_edited_tokenizer_config_is_refused_and_named(tmp_path):
    folder = tmp_path / "m"
    folder.mkdir()
    for name, data in SMOL.items():
        (folder / name).write_bytes(data)
    entry = _entry(folder)
    assert verify_weights(entry).label == Provenance.VERIFIED
    (folder / "tokenizer_config.json").write_bytes(b'{"chat_template": "{{ other }}"}')
    with pytest.raises(ModelRefused) as refused:
        verify_weights(entry)
    assert "changed: tokenizer_config.json (the tokenizer configuration" in str(refused.value)
    (folder / "chat_template.jinja").write_text("{{ messages }}")
    with pytest.raises(ModelRefused, match=r"extra: chat_template.jinja \(the chat template\) is a file that shapes"):
        verify_weights(entry)


def test_list_and_verify_say_when_the_server_not_the_weights_changed(tmp_path, monkeypatch):
    """Intact pins behind a server that loads another repository: `models list` is not `ready`,
    and `models verify` says the server changed, not "verified … restore the weights"."""
    cache = tmp_path / "hub"
    snapshot = lay_out_cache(cache, REPO, SMOL)
    lay_out_cache(cache, "Qwen/Qwen2.5-Coder-0.5B-Instruct", {"model.safetensors": b"qwen, another model"})
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    path = tmp_path / "models.toml"
    with ScriptedServer(vllm_routes(REPO)) as server:
        add_model(AddRequest(name="smol", endpoint=server.url, usd_per_hour=0.1), path)
        assert "ready" in cli("models", "list", "--models", str(path)).out
    with ScriptedServer(vllm_routes(REPO, root="Qwen/Qwen2.5-Coder-0.5B-Instruct")) as server:
        text = path.read_text().replace(load_catalogue(path).get("smol").endpoint, server.url)
        path.write_text(text)
        listed = cli("models", "list", "--models", str(path))
        verified = cli("models", "verify", "smol", "--models", str(path))
    assert "refused" in listed.out and "Qwen" in " ".join(listed.out.split())
    assert verified.code == 1
    assert "smol: SERVER LOADS OTHER WEIGHTS (the pinned files are intact" in verified.out
    assert "restore the weights" not in verified.err and "a server that loads other weights" in verified.err
    assert str(snapshot) in verified.out

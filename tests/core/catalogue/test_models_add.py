"""`models add`: probing, pinning and writing, and every bad input refused with nothing written."""

from __future__ import annotations

import hashlib
import json
import os
import re
import struct
from pathlib import Path

import pytest

from compare_tui.catalogue import VERIFIED, CatalogueError, combined_digest, load_catalogue, verify_weights
from compare_tui.catalogue import verify as verify_module
from compare_tui.catalogue.adding import AddRequest, add_model
from compare_tui.catalogue.server_facts import READ_FROM_SERVER
from compare_tui.cli import main
from tests.support.builders import models_add_argv
from tests.support.scripted_stacks import ScriptedServer, llama_cpp_routes, openai_models

EXISTING = """\
# Team catalogue: keep the comments
[[model]]
name = "hosted-one"  # the production model
kind = "hosted"
endpoint = "https://api.example.com/v1"
model = "prod-1"
revision = "2026-01-01"
weights_digest = "sha256:%s"
[model.cost]
basis = "token_price"
usd_per_mtok_input = 1.0
usd_per_mtok_output = 2.0
captured = "2026-11-30"
source = "https://example.com/pricing"
""" % ("0" * 64)


def sha(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


@pytest.fixture
def weights(tmp_path: Path) -> Path:
    folder = tmp_path / "weights"
    (folder / "sub").mkdir(parents=True)
    (folder / "tiny.gguf").write_bytes(b"GGUF" + bytes(range(256)) * 50)
    (folder / "sub" / "part.safetensors").write_bytes(b"st" * 1000)
    (folder / "README.md").write_text("not weights")
    return folder


@pytest.fixture
def llama():
    with ScriptedServer(llama_cpp_routes("tiny")) as server:
        yield server


def request(server, weights_dir: Path | None = None, **overrides) -> AddRequest:
    fields = {"name": "tiny", "endpoint": server.url, "weights_dir": weights_dir, "usd_per_hour": 0.5}
    fields.update(overrides)
    return AddRequest(**fields)


def test_add_pins_every_weights_file_and_records_what_the_server_said(tmp_path, weights, llama):
    path = tmp_path / "models.toml"
    outcome = add_model(request(llama, weights, revision="v1"), path)
    entry = load_catalogue(path).get("tiny")
    assert entry == outcome.entry
    assert entry.files == {
        "tiny.gguf": sha((weights / "tiny.gguf").read_bytes()),
        "sub/part.safetensors": sha(b"st" * 1000),
    }
    assert entry.weights_digest == combined_digest(entry.files)
    assert entry.weights_dir == weights
    assert entry.serving.stack == "llama.cpp llama-server"
    assert entry.serving.build == "b6500-1a2b3c4d"
    assert entry.serving.context_size == 1024
    assert entry.serving.extra["parallel_slots"] == "4"
    assert entry.serving.chat_template.startswith("served by the server, sha256:")
    assert READ_FROM_SERVER in entry.serving.notes and "GET /props" in entry.serving.notes
    assert entry.cost.basis == "hardware" and entry.cost.usd_per_hour == 0.5
    # The same code a run uses accepts it.
    assert verify_weights(entry).label == VERIFIED


def test_model_id_defaults_to_the_one_served_and_a_note_is_recorded_as_stated(tmp_path, weights, llama):
    path = tmp_path / "models.toml"
    add_model(request(llama, weights, name="mine", revision="v1", notes=("tool_parser=hermes", "gpu=none")), path)
    entry = load_catalogue(path).get("mine")
    assert entry.model == "tiny"
    assert entry.serving.tool_parser == "hermes" and entry.serving.extra["gpu"] == "none"


def test_revision_is_read_from_a_hugging_face_cache_snapshot(tmp_path, llama):
    commit = "0123456789abcdef0123456789abcdef01234567"
    repo = tmp_path / "hub" / "models--HuggingFaceTB--SmolLM2-135M"
    snapshot = repo / "snapshots" / commit
    snapshot.mkdir(parents=True)
    (repo / "blobs").mkdir()
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(commit)
    for index in range(2):
        tensor = json.dumps({"w": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}}).encode()
        blob = struct.pack("<Q", len(tensor)) + tensor + struct.pack("<4f", index, 1, 2, 3)
        (repo / "blobs" / hashlib.sha256(blob).hexdigest()).write_bytes(blob)
        # The HF cache layout: snapshot files are relative symlinks into blobs/.
        os.symlink(
            f"../../blobs/{hashlib.sha256(blob).hexdigest()}", snapshot / f"model-0000{index + 1}-of-00002.safetensors"
        )
    path = tmp_path / "models.toml"
    outcome = add_model(request(llama, snapshot), path)
    entry = load_catalogue(path).get("tiny")
    assert entry.revision == commit
    assert entry.serving.extra["hf_repo"] == "HuggingFaceTB/SmolLM2-135M"
    assert entry.serving.extra["hf_refs"] == "main"
    assert sorted(entry.files) == ["model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"]
    assert any("Hugging Face cache" in f for f in outcome.findings)
    assert verify_weights(entry).label == VERIFIED


def test_weights_files_given_one_by_one(tmp_path, llama):
    folder = tmp_path / "w"
    folder.mkdir()
    (folder / "a.gguf").write_bytes(b"a")
    path = tmp_path / "models.toml"
    add_model(request(llama, None, weights=(folder / "a.gguf",), revision="r"), path)
    entry = load_catalogue(path).get("tiny")
    assert entry.weights_dir == folder and entry.files == {"a.gguf": sha(b"a")}


def test_cli_add_then_duplicate_is_refused_and_replace_works(tmp_path, weights, llama, capsys):
    path = tmp_path / "models.toml"
    path.write_text(EXISTING)
    argv = models_add_argv(llama.url, weights, "--models", str(path))
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "added tiny" in out and "2 file(s) pinned" in out
    after_add = path.read_text()
    assert after_add.startswith(EXISTING)  # the user's entry and comments untouched
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "already in" in err and "--replace" in err and len(err.strip().splitlines()) == 1
    assert path.read_text() == after_add
    assert main(argv[:-2] + ["--revision", "v2", "--replace", "--models", str(path)]) == 0
    assert load_catalogue(path).get("tiny").revision == "v2"
    assert path.read_text().startswith(EXISTING)


# ---------------------------------------------------------------- bad input: one line, nothing written


def refused(capsys, path: Path, argv: list[str], *needles: str) -> str:
    before = path.read_bytes() if path.exists() else None
    assert main(argv + ["--models", str(path)]) == 2
    # Progress lines may precede it; the refusal itself is one line.
    lines = [line for line in capsys.readouterr().err.splitlines() if line.startswith("compare-tui:")]
    assert len(lines) == 1, lines
    err = lines[0]
    assert "nothing was written" in err or "left unchanged" in err, err
    for needle in needles:
        assert needle in err, err
    assert (path.read_bytes() if path.exists() else None) == before
    return err


def test_unreachable_endpoint(tmp_path, weights, capsys):
    with ScriptedServer({}) as server:
        url = server.url
    refused(capsys, tmp_path / "models.toml", models_add_argv(url, weights), "cannot reach", "is the server running")


def test_endpoint_that_is_not_openai_compatible(tmp_path, weights, capsys):
    with ScriptedServer({("GET", "/v1/models"): (200, {"hello": "world"})}) as server:
        refused(capsys, tmp_path / "models.toml", models_add_argv(server.url, weights), "not an OpenAI-compatible API")
    with ScriptedServer({}) as server:
        refused(capsys, tmp_path / "models.toml", models_add_argv(server.url, weights), "HTTP 404")


def test_model_the_server_does_not_serve_offers_the_ids_it_lists(tmp_path, weights, capsys):
    routes = {("GET", "/v1/models"): (200, openai_models("alpha", "beta"))}
    with ScriptedServer(routes) as server:
        refused(
            capsys,
            tmp_path / "models.toml",
            models_add_argv(server.url, weights) + ["--model", "gamma"],
            "does not serve model 'gamma'",
            "alpha, beta",
        )


def test_folder_with_no_weights_files(tmp_path, llama, capsys):
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "config.json").write_text("{}")
    refused(capsys, tmp_path / "models.toml", models_add_argv(llama.url, empty), "no weights files in")


def test_missing_folder(tmp_path, llama, capsys):
    refused(capsys, tmp_path / "models.toml", models_add_argv(llama.url, tmp_path / "nope"), "vanished")


def test_symlink_loop(tmp_path, weights, llama, capsys):
    os.symlink(weights / "loop-b.gguf", weights / "loop-a.gguf")
    os.symlink(weights / "loop-a.gguf", weights / "loop-b.gguf")
    refused(capsys, tmp_path / "models.toml", models_add_argv(llama.url, weights), "symlink loop", "loop-a.gguf")


def test_a_weights_folder_or_file_that_is_itself_a_symlink_loop(tmp_path, llama, capsys):
    os.symlink(tmp_path / "loop-y", tmp_path / "loop-x")
    os.symlink(tmp_path / "loop-x", tmp_path / "loop-y")
    refused(capsys, tmp_path / "models.toml", models_add_argv(llama.url, tmp_path / "loop-x"), "symlink loop", "loop-x")
    argv = models_add_argv(llama.url, tmp_path / "loop-y", weights_flag="--weights")
    refused(capsys, tmp_path / "models.toml", argv, "symlink loop", "loop-y")
    assert not llama.requests  # refused before the endpoint was asked anything


def test_a_file_that_vanishes_mid_hash(tmp_path, weights, llama, monkeypatch, capsys):
    real = verify_module.hash_file

    def vanishing(path, **kwargs):
        if Path(path).name == "tiny.gguf":
            Path(path).unlink()  # gone after it was found, before it was read
        return real(path, **kwargs)

    monkeypatch.setattr(verify_module, "hash_file", vanishing)
    refused(capsys, tmp_path / "models.toml", models_add_argv(llama.url, weights), "tiny.gguf", "vanished")


def test_an_unreadable_file(tmp_path, weights, llama, monkeypatch, capsys):
    real = verify_module.hash_file

    def denied(path, **kwargs):
        if Path(path).name == "part.safetensors":
            raise PermissionError(13, "Permission denied", str(path))
        return real(path, **kwargs)

    monkeypatch.setattr(verify_module, "hash_file", denied)
    refused(
        capsys,
        tmp_path / "models.toml",
        models_add_argv(llama.url, weights),
        "sub/part.safetensors",
        "cannot be read (Permission denied)",
    )


def test_duplicate_name(tmp_path, weights, llama, capsys):
    path = tmp_path / "models.toml"
    path.write_text(EXISTING)
    refused(
        capsys,
        path,
        models_add_argv(llama.url, weights)[:2] + ["hosted-one"] + models_add_argv(llama.url, weights)[3:],
        "'hosted-one' is already in",
        "--replace",
    )


def test_duplicate_name_is_refused_before_probing_or_hashing(tmp_path, weights, llama, monkeypatch, capsys):
    path = tmp_path / "models.toml"
    path.write_text(EXISTING)
    hashed: list[Path] = []

    def record_hash(path, **kwargs):
        hashed.append(Path(path))
        return "sha256:" + "0" * 64

    monkeypatch.setattr(verify_module, "hash_file", record_hash)
    argv = models_add_argv(llama.url, weights)
    refused(capsys, path, argv[:2] + ["hosted-one"] + argv[3:], "'hosted-one' is already in", "--replace")
    assert hashed == [] and not llama.requests  # a duplicate costs neither a hash nor a request


def test_hosted_without_price_or_date(tmp_path, capsys):
    routes = {("GET", "/v1/models"): (200, openai_models("gpt-x", owned_by="openai"))}
    with ScriptedServer(routes) as server:
        hosted = ["models", "add", "gpt-x", "--kind", "hosted", "--endpoint", server.url, "--revision", "r"]
        refused(capsys, tmp_path / "models.toml", hosted, "needs its token price", "--price-date")
        refused(
            capsys,
            tmp_path / "models.toml",
            hosted + ["--price-in", "1", "--price-out", "2", "--price-source", "https://x"],
            "--price-date",
        )
        refused(
            capsys,
            tmp_path / "models.toml",
            hosted
            + ["--price-in", "1", "--price-out", "2", "--price-source", "https://x", "--price-date", "30/11/2026"],
            "YYYY-MM-DD",
        )


def test_provider_key_in_the_key_env_variable(tmp_path, weights, llama, monkeypatch, capsys):
    key = "sk-proj-" + "a" * 40
    monkeypatch.setenv("MY_KEY", key)
    err = refused(
        capsys,
        tmp_path / "models.toml",
        models_add_argv(llama.url, weights) + ["--key-env", "MY_KEY"],
        "provider API key",
    )
    assert key not in err
    assert not llama.requests  # refused before anything was sent


def test_a_provider_key_typed_as_key_env_is_not_echoed(tmp_path, weights, llama, capsys):
    key = "sk-proj-" + "b" * 40
    err = refused(
        capsys, tmp_path / "models.toml", models_add_argv(llama.url, weights) + ["--key-env", key], "provider API key"
    )
    assert key not in err


def test_malformed_existing_catalogue_is_never_overwritten(tmp_path, weights, llama, capsys):
    path = tmp_path / "models.toml"
    path.write_text("# mine\n[[model]\nname = 'x'\n")
    refused(capsys, path, models_add_argv(llama.url, weights), "not valid TOML")
    path.write_text(EXISTING.replace('kind = "hosted"', 'kind = "remote"'))
    refused(capsys, path, models_add_argv(llama.url, weights), "kind")


def test_no_cost_basis_and_mixed_bases(tmp_path, weights, llama, capsys):
    argv = models_add_argv(llama.url, weights)
    without = argv[: argv.index("--usd-per-hour")]
    refused(capsys, tmp_path / "models.toml", without, "no cost basis")
    refused(capsys, tmp_path / "models.toml", argv + ["--price-in", "1"], "one cost basis")


def test_revision_required_when_nothing_states_one(tmp_path, weights, llama, capsys):
    argv = models_add_argv(llama.url, weights)
    i = argv.index("--revision")
    refused(capsys, tmp_path / "models.toml", argv[:i] + argv[i + 2 :], "--revision REV")


def test_weights_that_leave_files_of_their_folder_unpinned(tmp_path, weights, llama, capsys):
    argv = models_add_argv(llama.url, weights / "tiny.gguf", weights_flag="--weights")
    refused(capsys, tmp_path / "models.toml", argv, "sub/part.safetensors", "unpinned")


def test_add_model_raises_a_catalogue_error(tmp_path, weights, llama):
    with pytest.raises(CatalogueError):
        add_model(request(llama, weights), tmp_path / "models.toml")  # no revision
    assert not (tmp_path / "models.toml").exists()


def test_verify_into_one_pipe_never_runs_a_progress_line_on_from_another_line(tmp_path, weights, llama):
    """stdout and stderr into one file (`2>&1 | …`): each "hashed …" line starts a line of its
    own (it ran on from the end of a line, `…/smollm2-135mhashed model.safetensors (256.6 MiB)`,
    when stdout's buffer was flushed between a line and its newline)."""
    import subprocess
    import sys

    files = {"tiny.gguf": sha((weights / "tiny.gguf").read_bytes())}
    pins = "\n".join(f'"{name}" = "{digest}"' for name, digest in files.items())
    entries = [
        f'[[model]]\nname = "m{i:02d}"\nkind = "local"\nendpoint = "{llama.url}"\nmodel = "tiny"\n'
        f'revision = "r1"\nweights_digest = "{combined_digest(files)}"\nweights_dir = "{weights}"\n'
        f'[model.files]\n{pins}\n[model.cost]\nbasis = "hardware"\nusd_per_hour = 0.5\n'
        for i in range(40)  # a few pages of output: stdout's buffer fills more than once
    ]
    (weights / "sub" / "part.safetensors").unlink()
    catalogue = tmp_path / "models.toml"
    catalogue.write_text("\n".join(entries))
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}  # as a user's shell has it
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[3])
    done = subprocess.run(
        [sys.executable, "-m", "compare_tui", "models", "verify", "--all", "--models", str(catalogue)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
        timeout=120,
    )
    lines = done.stdout.splitlines()
    assert done.returncode == 0, done.stdout[-2000:]
    assert sum(line.startswith("hashed tiny.gguf") for line in lines) == 40
    # The scripted server names a file that is not on this machine: each entry's verdict line is
    # "mNN: weights not checked: …" (its pins hashed, the server's file not compared).
    assert sum(re.match(r"m\d\d: ", line) is not None for line in lines) == 40
    assert not [line for line in lines if "hashed tiny.gguf" in line and not line.startswith("hashed ")]
    # Each model's lines follow its own progress line, before the next model's.
    progress = [n for n, line in enumerate(lines) if line.startswith("hashed ")]
    verdicts = [n for n, line in enumerate(lines) if re.match(r"m\d\d: ", line)]
    assert all(a < b < c for a, b, c in zip(progress, verdicts, progress[1:], strict=False))

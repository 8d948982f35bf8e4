"""What a real vLLM loaded, checked, and its configuration's drift caught (vLLM 0.32, CPU build).

vLLM is started the way its users start it, `--model ORG/NAME`: a repository id, its files in the
Hugging Face cache. The test lays that cache out as `huggingface_hub` does (blobs, snapshot links,
`refs/main`) from the provisioned SmolLM2 folder, and points vLLM's `HF_HOME` at it. Then:
- the repository id is resolved through the cache and the run is verified;
- an entry pinned to Qwen in front of that server is refused at `models add` (before hashing)
  and at `run`;
- with compare-tui's cache elsewhere, the run is labelled "weights not checked: …", never verified;
- a restart with another `--chat-template` and without auto tool choice is named as drift at the
  run's start, refused with `--strict-serving`, and named by `reproduce`;
- an edited `tokenizer_config.json` in the snapshot is refused and named.

One of its servers at a time, two starts in all (its own; the package's serving one is stopped first).
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from compare_tui.catalogue import Catalogue, load_catalogue, write_catalogue
from compare_tui.catalogue.pinning import pin_weights, weight_files
from compare_tui.catalogue.verify import hash_file
from compare_tui.endpoint.fingerprint import AUTO_ACCEPTED, AUTO_REFUSED
from compare_tui.store import Store
from compare_tui.vocabulary import Provenance
from tests.core.experiment.test_experiment_helpers import cli
from tests.integration.vllm_stack.conftest import VllmServers
from tests.support.builders import write_set
from tests.support.vllm_server import QWEN, SMOLLM, TOOL_PARSER, VllmServer, vllm_models

pytestmark = pytest.mark.integration

REPO = "HuggingFaceTB/SmolLM2-135M-Instruct"
COMMIT = "12fd25f77366fa6b3b4b768ec3050bf629380bac"
OTHER_TEMPLATE = (
    "{% if tools %}<|im_start|>system\nTools: {{ tools | tojson }}<|im_end|>\n{% endif %}"
    "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
"""Another chat template than SmolLM2's own, which also shows the tools."""


def lay_out_hf_cache(home: Path, folder: Path) -> Path:
    """`home/hub/models--ORG--NAME` as `huggingface_hub` writes it, holding `folder`'s files:
    each a blob named by its sha256, linked from `snapshots/COMMIT/`, and `refs/main`. The weights
    blob is a hard link where the file system allows (never written to); the others are copies,
    since a test edits one."""
    repo_dir = home / "hub" / ("models--" + REPO.replace("/", "--"))
    snapshot = repo_dir / "snapshots" / COMMIT
    (repo_dir / "blobs").mkdir(parents=True)
    snapshot.mkdir(parents=True)
    for path in sorted(folder.iterdir()):
        blob = repo_dir / "blobs" / hash_file(path).removeprefix("sha256:")
        if path.suffix == ".safetensors":
            try:
                os.link(path, blob)
            except OSError:
                shutil.copyfile(path, blob)
        else:
            shutil.copyfile(path, blob)
        os.symlink(os.path.relpath(blob, snapshot), snapshot / path.name)
    (repo_dir / "refs").mkdir()
    (repo_dir / "refs" / "main").write_text(COMMIT)
    return snapshot


@pytest.fixture(scope="module")
def world(vllm_servers: VllmServers, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict]:
    vllm_servers.stop()  # one serving vLLM at a time on this machine (the next module's may be warming)
    root = tmp_path_factory.mktemp("provenance")
    hf_home = root / "hf-home"
    snapshot = lay_out_hf_cache(hf_home, vllm_models() / SMOLLM)

    def serve(name: str, extra_args: tuple[str, ...]) -> VllmServer:
        """The module's vLLM (one at a time), serving `REPO` from the test's cache."""
        return vllm_servers.get(SMOLLM, extra_args, name=name, repo=REPO, hf_home=hf_home)

    first = serve("with-tools", TOOL_PARSER)
    goldset = write_set(root / "set", {"two-plus-two": "4"}, max_tokens=4)
    try:
        yield {
            "root": root,
            "hf_home": hf_home,
            "snapshot": snapshot,
            "serve": serve,
            "server": first,
            "catalogue": root / "models.toml",
            "store": root / "runs.sqlite",
            "set": goldset,
            "runs": {},
        }
    finally:
        vllm_servers.stop()


@pytest.fixture
def hf_env(world: dict, monkeypatch: pytest.MonkeyPatch) -> None:
    """compare-tui finds the server's cache (as on the GPU box that serves it)."""
    monkeypatch.delenv("HF_HUB_CACHE", raising=False)
    monkeypatch.delenv("HUGGINGFACE_HUB_CACHE", raising=False)
    monkeypatch.setenv("HF_HOME", str(world["hf_home"]))


def _run(world: dict, model: str, *extra: str):
    return cli(
        "run",
        str(world["set"]),
        "--model",
        model,
        "--models",
        str(world["catalogue"]),
        "--store",
        str(world["store"]),
        "--json",
        *extra,
    )


def _point_at(world: dict, server: VllmServer) -> None:
    """The catalogue's entries now reach `server` (a restart takes a new port)."""
    text = world["catalogue"].read_text()
    for entry in load_catalogue(world["catalogue"]).models:
        text = text.replace(entry.endpoint, server.url)
    world["catalogue"].write_text(text)


def test_a_repo_id_server_is_resolved_through_the_hf_cache_and_verified(world, hf_env):
    server: VllmServer = world["server"]
    added = cli(
        "models",
        "add",
        "smol-hf",
        "--endpoint",
        server.url,
        "--usd-per-hour",
        "0.1",
        "--models",
        str(world["catalogue"]),
    )
    assert added.code == 0, added.err
    assert "found in the Hugging Face cache: refs/main" in " ".join(added.out.split())
    entry = load_catalogue(world["catalogue"]).get("smol-hf")
    assert entry.weights_dir == world["snapshot"] and entry.revision == COMMIT
    assert {"model.safetensors", "tokenizer_config.json", "chat_template.jinja"} <= set(entry.files)
    extra = entry.serving.extra
    assert extra["vllm_root"] == REPO and extra["auto_tool_choice"] == AUTO_ACCEPTED
    assert extra["tools_in_prompt"] == "no"  # SmolLM2's own template drops the tools
    assert "enable_prefix_caching=True" in extra["cache_config"] and len(extra["rendered_prompt_sha256"]) == 64
    out = _run(world, "smol-hf")
    assert out.code in (0, 1), out.err
    [run] = json.loads(out.out)["runs"]
    assert run["provenance"] == Provenance.VERIFIED, out.err
    with Store.open(world["store"]) as store:
        stored = store.get_run(run["id"])
    assert stored.serving[-1]["loaded"]["status"] == "matched"
    assert f"{REPO}, refs/main → {COMMIT[:12]}" in stored.serving[-1]["loaded"]["text"]
    world["runs"]["verified"] = run["id"]


def test_the_same_server_behind_an_entry_pinned_to_qwen_is_refused_at_add_and_at_run(world, hf_env):
    server: VllmServer = world["server"]
    qwen = vllm_models() / QWEN
    added = cli(
        "models", "add", "hf-wrong", "--endpoint", server.url, "--weights-dir", str(qwen),
        "--revision", "y", "--usd-per-hour", "0.1", "--models", str(world["catalogue"]),
    )  # fmt: skip
    assert added.code != 0 and "nothing was hashed" in added.err and str(world["snapshot"]) in added.err
    # The same entry written by hand (as an old catalogue might hold it): the run refuses it.
    smol = load_catalogue(world["catalogue"]).get("smol-hf")
    pins = pin_weights(*weight_files(qwen, []))
    wrong = smol.model_copy(
        update={
            "name": "hf-wrong",
            "weights_dir": pins.weights_dir,
            "files": pins.files,
            "weights_digest": pins.digest,
            "revision": "y",
        }
    )
    text = world["catalogue"].read_text()
    write_catalogue(Catalogue(models=(smol, wrong)), world["catalogue"])
    try:
        out = _run(world, "hf-wrong")
    finally:
        world["catalogue"].write_text(text)
    said = " ".join(out.err.split())
    assert out.code != 0 and "loaded the folder" in said and str(world["snapshot"]) in said
    assert "nothing was sent" in said
    with Store.open(world["store"]) as store:
        assert not [r for r in store.list_runs() if r.model_name == "hf-wrong"]


def test_a_cache_that_cannot_be_resolved_runs_weights_not_checked(world, monkeypatch):
    monkeypatch.setenv("HF_HOME", str(world["root"] / "another-cache"))
    monkeypatch.delenv("HF_HUB_CACHE", raising=False)
    out = _run(world, "smol-hf")
    assert out.code in (0, 1), out.err
    [run] = json.loads(out.out)["runs"]
    assert run["provenance"] == Provenance.NOT_IN_HF_CACHE and run["provenance"] != Provenance.VERIFIED
    listed = cli("runs", "list", "--store", str(world["store"]))
    assert "weights not checked" in " ".join(listed.out.split())
    report = cli("report", run["id"], "--store", str(world["store"]), "--format", "md")
    assert "weights not checked: the server's repository is not in this machine's Hugging Face cache" in report.out


def test_a_restart_with_another_template_and_without_auto_tool_choice_is_named_drift(world, hf_env):
    template = world["root"] / "other-template.jinja"
    template.write_text(OTHER_TEMPLATE)
    restarted = world["serve"]("other-template", ("--chat-template", str(template)))
    _point_at(world, restarted)
    strict = _run(world, "smol-hf", "--strict-serving")
    said = " ".join(strict.err.split())
    assert strict.code != 0 and "rendered prompt (template with tools)" in said
    assert f"auto tool choice {AUTO_ACCEPTED} → {AUTO_REFUSED}" in said
    out = _run(world, "smol-hf")
    assert out.code in (0, 1), out.err
    note = " ".join(out.err.split())
    assert "serving settings differ" in note and "rendered prompt (template with tools)" in note
    assert f"auto tool choice {AUTO_ACCEPTED} → {AUTO_REFUSED}" in note and "tools reach the prompt no → yes" in note
    [run] = json.loads(out.out)["runs"]
    assert run["provenance"] == Provenance.VERIFIED
    check = cli("reproduce", world["runs"]["verified"], run["id"], "--store", str(world["store"]))
    text = " ".join(check.out.split())
    assert "serving auto tool choice: A accepted · B refused" in text and "serving rendered prompt" in text


def test_an_edited_tokenizer_config_is_refused(world, hf_env):
    config = world["snapshot"] / "tokenizer_config.json"
    original = config.read_bytes()
    config.write_bytes(original.replace(b"{", b'{"model_max_length": 17, ', 1))  # through the link, into the blob
    try:
        out = _run(world, "smol-hf")
    finally:
        config.write_bytes(original)
    said = " ".join(out.err.split())
    assert out.code != 0 and "changed: tokenizer_config.json (the tokenizer configuration" in said

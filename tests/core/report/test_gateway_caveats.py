"""What a gateway hides, said (issue 23, point 4): through a gateway llama.cpp's `/props` and
`timings` are gone, so the report and the tool-call table say so as a caveat, and the upstream
stack the user stated in `[model.serving]` is shown labelled stated, not verified.

The gateway is the fake OpenAI server without `/props` (404, as through LiteLLM), over real
HTTP on loopback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from compare_tui.catalogue import ModelEntry
from compare_tui.cli import main
from compare_tui.engine import RunExecutor, RunOverrides, prepare_run
from compare_tui.report import build_report, load_report_inputs
from compare_tui.store import Store
from compare_tui.toolcall import NOTES_LABEL
from tests.support.builders import hosted_entry, load, write_set
from tests.support.fake_openai import FakeServer, ToolCall, text, tool_calls


@pytest.fixture
def store(tmp_path):
    with Store.open(tmp_path / "runs.sqlite") as s:
        yield s


async def _caveats(store, tmp_path, entry) -> dict[str, str]:
    goldset = load(write_set(tmp_path / "set", {"a": "ok"}))
    prepared = prepare_run(store, goldset, entry, RunOverrides(concurrency=1), environ={})
    await RunExecutor(store, prepared).execute()
    return {c.code: c.text for c in build_report(load_report_inputs(store, prepared.run.id)).caveats}


async def test_the_report_says_what_the_gateway_hid_and_labels_the_stated_stack(tmp_path, store) -> None:
    with FakeServer({"a": text("ok")}, props=None) as gw:
        base = hosted_entry(gw.url, gateway="litellm").model_dump(mode="json")
        entry = ModelEntry.model_validate(
            {**base, "serving": {"stack": "llama.cpp llama-server", "quantisation": "Q4_K_M"}}
        )
        caveats = await _caveats(store, tmp_path, entry)
    text_ = caveats["gateway"]
    assert "litellm gateway" in text_ and "/props" in text_ and "timings" in text_
    assert "stack=llama.cpp llama-server, quantisation=Q4_K_M (stated, not verified)" in text_


async def test_without_a_stated_stack_the_caveat_says_where_to_state_it(tmp_path, store) -> None:
    with FakeServer({"a": text("ok")}, props=None) as gw:
        caveats = await _caveats(store, tmp_path, hosted_entry(gw.url, gateway="litellm"))
    assert "[model.serving]" in caveats["gateway"]


async def test_a_direct_endpoint_gets_no_gateway_caveat(tmp_path, store) -> None:
    with FakeServer({"a": text("ok")}) as server:
        caveats = await _caveats(store, tmp_path, hosted_entry(server.url))
    assert "gateway" not in caveats


def _catalogue(path: Path, url: str, gateway: bool) -> str:
    path.write_text(f"""[[model]]
name = "fake"
kind = "hosted"
endpoint = "{url}"
model = "fake-model"
revision = "2026-12-01"
weights_digest = "sha256:{"0" * 64}"
{'gateway = "litellm"' if gateway else ""}
[model.serving]
stack = "llama.cpp llama-server"
""")
    return str(path)


@pytest.mark.parametrize("gateway", [True, False])
def test_the_tool_call_table_says_what_the_gateway_hid(tmp_path, capsys, gateway: bool) -> None:
    with FakeServer(default=tool_calls(ToolCall("get_weather", {"city": "Paris"})), props=None) as gw:
        code = main(
            [
                "toolcall",
                "--model",
                "fake",
                "--models",
                _catalogue(tmp_path / "m.toml", gw.url, gateway),
                "--store",
                str(tmp_path / "runs.sqlite"),
                "--scenario",
                "S01",
                "--json",
            ]
        )
    assert code == 0
    data = json.loads(capsys.readouterr().out)
    [run] = data["runs"]
    said = [c for c in data["caveats"] if "gateway" in c]
    if gateway:
        assert run["user_notes"] == {"stack": "llama.cpp llama-server"}
        assert len(said) == 1 and "/props" in said[0] and "not the model's" in said[0]
        assert f"llama.cpp llama-server ({NOTES_LABEL})" in said[0]
    else:
        assert said == [] and run["user_notes"] == {}

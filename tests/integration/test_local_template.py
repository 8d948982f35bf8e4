"""compare-tui's tool-aware chat template for the bundled Qwen (issue 37): shipped as package
data, pinned by sha256, passed to llama-server with --chat-template-file, recorded in the
catalogue's serving notes, and the same prompt as the model's own template when no tool is
offered (so golden-set runs without tools are unchanged)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import jinja2
import pytest

from compare_tui.local import bundled, catalogue_writer, server
from compare_tui.local.bundled import BUNDLED, QWEN_TOOL_TEMPLATE
from compare_tui.local.errors import LocalError
from compare_tui.local.gguf_header import read_metadata
from compare_tui.local.state import ServerRecord

QWEN = "qwen2.5-coder-0.5b"


def render(template: str, messages: list[dict], tools: list[dict] | None = None) -> str:
    env = jinja2.Environment()
    env.filters["tojson"] = lambda value, **_: json.dumps(value)
    return env.from_string(template).render(messages=messages, tools=tools, add_generation_prompt=True)


def test_the_template_is_package_data_and_matches_its_pin():
    path = QWEN_TOOL_TEMPLATE.path()
    assert hashlib.sha256(path.read_bytes()).hexdigest() == QWEN_TOOL_TEMPLATE.sha256
    assert BUNDLED[QWEN].chat_template is QWEN_TOOL_TEMPLATE
    assert BUNDLED["smollm2-135m"].chat_template is None and BUNDLED["gemma3-270m"].chat_template is None


def test_a_changed_template_is_refused(tmp_path, monkeypatch):
    changed = tmp_path / QWEN_TOOL_TEMPLATE.filename
    changed.write_text(QWEN_TOOL_TEMPLATE.path().read_text() + "\n", encoding="utf-8")
    monkeypatch.setattr(bundled, "TEMPLATES_DIR", tmp_path)
    with pytest.raises(LocalError, match="compare-tui pins"):
        QWEN_TOOL_TEMPLATE.path()


def test_it_asks_for_and_renders_calls_as_a_json_block():
    weather = {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}
    history = [
        {"role": "user", "content": "Weather in Paris?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"type": "function", "function": {"name": "get_weather", "arguments": {"city": "Paris"}}}],
        },
        {"role": "tool", "content": '{"temp_c": 18}'},
    ]
    prompt = render(QWEN_TOOL_TEMPLATE.path().read_text(), history, [weather])
    assert "answer with a json code block" in prompt and "<tool_call>" not in prompt
    assert (
        '<|im_start|>assistant\n```json\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n```<|im_end|>'
        in prompt
    )
    assert '<tool_response>\n{"temp_c": 18}\n</tool_response>' in prompt


def test_the_server_is_started_with_it_and_the_catalogue_records_it():
    path = QWEN_TOOL_TEMPLATE.path()
    argv = server.server_cmdline(
        Path("m.gguf"), name=QWEN, port=1, ctx=512, parallel=1, jinja=True, chat_template_file=path
    )
    assert argv[argv.index("--chat-template-file") + 1] == str(path)
    assert "--chat-template-file" not in server.server_cmdline(
        Path("m.gguf"), name="m", port=1, ctx=512, parallel=1, jinja=True
    )
    record = ServerRecord(
        name=QWEN, pid=1, port=1, model_file=f"/srv/{QWEN}/q.gguf", sha256="0" * 64, revision="r", quantisation="Q4_K_M",
        started_at=0.0, log_path="/tmp/x.log", cmdline=argv, ctx=4096, parallel=4, jinja=True,
        chat_template_file=str(path),
    )  # fmt: skip
    notes = catalogue_writer.serving_notes(record)
    assert f"sha256:{QWEN_TOOL_TEMPLATE.sha256[:12]}" in notes["chat_template"]
    assert "json block" in notes["chat_template"]
    assert notes["extra"]["chat_template_file_sha256"] == QWEN_TOOL_TEMPLATE.sha256


@pytest.mark.integration
def test_without_tools_the_prompt_is_the_models_own_byte_for_byte():
    model = bundled.ensure_model(BUNDLED[QWEN])
    own = read_metadata(model.path, {"tokenizer.chat_template"})["tokenizer.chat_template"]
    ours = QWEN_TOOL_TEMPLATE.path().read_text(encoding="utf-8")
    for messages in (
        [{"role": "user", "content": "hi"}],
        [
            {"role": "system", "content": "Classify the ticket."},
            {"role": "user", "content": "a"},
            {"role": "assistant", "content": "b"},
            {"role": "user", "content": "c"},
        ],
    ):
        assert render(ours, messages) == render(own, messages)

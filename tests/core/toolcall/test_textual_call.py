"""A tool call written as text: found in an answer's content, said apart from "no tool call"
by the `tool_call` scorer and by the tool-call suite (issue: Qwen2.5-Coder behind llama.cpp
answers `{"name": …, "arguments": …}` as content, which the server does not parse)."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from compare_tui.engine.exchange import RawExchange
from compare_tui.goldset.models import Task, ToolCallScorer
from compare_tui.scoring import Answer, Outcome, score_tool_call
from compare_tui.scoring.textual_call import ADVICE, written_as_text
from compare_tui.toolcall import ToolcallOutcome, official_suite
from compare_tui.toolcall.checks.evaluate import evaluate
from compare_tui.toolcall.results.model import ToolcallRun
from compare_tui.toolcall.results.table import build_table, detail_lines

QWEN_ANSWER = '{"name": "create_ticket", "arguments": {"category": "hardware", "summary": "Laptop screen flickers"}}'
ARGUMENTS = st.dictionaries(st.text(max_size=8), st.integers() | st.text(max_size=8) | st.booleans(), max_size=4)


def test_the_answer_seen_from_qwen_behind_llama_cpp_is_found():
    call = written_as_text(QWEN_ANSWER, ["create_ticket"])
    assert call is not None and call.name == "create_ticket"
    assert json.loads(call.arguments) == {"category": "hardware", "summary": "Laptop screen flickers"}


def test_a_call_cut_short_of_its_closing_brace_is_still_found():
    # Seen from Qwen2.5-Coder 0.5B behind llama.cpp with tool_choice "auto": one brace short.
    short = '{"name": "create_ticket", "arguments": {"category": "hardware", "summary": "Flickering laptop screen"}'
    call = written_as_text(short, ["create_ticket"])
    assert call is not None and json.loads(call.arguments)["category"] == "hardware"
    assert written_as_text('{"name": "create_ticket", "arguments": {"category": "hard', ["create_ticket"]) is None
    fenced_short = "```json\n" + short + "\n```"
    tagged_short = "<tool_call>\n" + short + "\n</tool_call>"
    for content in (fenced_short, tagged_short):
        call = written_as_text(content, ["create_ticket"])
        assert call is not None and json.loads(call.arguments)["category"] == "hardware", content


def test_a_fence_or_tag_inside_the_arguments_is_kept_as_written():
    # Found by Hypothesis in CI: removing fences everywhere changed the key "```" to " ".
    for value in ("```", "```json", "<tool_call>", "</tool_call>"):
        content = json.dumps({"name": "f", "arguments": {value: value}})
        call = written_as_text(content, ["f"])
        assert call is not None and json.loads(call.arguments) == {value: value}


def test_fenced_tagged_and_prose_wrapped_calls_are_found_and_others_are_not():
    fenced = f"Sure:\n```json\n{QWEN_ANSWER}\n```"
    tagged = f"<tool_call>\n{QWEN_ANSWER}\n</tool_call>"
    stringly = '{"name": "create_ticket", "arguments": "{\\"category\\": \\"hardware\\"}"}'
    parameters = '{"name": "create_ticket", "parameters": {"category": "hardware"}}'
    for content in (fenced, tagged, stringly, parameters, "I'll do that. " + QWEN_ANSWER + " Done."):
        assert written_as_text(content, ["create_ticket"]) is not None, content
    assert written_as_text(QWEN_ANSWER, ["get_weather"]) is None  # not a declared tool
    assert written_as_text('{"name": "create_ticket", "arguments": [1]}', ["create_ticket"]) is None
    assert written_as_text('{"name": "create_ticket"}', ["create_ticket"]) is None
    assert written_as_text("billing", ["create_ticket"]) is None and written_as_text(None, ["x"]) is None


@settings(max_examples=200, deadline=None)
@given(
    name=st.sampled_from(["f", "create_ticket", "get_weather"]),
    arguments=ARGUMENTS,
    before=st.text(max_size=30),
    after=st.text(max_size=30),
)
def test_a_dumped_call_anywhere_in_prose_is_found_with_its_arguments(name, arguments, before, after):
    content = before + " " + json.dumps({"name": name, "arguments": arguments}) + " " + after
    call = written_as_text(content, [name])
    assert call is not None and call.name == name and json.loads(call.arguments) == arguments


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=200))
def test_never_raises_and_only_returns_declared_tools(content):
    call = written_as_text(content, ["f"])
    assert call is None or call.name == "f"


def _task() -> Task:
    return Task.model_validate(
        {
            "id": "ticket-01",
            "input": {
                "prompt": "My laptop screen flickers, open a ticket.",
                "tools": [
                    {"type": "function", "function": {"name": "create_ticket", "parameters": {"type": "object"}}}
                ],
            },
            "expected": {"tool_call": {"name": "create_ticket", "arguments": {"category": "hardware"}}},
        }
    )


def test_the_scorer_says_a_call_was_written_as_text_not_that_there_was_none():
    spec = ToolCallScorer(kind="tool_call", match="subset")
    result = score_tool_call(_task(), spec, Answer(QWEN_ANSWER))
    assert result.outcome is Outcome.FAIL
    assert "a tool call written as text" in result.detail and ADVICE in result.detail
    assert '[tool call] create_ticket({"category":"hardware"' in result.detail
    plain = score_tool_call(_task(), spec, Answer("I have opened a ticket for you."))
    assert plain.outcome is Outcome.FAIL and plain.detail.endswith("got no tool call")


def _exchange(content: str) -> RawExchange:
    return RawExchange(
        status=200,
        body={"choices": [{"message": {"role": "assistant", "content": content}, "finish_reason": "stop"}]},
        ended_ns=5_000_000,
    )


def test_the_suite_marks_a_scenario_failed_by_a_call_written_as_text():
    suite = official_suite()
    scenario = next(s for s in suite.scenarios if not s.stream and s.tools and s.expect.match and not s.expect.refused)
    tool = scenario.tools[0]
    written = _exchange(json.dumps({"name": tool.wire_name, "arguments": {}}))
    result = evaluate(scenario, written)
    assert result.outcome is ToolcallOutcome.FAIL
    assert result.written_as_text == f"[tool call] {tool.name}({{}})"
    assert "a tool call written as text" in result.reason and ADVICE in result.reason
    silent = evaluate(scenario, _exchange("Let me check."))
    assert silent.outcome is ToolcallOutcome.FAIL and silent.written_as_text is None
    runs = [
        ToolcallRun(
            run_id,
            "2026-12-05T00:00:00",
            "qwen",
            "qwen",
            "http://127.0.0.1:1/v1",
            "suite",
            "1",
            "sha256:x",
            results=(res,),
        )
        for run_id, res in (("r1", result), ("r2", silent))
    ]
    table = build_table(runs)
    assert [cell.text for row in table.rows for cell in row.cells] == ["✗ fail (text)", "✗ fail"]
    assert any("did not parse it into tool_calls" in c for c in table.caveats)
    assert any("written as text, not parsed" in line for line in detail_lines(result))
    assert type(result).from_dict(result.to_dict()) == result

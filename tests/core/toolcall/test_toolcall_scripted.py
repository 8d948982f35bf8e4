"""Each outcome class of a scenario, against the scripted loopback server (real HTTP and SSE).

The refusal shapes are the servers' own messages (reference notes (b)): llama.cpp without
--jinja answers 500, vLLM without auto tool choice 400, Ollama 400 with either body shape.
"""

from __future__ import annotations

import pytest

from compare_tui.toolcall import RunSettings, ToolcallOutcome, official_suite, run_scenarios
from tests.support.fake_openai import Answer, FakeServer, Reset, ToolCall, error_in_stream, http_error, text, tool_calls

FAST = RunSettings(max_tokens=64, timeout_s=5.0, concurrency=2)


def scenario(sid: str):
    return next(s for s in official_suite().scenarios if s.id == sid)


async def run_one(sid: str, plan, settings: RunSettings = FAST):
    with FakeServer(default=plan) as server:
        [result] = await run_scenarios([scenario(sid)], endpoint=server.url, model_id="fake-model", settings=settings)
        return result, server.requests


def failed(result) -> dict[str, list[tuple[str, str]]]:
    """check id -> [(pointer, keyword)] of the failed checks."""
    return {c.id: [(f.pointer, f.keyword) for f in c.failures] for c in result.checks if not c.passed}


PARIS = ToolCall("get_weather", {"city": "Paris"})


# ------------------------------------------------------------------ pass


async def test_a_correct_call_passes_every_check():
    result, requests = await run_one("S01", tool_calls(PARIS))
    assert result.outcome is ToolcallOutcome.PASS, result.reason
    assert {c.id for c in result.checks if c.applicable} >= {"type_function", "arguments_schema", "calls_match"}
    body = requests[0].body
    assert body["tool_choice"] == "auto" and body["stream"] is False and body["n"] == 1
    assert body["tools"][0]["function"]["name"] == "get_weather"


async def test_tool_choice_omitted_is_really_omitted():
    result, requests = await run_one("S18", tool_calls(PARIS))
    assert result.outcome is ToolcallOutcome.PASS
    assert "tool_choice" not in requests[0].body


async def test_streamed_call_split_into_one_character_chunks_assembles():
    result, requests = await run_one("S26", tool_calls(PARIS, args_chunk_chars=1))
    assert result.outcome is ToolcallOutcome.PASS, failed(result)
    assert requests[0].body["stream"] is True and requests[0].body["stream_options"] == {"include_usage": True}
    assert any(c.id == "stream_assembly" and c.passed for c in result.checks)


async def test_parallel_streamed_calls_interleaved_by_index_assemble():
    calls = [ToolCall("get_weather", {"city": c}) for c in ("Lima", "Paris", "Tokyo")]
    result, requests = await run_one("S27", tool_calls(*calls, args_chunk_chars=2, interleave=True))
    assert result.outcome is ToolcallOutcome.PASS, failed(result)
    assert requests[0].body["parallel_tool_calls"] is True
    assert len({call.id for call in result.calls}) == 3


async def test_named_unknown_choice_refused_with_400_passes():
    plan = http_error(400, "The tool specified in `tool_choice` does not match any of the specified `tools`")
    result, _ = await run_one("S17", plan)
    assert result.outcome is ToolcallOutcome.PASS and result.status == 400


# ------------------------------------------------------------------ fail


async def test_arguments_returned_as_an_object_fail_u2():
    result, _ = await run_one("S01", tool_calls(PARIS, arguments_as_object=True))
    assert result.outcome is ToolcallOutcome.FAIL
    assert failed(result)["arguments_string"] == [("/tool_calls/0/function/arguments", "type")]


async def test_arguments_as_an_object_in_a_stream_fail_u2_too():
    result, _ = await run_one("S26", tool_calls(PARIS, arguments_as_object=True))
    assert result.outcome is ToolcallOutcome.FAIL
    assert "arguments_string" in failed(result)


async def test_raw_call_markup_leaked_into_content_fails_u7():
    leak = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
    result, _ = await run_one("S01", text(leak))
    assert result.outcome is ToolcallOutcome.FAIL
    assert failed(result)["no_markup_in_content"] == [("/content", "markup")]
    assert "call_count" in failed(result)


async def test_a_bare_json_call_blob_in_content_is_markup_too():
    result, _ = await run_one("S19", text('{"name": "get_weather", "arguments": {"city": "Paris"}}'))
    assert "no_markup_in_content" in failed(result)


async def test_stringified_integer_fails_with_pointer_into_the_arguments():
    call = ToolCall(
        "search_flights",
        {"origin": "Boston", "destination": "Denver", "date": "2026-03-14", "passengers": "2", "cabin": "economy"},
    )
    result, _ = await run_one("S03", tool_calls(call))
    problems = failed(result)
    assert ("/tool_calls/0/function/arguments/passengers", "type") in problems["arguments_schema"]
    assert ("/tool_calls/0/function/arguments/passengers", "integer") in problems["calls_match"]


async def test_integer_as_2_point_0_is_an_integer():
    call = ToolCall(
        "search_flights",
        '{"origin": "Boston", "destination": "Denver", "date": "2026-03-14", "passengers": 2.0, "cabin": "economy"}',
    )
    result, _ = await run_one("S03", tool_calls(call))
    assert result.outcome is ToolcallOutcome.PASS, failed(result)


async def test_a_rewritten_tool_name_fails_u4():
    result, _ = await run_one("S09", tool_calls(ToolCall("getuser-v2", {"user_id": "42"})))
    assert failed(result)["name_offered"] == [("/tool_calls/0/function/name", "name")]


async def test_empty_string_arguments_for_a_no_parameter_tool_fail_u3():
    result, _ = await run_one("S05", tool_calls(ToolCall("get_time", "")))
    assert "arguments_object" in failed(result)


async def test_duplicate_ids_fail_u5():
    calls = [ToolCall("get_weather", {"city": c}, id="call_same") for c in ("Paris", "Tokyo", "Lima")]
    result, _ = await run_one("S11", tool_calls(*calls))
    assert failed(result)["ids_unique"] == [("/tool_calls/1/id", "id"), ("/tool_calls/2/id", "id")]


async def test_named_unknown_choice_accepted_silently_fails():
    result, _ = await run_one("S17", text("It is sunny in Paris."))
    assert result.outcome is ToolcallOutcome.FAIL and "refused" in failed(result)


async def test_a_template_that_cannot_render_tool_history_is_a_fail_not_an_error():
    result, _ = await run_one("S23", http_error(500, "Value is not callable: null at row 1, column 42"))
    assert result.outcome is ToolcallOutcome.FAIL and "answered" in failed(result)


async def test_tool_choice_none_ignored_fails():
    result, _ = await run_one("S14", tool_calls(PARIS))
    assert result.outcome is ToolcallOutcome.FAIL and "call_count" in failed(result)


# ------------------------------------------------------------------ unsupported


@pytest.mark.parametrize(
    "plan, server",
    [
        (http_error(500, "tools param requires --jinja flag"), "llama.cpp"),
        (
            http_error(400, '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set'),
            "vLLM",
        ),
        (
            http_error(
                400,
                body={
                    "object": "error",
                    "message": '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set',
                    "code": 400,
                },
            ),
            "vLLM",
        ),
        (http_error(400, body={"error": {"message": "llama3 does not support tools", "type": "api_error"}}), "Ollama"),
        (http_error(400, body={"error": "registry.ollama.ai/library/gemma:2b does not support tools"}), "Ollama"),
        (http_error(500, "Invalid tool_choice: required"), "llama.cpp (older build)"),
    ],
)
async def test_known_refusals_are_unsupported_whatever_the_status(plan, server):
    result, _ = await run_one("S15", plan)  # tool_choice "required": every signature can apply
    assert result.outcome is ToolcallOutcome.UNSUPPORTED, result.reason
    assert "the server said" in result.reason
    assert not result.checks  # nothing about the model was measured


async def test_llama_cpp_no_jinja_refusal_of_s17_is_unsupported_not_pass():
    result, _ = await run_one("S17", http_error(500, "tools param requires --jinja flag"))
    assert result.outcome is ToolcallOutcome.UNSUPPORTED


async def test_an_unknown_refusal_naming_tools_is_unsupported_but_unconfirmed():
    result, _ = await run_one("S01", http_error(422, "tool calling is not supported by this backend"))
    assert result.outcome is ToolcallOutcome.UNSUPPORTED and "unconfirmed" in result.reason


async def test_a_known_refusal_inside_a_200_stream_is_unsupported():
    result, _ = await run_one("S26", error_in_stream("Cannot use tools with stream", after_chunks=0))
    assert result.outcome is ToolcallOutcome.UNSUPPORTED


# ------------------------------------------------------------------ error


@pytest.mark.parametrize(
    "plan",
    [
        http_error(401, "invalid api key"),
        http_error(429, "slow down"),
        http_error(500, "Internal server error"),
        http_error(400, "context length exceeded: maximum context length is 4096 tokens"),
        Reset(),
        error_in_stream("out of memory", after_chunks=1),
    ],
)
async def test_nothing_measured_is_an_error(plan):
    result, _ = await run_one("S01", plan)
    assert result.outcome is ToolcallOutcome.ERROR, result.reason
    assert not result.checks


async def test_a_timeout_is_an_error():
    result, _ = await run_one("S01", Answer(headers_delay_s=2.0), RunSettings(timeout_s=0.3))
    assert result.outcome is ToolcallOutcome.ERROR and "0.3 s" in result.reason


async def test_results_come_back_in_scenario_order_with_one_per_scenario():
    chosen = [scenario(s) for s in ("S01", "S14", "S17", "S19")]
    with FakeServer(default=text("A quiet autumn leaf")) as server:
        results = await run_scenarios(chosen, endpoint=server.url, model_id="m", settings=FAST)
    assert [r.scenario_id for r in results] == ["S01", "S14", "S17", "S19"]
    assert [r.outcome.value for r in results] == ["fail", "pass", "fail", "pass"]


async def test_a_server_closing_after_each_streamed_answer_leaves_no_scenario_in_error():
    # llama-server's way (a close after every streamed answer, though it said Keep-Alive), with
    # the close arriving late as on a loaded machine: no request may die in a closing connection.
    from tests.support.raw_server import LateClosingServer

    async with LateClosingServer(close_after_s=0.05) as server:
        endpoint = server.url.removesuffix("/chat/completions")
        streamed = [
            s for s in official_suite().scenarios if s.request_body("m", max_tokens=8, temperature=0).get("stream")
        ]
        chosen = streamed * 2  # each streamed scenario twice: back to back on one connection slot
        assert len(chosen) >= 6
        settings = RunSettings(max_tokens=8, timeout_s=5.0, concurrency=1)
        results = await run_scenarios(chosen, endpoint=endpoint, model_id="m", settings=settings)
    assert [r.outcome for r in results if r.outcome is ToolcallOutcome.ERROR] == [], [r.reason for r in results]

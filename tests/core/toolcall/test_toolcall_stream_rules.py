"""The streamed-delta assembly rules (reference notes (c)), one rule per test, on synthetic chunks."""

from __future__ import annotations

from compare_tui.toolcall.checks.stream_rules import assemble


def chunk(*tool_deltas, content=None, finish=None, index=0):
    delta = {}
    if content is not None:
        delta["content"] = content
    if tool_deltas:
        delta["tool_calls"] = list(tool_deltas)
    return {"choices": [{"index": index, "delta": delta, "finish_reason": finish}]}


def head(index, id="call_a", name="get_weather", **extra):
    return {"index": index, "id": id, "type": "function", "function": {"name": name, "arguments": ""}, **extra}


def args(index, text):
    return {"index": index, "function": {"arguments": text}}


def rules(assembled):
    return [v.rule for v in assembled.violations]


def test_the_canonical_openai_stream_assembles_cleanly():
    chunks = [
        chunk(content=None),
        chunk(head(0)),
        chunk(args(0, '{"')),
        chunk(args(0, 'city":"Paris"}')),
        chunk(finish="tool_calls"),
        {"choices": [], "usage": {"prompt_tokens": 3}},
    ]
    out = assemble(chunks, done=True)
    assert out.violations == [] and out.notes == []
    [call] = out.message["tool_calls"]
    assert call == {
        "id": "call_a",
        "type": "function",
        "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'},
    }
    assert out.finish_reason == "tool_calls"


def test_rule_1_a_missing_index_fails():
    out = assemble([chunk({"id": "x", "function": {"name": "get_weather"}})], done=True)
    assert rules(out) == ["index_missing"]
    assert out.violations[0].pointer == "/stream/chunks/0/choices/0/delta/tool_calls/0/index"


def test_rule_2_a_changing_id_fails_and_a_missing_id_fails():
    changed = assemble(
        [chunk(head(0, id="a")), chunk({"index": 0, "id": "b", "function": {"arguments": "{}"}})], done=True
    )
    assert rules(changed) == ["id_changed"]
    missing = assemble(
        [chunk({"index": 0, "type": "function", "function": {"name": "f", "arguments": "{}"}})], done=True
    )
    assert rules(missing) == ["id_missing"]


def test_rule_2_a_repeated_identical_id_is_fine():
    out = assemble([chunk(head(0, id="a")), chunk({"index": 0, "id": "a", "function": {"arguments": "{}"}})], done=True)
    assert out.violations == []


def test_rule_3_names_are_never_concatenated():
    same = assemble(
        [chunk(head(0)), chunk({"index": 0, "function": {"name": "get_weather", "arguments": "{}"}})], done=True
    )
    assert same.violations == [] and any("repeated its name" in n for n in same.notes)
    assert same.message["tool_calls"][0]["function"]["name"] == "get_weather"
    other = assemble([chunk(head(0)), chunk({"index": 0, "function": {"name": "send_email"}})], done=True)
    assert rules(other) == ["name_changed"]


def test_rule_4_fragments_concatenate_in_arrival_order_and_duplicates_show():
    out = assemble(
        [chunk(head(0)), chunk(args(0, '{"a":')), chunk(args(0, "1}")), chunk(args(0, '{"a":1}'))], done=True
    )
    assert out.message["tool_calls"][0]["function"]["arguments"] == '{"a":1}{"a":1}'  # U3 then fails it


def test_rule_5_a_tool_delta_after_the_finish_chunk_fails():
    out = assemble([chunk(head(0)), chunk(args(0, "{}"), finish="tool_calls"), chunk(args(0, " "))], done=True)
    assert rules(out) == ["delta_after_finish"]


def test_rule_6_and_7_usage_chunk_tolerated_missing_done_noted():
    out = assemble([chunk(content="hi"), {"choices": [], "usage": {}}, {"usage": None}], done=False)
    assert out.violations == [] and out.message["content"] == "hi"
    assert out.notes == ["the stream ended without data: [DONE]"]


def test_indices_must_run_from_zero_without_gaps():
    out = assemble([chunk(head(0, id="a")), chunk(head(2, id="b"))], done=True)
    assert rules(out) == ["index_sequence"]


def test_interleaved_parallel_calls_keep_their_own_ids_and_arguments():
    chunks = [
        chunk(head(0, id="a")),
        chunk(head(1, id="b")),
        chunk(args(1, '{"city":')),
        chunk(args(0, '{"city":')),
        chunk(args(0, '"Paris"}')),
        chunk(args(1, '"Lima"}')),
    ]
    out = assemble(chunks, done=True)
    assert out.violations == []
    assert [(c["id"], c["function"]["arguments"]) for c in out.message["tool_calls"]] == [
        ("a", '{"city":"Paris"}'),
        ("b", '{"city":"Lima"}'),
    ]


def test_an_object_fragment_is_kept_as_an_object():
    out = assemble(
        [chunk({"index": 0, "id": "a", "type": "function", "function": {"name": "f", "arguments": {"x": 1}}})],
        done=True,
    )
    assert out.message["tool_calls"][0]["function"]["arguments"] == {"x": 1}


def test_garbage_chunks_never_crash():
    out = assemble(
        [None, 5, "x", {"choices": "no"}, {"choices": [None, {"delta": []}]}, chunk("not a dict")], done=True
    )
    assert rules(out) == ["delta_shape"]

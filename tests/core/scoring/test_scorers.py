"""The five pure scorers and the dispatcher: pass, fail and error cases, plus properties."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compare_tui.goldset.models import (
    CommandScorer,
    ExactScorer,
    HumanScorer,
    JsonScorer,
    RegexScorer,
    Task,
    ToolCallScorer,
)
from compare_tui.scoring import (
    Answer,
    Outcome,
    ToolCall,
    dispatch,
    extract_json,
    json_equal,
    normalize_text,
    score,
    score_exact,
    score_human,
    score_json,
    score_regex,
    score_tool_call,
)


def make_task(**expected) -> Task:
    return Task.model_validate({"id": "t-1", "input": {"prompt": "q"}, "expected": expected})


TEXT_TASK = make_task(text="billing")
NORMALIZE_OPTIONS = st.lists(st.sampled_from(["case", "whitespace", "punctuation"]), unique=True)
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4),
    max_leaves=12,
)

# ---------------------------------------------------------------- exact


def test_exact_passes_on_identical_text():
    assert score_exact(TEXT_TASK, ExactScorer(kind="exact"), Answer("billing")).outcome is Outcome.PASS


def test_exact_without_normalisation_is_strict():
    result = score_exact(TEXT_TASK, ExactScorer(kind="exact"), Answer("Billing"))
    assert result.outcome is Outcome.FAIL
    assert result.detail == "expected 'billing', got 'Billing'"


def test_exact_normalises_case_whitespace_and_unicode_punctuation_on_request():
    spec = ExactScorer(kind="exact", normalize=["case", "whitespace", "punctuation"])
    assert score_exact(TEXT_TASK, spec, Answer("  BILLING!\n")).outcome is Outcome.PASS
    assert score_exact(make_task(text="Straße"), spec, Answer("«STRASSE»")).outcome is Outcome.PASS
    assert normalize_text(" a \t\n b ", ["whitespace"]) == "a b"
    assert (
        score_exact(TEXT_TASK, ExactScorer(kind="exact", normalize=["case"]), Answer("billing ")).outcome
        is Outcome.FAIL
    )


def test_exact_detail_quotes_the_answer_as_written_and_names_the_normalisation():
    """The detail never misquotes the model with its normalised answer."""
    spec = ExactScorer(kind="exact", normalize=["case", "punctuation"])
    said = "I'm sorry for your loss, but as a text-based AI I cannot help."
    result = score_exact(make_task(text="Billing"), spec, Answer(said))
    assert result.outcome is Outcome.FAIL
    assert result.detail == f"expected 'Billing', got {said!r} (compared after normalising case, punctuation)"
    assert result.data["got"] == "im sorry for your loss but as a textbased ai i cannot help"
    passed = score_exact(make_task(text="Billing"), spec, Answer("BILLING!"))
    assert passed.detail == "matches 'Billing' (compared after normalising case, punctuation)"


def test_exact_fail_detail_truncates_long_texts():
    result = score_exact(TEXT_TASK, ExactScorer(kind="exact"), Answer("x" * 5000))
    assert result.outcome is Outcome.FAIL and len(result.detail) < 220 and "…" in result.detail


def test_exact_without_expected_text_is_an_error():
    result = score_exact(make_task(json={"a": 1}), ExactScorer(kind="exact"), Answer("x"))
    assert result.outcome is Outcome.ERROR and "expected.text" in result.detail


@settings(max_examples=200, deadline=None)
@given(st.text(), NORMALIZE_OPTIONS)
def test_normalisation_is_idempotent(text, options):
    once = normalize_text(text, options)
    assert normalize_text(once, options) == once


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=20), st.text(max_size=20), NORMALIZE_OPTIONS)
def test_exact_is_symmetric(a, b, options):
    spec = ExactScorer(kind="exact", normalize=options)
    forward = score_exact(make_task(text=a), spec, Answer(b)).outcome
    backward = score_exact(make_task(text=b), spec, Answer(a)).outcome
    assert forward is backward


# ---------------------------------------------------------------- regex


def test_regex_search_and_fullmatch():
    search = RegexScorer(kind="regex", pattern=r"refund|billing")
    full = RegexScorer(kind="regex", pattern=r"billing", mode="fullmatch")
    assert score_regex(TEXT_TASK, search, Answer("it is billing.")).outcome is Outcome.PASS
    assert score_regex(TEXT_TASK, full, Answer("it is billing.")).outcome is Outcome.FAIL
    assert score_regex(TEXT_TASK, full, Answer("billing")).data["span"] == [0, 7]


def test_regex_flags_apply():
    spec = RegexScorer(kind="regex", pattern=r"^billing$", flags=["IGNORECASE", "MULTILINE"])
    assert score_regex(TEXT_TASK, spec, Answer("Label:\nBILLING\n")).outcome is Outcome.PASS
    assert (
        score_regex(TEXT_TASK, RegexScorer(kind="regex", pattern=r"^billing$"), Answer("x\nbilling")).outcome
        is Outcome.FAIL
    )


# ---------------------------------------------------------------- json


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ('{"label": "billing"}', "whole"),
        ('Sure!\n```json\n{"label": "billing"}\n```\nDone', "fence"),
        ('```\nnot json\n```\n```\n{"label": "billing"}\n```', "fence"),
        ('The answer is {"label": "billing"} as asked {', "embedded"),
    ],
)
def test_json_extraction_sources(text, where):
    assert extract_json(text) == ({"label": "billing"}, where)


def test_json_extraction_prefers_json_fence_and_rejects_nan():
    assert extract_json("```\n[1]\n```\n```json\n[2]\n```") == ([2], "fence")
    assert extract_json("NaN") is None and extract_json('{"a": NaN}') is None
    assert extract_json("[" * 5000) is None  # deep nesting: no RecursionError


def test_json_without_json_fails():
    result = score_json(make_task(json={}), JsonScorer(kind="json"), Answer("no braces here"))
    assert result.outcome is Outcome.FAIL and result.detail.startswith("no JSON found")


SCHEMA = {
    "type": "object",
    "required": ["label", "age"],
    "properties": {"label": {"enum": ["billing", "bug"]}, "age": {"type": "integer"}},
}


def test_json_schema_violations_are_listed_with_pointers():
    spec = JsonScorer(kind="json", schema=SCHEMA)
    result = score_json(make_task(json={}), spec, Answer('{"label": "other", "age": "x", "tags": [1]}'))
    assert result.outcome is Outcome.FAIL
    assert "/age: 'x' is not of type 'integer'" in result.detail and "/label:" in result.detail
    missing = score_json(make_task(json={}), spec, Answer("{}"))
    assert "(root): 'age' is a required property" in missing.detail
    assert score_json(make_task(json={}), spec, Answer('{"label": "bug", "age": 3}')).outcome is Outcome.PASS


def test_json_schema_draft_follows_dollar_schema():
    tuple_items = {"type": "array", "items": [{"type": "integer"}, {"type": "string"}]}
    draft7 = JsonScorer(kind="json", schema={"$schema": "http://json-schema.org/draft-07/schema#", **tuple_items})
    assert score_json(make_task(json=[]), draft7, Answer("[1, 2]")).outcome is Outcome.FAIL
    assert score_json(make_task(json=[]), draft7, Answer('[1, "a"]')).outcome is Outcome.PASS
    # The same schema is invalid under the default (2020-12), where `items` is one schema.
    default = JsonScorer(kind="json", schema=tuple_items)
    result = score_json(make_task(json=[]), default, Answer("[1]"))
    assert result.outcome is Outcome.ERROR and "schema is not valid" in result.detail


def test_json_unresolvable_ref_is_an_error_not_a_fail():
    spec = JsonScorer(kind="json", schema={"$ref": "https://example.invalid/schema.json"})
    assert score_json(make_task(json={}), spec, Answer("{}")).outcome is Outcome.ERROR


def test_json_fields_compare_type_aware():
    task = make_task(json={"count": 1, "flag": True, "id": "1", "other": "ignored"})
    spec = JsonScorer(kind="json", fields=["count", "flag", "id"])
    assert score_json(task, spec, Answer('{"count": 1.0, "flag": true, "id": "1", "other": 5}')).outcome is Outcome.PASS
    assert "field 'flag'" in score_json(task, spec, Answer('{"count": 1, "flag": 1, "id": "1"}')).detail
    assert "field 'id'" in score_json(task, spec, Answer('{"count": 1, "flag": true, "id": 1}')).detail
    assert "missing" in score_json(task, spec, Answer('{"count": 1, "flag": true}')).detail
    assert score_json(task, spec, Answer("[1]")).outcome is Outcome.FAIL


def test_json_fields_absent_from_expected_is_an_error():
    result = score_json(make_task(json={"a": 1}), JsonScorer(kind="json", fields=["b"]), Answer('{"b": 1}'))
    assert result.outcome is Outcome.ERROR and "'b'" in result.detail


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from('{}[]":,`\n json1aNtrue\\') | st.characters(), max_size=200))
def test_json_extraction_never_raises(text):
    extract_json(text)


@settings(max_examples=150, deadline=None)
@given(JSON_VALUES, st.text(alphabet="abc .!\n", max_size=20))
def test_json_extraction_finds_a_dumped_value(value, prose):
    found = extract_json(json.dumps(value))
    assert found is not None and json_equal(found[0], value)
    if isinstance(value, (dict, list)):
        embedded = extract_json(f"{prose} {json.dumps(value)} {prose}")
        assert embedded is not None and json_equal(embedded[0], value)


# ---------------------------------------------------------------- type-aware equality


@settings(max_examples=200, deadline=None)
@given(JSON_VALUES)
def test_json_equal_is_reflexive_and_survives_a_round_trip(value):
    assert json_equal(value, value)
    assert json_equal(value, json.loads(json.dumps(value)))


@settings(max_examples=200, deadline=None)
@given(JSON_VALUES, JSON_VALUES)
def test_json_equal_is_symmetric(a, b):
    assert json_equal(a, b) is json_equal(b, a)


def test_json_equal_type_rules():
    assert json_equal(1, 1.0) and json_equal({"a": [1, 2.0]}, {"a": [1.0, 2]})
    assert not json_equal(True, 1) and not json_equal(0, False) and not json_equal("1", 1)
    assert not json_equal(None, 0) and not json_equal({"a": 1}, {"a": 1, "b": None}) and not json_equal([1], [1, 1])


# ---------------------------------------------------------------- tool_call


def call(name: str, args: str) -> ToolCall:
    return ToolCall(name=name, arguments=args)


TOOL_TASK = make_task(tool_call={"name": "get_weather", "arguments": {"city": "Paris", "days": 3}})
EXACT = ToolCallScorer(kind="tool_call")


def test_tool_call_exact_match_from_expected():
    result = score_tool_call(
        TOOL_TASK, EXACT, Answer(tool_calls=(call("get_weather", '{"days": 3.0, "city": "Paris"}'),))
    )
    assert result.outcome is Outcome.PASS
    assert result.detail == 'called [tool call] get_weather({"city":"Paris","days":3.0})'


def test_tool_call_exact_rejects_extra_keys_but_subset_allows_them():
    answer = Answer(tool_calls=(call("get_weather", '{"city": "Paris", "days": 3, "units": "C"}'),))
    assert "unexpected key 'units'" in score_tool_call(TOOL_TASK, EXACT, answer).detail
    subset = ToolCallScorer(kind="tool_call", match="subset")
    assert score_tool_call(TOOL_TASK, subset, answer).outcome is Outcome.PASS
    assert (
        score_tool_call(TOOL_TASK, subset, Answer(tool_calls=(call("get_weather", '{"city": "Paris"}'),))).outcome
        is Outcome.FAIL
    )


def test_tool_call_values_are_type_aware():
    flag_task = make_task(tool_call={"name": "f", "arguments": {"on": True, "n": 1, "tags": [{"a": 1}]}})
    good = Answer(tool_calls=(call("f", '{"on": true, "n": 1.0, "tags": [{"a": 1}]}'),))
    assert score_tool_call(flag_task, EXACT, good).outcome is Outcome.PASS
    for bad in (
        '{"on": 1, "n": 1, "tags": [{"a": 1}]}',
        '{"on": true, "n": "1", "tags": [{"a": 1}]}',
        '{"on": true, "n": 1, "tags": [{"a": 1, "b": 2}]}',
    ):
        assert score_tool_call(flag_task, EXACT, Answer(tool_calls=(call("f", bad),))).outcome is Outcome.FAIL


def test_tool_call_any_matching_call_is_enough_and_wrong_name_fails():
    answer = Answer(tool_calls=(call("search", "{}"), call("get_weather", '{"city": "Paris", "days": 3}')))
    assert score_tool_call(TOOL_TASK, EXACT, answer).outcome is Outcome.PASS
    wrong = score_tool_call(TOOL_TASK, EXACT, Answer(tool_calls=(call("search", '{"q": 1}'),)))
    assert wrong.outcome is Outcome.FAIL and '[tool call] search({"q":1})' in wrong.detail
    assert "got no tool call" in score_tool_call(TOOL_TASK, EXACT, Answer("sunny")).detail


def test_tool_call_invalid_json_arguments_fail_with_reason():
    result = score_tool_call(TOOL_TASK, EXACT, Answer(tool_calls=(call("get_weather", "{city: Paris"),)))
    assert result.outcome is Outcome.FAIL and "not valid JSON" in result.detail
    assert "[tool call] get_weather({city: Paris)" in result.detail
    array = score_tool_call(TOOL_TASK, EXACT, Answer(tool_calls=(call("get_weather", "[1]"),)))
    assert "not an object" in array.detail


def test_tool_call_spec_overrides_expected_and_name_only_check():
    spec = ToolCallScorer(kind="tool_call", name="lookup")
    assert (
        score_tool_call(make_task(text="x"), spec, Answer(tool_calls=(call("lookup", '{"any": 1}'),))).outcome
        is Outcome.PASS
    )
    spec_args = ToolCallScorer(kind="tool_call", arguments={"city": "Rome"}, match="subset")
    answer = Answer(tool_calls=(call("get_weather", '{"city": "Rome", "days": 3}'),))
    assert score_tool_call(TOOL_TASK, spec_args, answer).outcome is Outcome.PASS
    assert score_tool_call(make_task(text="x"), EXACT, answer).outcome is Outcome.ERROR


def test_no_tool_call():
    spec = ToolCallScorer(kind="tool_call", no_tool_call=True)
    assert score_tool_call(TEXT_TASK, spec, Answer("billing")).outcome is Outcome.PASS
    result = score_tool_call(TEXT_TASK, spec, Answer(tool_calls=(call("x", ""),)))
    assert result.outcome is Outcome.FAIL and "[tool call] x({})" in result.detail


# ---------------------------------------------------------------- human and dispatch


def test_human_is_always_review_with_instructions():
    result = score_human(TEXT_TASK, HumanScorer(kind="human", instructions="Is it polite?"), Answer("billing"))
    assert result.outcome is Outcome.REVIEW and "Is it polite?" in result.detail


@pytest.mark.parametrize(
    ("spec", "outcome"),
    [
        (ExactScorer(kind="exact"), Outcome.PASS),
        (RegexScorer(kind="regex", pattern="bil+"), Outcome.PASS),
        (JsonScorer(kind="json"), Outcome.FAIL),
        (ToolCallScorer(kind="tool_call", no_tool_call=True), Outcome.PASS),
        (HumanScorer(kind="human"), Outcome.REVIEW),
        (CommandScorer(kind="command", run=[sys.executable, "-I", "-S", "-c", "raise SystemExit(1)"]), Outcome.FAIL),
    ],
)
def test_dispatch_picks_the_scorer_by_kind(spec, outcome, tmp_path: Path):
    assert score(TEXT_TASK, spec, Answer("billing"), set_root=tmp_path).outcome is outcome


def test_dispatch_turns_a_scorer_crash_into_an_error(monkeypatch, tmp_path: Path):
    def broken(task, spec, answer):
        raise RuntimeError("boom")

    monkeypatch.setitem(dispatch.PURE_SCORERS, "exact", broken)
    result = score(TEXT_TASK, ExactScorer(kind="exact"), Answer("billing"), set_root=tmp_path)
    assert result.outcome is Outcome.ERROR and "RuntimeError: boom" in result.detail
    assert score(TEXT_TASK, object(), Answer("x"), set_root=tmp_path).outcome is Outcome.ERROR

"""The JSON Schema subset checker: the edge cases of the reference notes (d), the honest
"not checked" list, hostile schemas, and fuzzing (never crashes; agrees with jsonschema on
the subset it claims to check).
"""

from __future__ import annotations

import os

import jsonschema
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compare_tui.toolcall.schema.check import check_value
from compare_tui.toolcall.schema.survey import ANNOTATIONS, CHECKED, nested_quantifier, survey

FUZZ = settings(
    max_examples=int(os.environ.get("COMPARE_TUI_FUZZ_EXAMPLES", "200")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)


def failures(schema, value):
    return [(f.pointer, f.keyword) for f in check_value(schema, value).failures]


def not_checked(schema):
    return [(n.schema_pointer, n.keyword) for n in check_value(schema, {}).not_checked]


# ------------------------------------------------------------------ edge cases


def test_integer_accepts_two_point_zero_and_refuses_booleans_and_strings():
    assert failures({"type": "integer"}, 2.0) == []
    assert failures({"type": "integer"}, 2.5) == [("", "type")]
    assert failures({"type": "integer"}, True) == [("", "type")]
    assert failures({"type": "number"}, False) == [("", "type")]
    assert failures({"type": "number"}, "2") == [("", "type")]
    assert failures({"type": ["string", "null"]}, None) == []


def test_enum_and_const_use_json_equality():
    assert failures({"enum": [1, "a"]}, 1.0) == []
    assert failures({"enum": [1]}, True) == [("", "enum")]
    assert failures({"const": {"a": [1]}}, {"a": [1.0]}) == []
    assert failures({"const": False}, 0) == [("", "const")]


def test_object_keywords_point_at_the_property():
    schema = {
        "type": "object",
        "properties": {"a": {"type": "string"}},
        "required": ["a", "b/c"],
        "additionalProperties": False,
        "maxProperties": 2,
    }
    assert sorted(failures(schema, {"a": 1, "x~y": 0, "z": 0})) == sorted(
        [
            ("/a", "type"),
            ("/b~1c", "required"),
            ("/x~0y", "additionalProperties"),
            ("/z", "additionalProperties"),
            ("", "maxProperties"),
        ]
    )
    assert failures({"additionalProperties": {"type": "integer"}}, {"n": "x"}) == [("/n", "type")]


def test_array_string_and_number_bounds():
    assert failures({"items": {"type": "integer"}, "minItems": 3, "uniqueItems": True}, [1, "a", 1.0]) == [
        ("/1", "type"),
        ("", "uniqueItems"),
    ]
    assert failures({"maxLength": 2}, "Zü") == []  # code points, not bytes
    assert failures({"minLength": 3}, "Zü") == [("", "minLength")]
    assert failures({"minimum": 1, "exclusiveMaximum": 9}, 9) == [("", "exclusiveMaximum")]
    assert failures({"multipleOf": 0.1}, 0.3) == []  # exact decimal, not float arithmetic
    assert failures({"multipleOf": 0.1}, 0.35) == [("", "multipleOf")]


def test_pattern_is_checked_and_reported_approximate():
    report = check_value({"properties": {"c": {"pattern": "^[A-Z]{3}$"}}}, {"c": "usd"})
    assert [(f.pointer, f.keyword) for f in report.failures] == [("/c", "pattern")]
    assert report.approximate == ("/properties/c/pattern",)


def test_combinators():
    nullable = {"anyOf": [{"type": "string"}, {"type": "null"}]}
    assert failures(nullable, None) == [] and failures(nullable, 1) == [("", "anyOf")]
    assert failures({"oneOf": [{"type": "integer"}, {"type": "number"}]}, 1) == [("", "oneOf")]
    assert failures({"allOf": [{"minimum": 0}, {"maximum": 5}]}, 7) == [("", "maximum")]


def test_local_refs_resolve_and_recursive_refs_are_bounded():
    schema = {
        "$defs": {
            "node": {"type": "object", "properties": {"next": {"$ref": "#/$defs/node"}, "v": {"type": "integer"}}}
        },
        "$ref": "#/$defs/node",
    }
    deep: dict = {"v": 1}
    for _ in range(30):
        deep = {"next": deep, "v": 1}
    assert failures(schema, deep) == []
    assert failures(schema, {"next": {"next": {"v": "x"}}}) == [("/next/next/v", "type")]
    loop = check_value({"$ref": "#"}, 1)
    assert loop.failures == () and [n.keyword for n in loop.not_checked] == ["$ref"]
    mutual = check_value({"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}, "$ref": "#/$defs/a"}, 1)
    assert mutual.failures == () and mutual.not_checked


def test_exponential_schemas_are_bounded_by_the_step_budget():
    schema: dict = {"type": "integer"}
    for _ in range(40):
        schema = {"anyOf": [schema, schema]}  # 2**40 paths if evaluated naively
    report = check_value(schema, "x")
    assert any("evaluations" in n.reason or "deeper" in n.reason for n in report.not_checked)


def test_everything_not_evaluated_is_listed_as_not_checked():
    schema = {
        "type": "object",
        "format": "x",
        "not": {},
        "if": {},
        "then": {},
        "else": {},
        "patternProperties": {"^a": {}},
        "additionalProperties": False,
        "prefixItems": [],
        "unevaluatedProperties": False,
        "x-vendor": 1,
        "nullable": True,
        "properties": {
            "f": {"type": "float"},
            "d": {"type": "dict"},
            "format": {"type": "string"},
            "old": {"exclusiveMinimum": True},
            "r": {"$ref": "https://example.com/s.json"},
            "t": {"items": [{"type": "string"}]},
        },
        "title": "annotation",
        "description": "annotation",
        "default": {},
    }
    listed = set(not_checked(schema))
    assert {
        ("", k)
        for k in (
            "format",
            "not",
            "if",
            "then",
            "else",
            "patternProperties",
            "additionalProperties",
            "prefixItems",
            "unevaluatedProperties",
            "x-vendor",
            "nullable",
        )
    } <= listed
    assert {
        ("/properties/f", "type"),
        ("/properties/d", "type"),
        ("/properties/old", "exclusiveMinimum"),
        ("/properties/r", "$ref"),
        ("/properties/t", "items"),
    } <= listed
    assert ("/properties", "format") not in listed  # a property *named* format is not a keyword
    assert not any(k in ANNOTATIONS for _, k in listed)


def test_catastrophic_patterns_are_not_run():
    assert nested_quantifier("(a+)+$") and not nested_quantifier(r"^\d+(?:\.\d+)?$")
    report = check_value({"pattern": "^(a+)+$"}, "a" * 40 + "!")
    assert report.failures == () and [n.keyword for n in report.not_checked] == ["pattern"]


# ------------------------------------------------------------------ fuzzing

KEYWORDS = sorted(
    CHECKED | ANNOTATIONS | {"format", "not", "if", "x-a", "prefixItems", "patternProperties", "nullable"}
)
json_leaves = (
    st.none()
    | st.booleans()
    | st.integers(-(10**6), 10**6)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8)
)
json_values = st.recursive(
    json_leaves,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4),
    max_leaves=20,
)
schemas = st.recursive(
    json_leaves | st.sampled_from(["#", "#/$defs/a", "#/properties", "^(a|b)*$", "string", "integer", "dict"]),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.sampled_from(KEYWORDS) | st.text(max_size=4), inner, max_size=5)
    ),
    max_leaves=25,
)


@FUZZ
@given(schemas, json_values)
def test_never_crashes_and_pointers_are_json_pointers(schema, value):
    report = check_value(schema, value)
    for failure in report.failures:
        assert failure.pointer == "" or failure.pointer.startswith("/")
        assert failure.keyword and failure.message
    if isinstance(schema, dict):
        unknown = {k for k in schema if k not in CHECKED and k not in ANNOTATIONS}
        assert unknown <= {n.keyword for n in survey(schema).not_checked if n.schema_pointer == ""}


small_numbers = st.integers(-20, 20) | st.integers(-40, 40).map(lambda n: n / 2)
subset_leaves = st.none() | st.booleans() | small_numbers | st.text(alphabet="abZü", max_size=4)
subset_values = st.recursive(
    subset_leaves,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from("abc"), inner, max_size=3),
    max_leaves=10,
)
types = st.sampled_from(["null", "boolean", "object", "array", "number", "string", "integer"])


def _subset_schemas():
    def extend(inner):
        return st.fixed_dictionaries(
            {},
            optional={
                "type": types | st.lists(types, min_size=1, max_size=2, unique=True),
                "enum": st.lists(subset_leaves, min_size=1, max_size=3),
                "const": subset_leaves,
                "properties": st.dictionaries(st.sampled_from("abc"), inner, max_size=2),
                "required": st.lists(st.sampled_from("abc"), max_size=2, unique=True),
                "additionalProperties": st.booleans() | inner,
                "items": inner,
                "minItems": st.integers(0, 3),
                "maxItems": st.integers(0, 3),
                "uniqueItems": st.booleans(),
                "minLength": st.integers(0, 3),
                "maxLength": st.integers(0, 3),
                "minimum": st.integers(-5, 5),
                "maximum": st.integers(-5, 5),
                "exclusiveMinimum": st.integers(-5, 5),
                "exclusiveMaximum": st.integers(-5, 5),
                "multipleOf": st.integers(1, 4),
                "minProperties": st.integers(0, 2),
                "maxProperties": st.integers(0, 2),
                "anyOf": st.lists(inner, min_size=1, max_size=2),
                "oneOf": st.lists(inner, min_size=1, max_size=2),
                "allOf": st.lists(inner, min_size=1, max_size=2),
            },
        )

    return st.recursive(st.booleans() | st.just({}), extend, max_leaves=6)


@FUZZ
@given(_subset_schemas(), subset_values)
def test_agrees_with_jsonschema_on_the_checked_subset(schema, value):
    report = check_value(schema, value)
    assert report.not_checked == ()
    assert report.ok == jsonschema.Draft202012Validator(schema).is_valid(value), (schema, value, report.failures)

"""Pydantic validation errors turned into plain `Problem`s.

Callers can rely on: one `Problem` per wrong field (the per-member errors pydantic reports
for a union are merged), fields as dotted paths in the file's own spelling
(`scorer.pattern`, `input.messages[0].role`), and no pydantic jargon in the wording.
"""

from __future__ import annotations

import difflib
import json
import types
from pathlib import Path
from typing import Annotated, Any, Union, get_args, get_origin

from pydantic import BaseModel, ValidationError

from .errors import Problem
from .models import SCORER_KINDS

_EXPECTED_BY_TYPE = {
    "string_type": "a string",
    "int_type": "an integer",
    "int_parsing": "an integer",
    "int_from_float": "an integer",
    "float_type": "a number",
    "float_parsing": "a number",
    "bool_type": "true or false",
    "bool_parsing": "true or false",
    "list_type": "an array",
    "tuple_type": "an array",
    "dict_type": "{table}",
    "model_type": "{table}",
    "model_attributes_type": "{table}",
}


def kind_of(value: Any, syntax: str) -> str:
    """How a parsed value reads to someone who wrote it in TOML or JSON."""
    table = "a table" if syntax == "toml" else "an object"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true/false"
    for kind, name in ((int, "an integer"), (float, "a number"), (str, "a string")):
        if isinstance(value, kind):
            return name
    if isinstance(value, (list, tuple)):
        return "an array"
    if isinstance(value, dict):
        return table
    return f"a {type(value).__name__}"


def _show(value: Any, syntax: str) -> str:
    if isinstance(value, (str, int, float)) and not isinstance(value, bool):
        text = json.dumps(value, ensure_ascii=False) if isinstance(value, str) else repr(value)
        return text if len(text) <= 60 else text[:57] + "…"
    return kind_of(value, syntax)


# ------------------------------------------------------------ walking a loc through the models


def _strip(tp: Any) -> Any:
    while True:
        if get_origin(tp) is Annotated:
            tp = get_args(tp)[0]
        elif _union_members(tp) and len(_union_members(tp)) == 1:
            tp = _union_members(tp)[0]
        else:
            return tp


def _union_members(tp: Any) -> list[Any]:
    if get_origin(tp) in (Union, types.UnionType):
        return [m for m in get_args(tp) if m is not type(None)]
    return []


def _is_model(tp: Any) -> bool:
    return isinstance(tp, type) and issubclass(tp, BaseModel)


def _member_for(members: list[Any], label: Any) -> Any:
    # Pydantic labels a union member by its discriminator tag (`regex`) or by a type name
    # (`str`, `list[any]`, `dict[str,any]`); pick the member the label stands for.
    for member in members:
        m = _strip(member)
        if _is_model(m) and "kind" in m.model_fields:
            if get_args(m.model_fields["kind"].annotation) == (label,):
                return m
    name = str(label).split("[")[0].lower()
    for member in members:
        m = _strip(member)
        origin = get_origin(m) or m
        if getattr(origin, "__name__", "").lower() == name:
            return m
    return None


def _walk(model: type[BaseModel], loc: tuple[Any, ...]) -> tuple[list[Any], Any]:
    """The loc parts a user would recognise, and the type found at the end of `loc`."""
    shown: list[Any] = []
    tp: Any = model
    for part in loc:
        tp = _strip(tp) if tp is not None else None
        members = _union_members(tp)
        if members:  # the part is pydantic's label for a union member, not a key
            tp = _member_for(members, part)
            continue
        shown.append(part)
        if _is_model(tp):
            tp = next((f.annotation for n, f in tp.model_fields.items() if part in (n, f.alias)), None)
        elif get_origin(tp) in (list, tuple) and isinstance(part, int):
            tp = get_args(tp)[0] if get_args(tp) else None
        elif get_origin(tp) is dict and isinstance(part, str):
            tp = get_args(tp)[1] if get_args(tp) else None
        else:
            tp = None
    return shown, (_strip(tp) if tp is not None else None)


def show_key(key: Any) -> str:
    """A key as written in a field path: plain when it is a simple name, else JSON-quoted."""
    text = str(key)
    if text and text.isprintable() and not any(c in text for c in ' .[]"`'):
        return text
    return json.dumps(text, ensure_ascii=False)  # quotes it and escapes line breaks


def _quoted(key: Any) -> str:
    shown = show_key(key)
    return shown if shown.startswith('"') else f"`{shown}`"


def dotted(parts: list[Any]) -> str | None:
    """`["input", "messages", 0, "role"]` -> `input.messages[0].role`; [] -> None."""
    out = ""
    for part in parts:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{show_key(part)}" if out else show_key(part)
    return out or None


def allowed_fields(model: Any) -> list[str]:
    """The field names a model accepts, as a user writes them (aliases, not `schema_`)."""
    if not _is_model(model):
        return []
    return [f.alias or name for name, f in model.model_fields.items()]


# ------------------------------------------------------------ wording

_ONE_OF = "`text`, `json` or `tool_call`"


def _value_error(loc: tuple[Any, ...], text: str, given: Any) -> tuple[str, str]:
    if loc and loc[-1] == "pattern":
        fix = "write a valid Python regular expression (escape a literal `(`, `[`, `{` or `\\` with `\\`)"
        return text, fix
    if loc == ("expected",) and isinstance(given, dict):
        present = [f"`{k}`" for k in ("text", "json", "tool_call") if given.get(k) is not None]
        both = "both" if len(present) == 2 else "all"
        what = f"{' and '.join(present)} are {both} given" if present else f"none of {_ONE_OF} is given"
        fix = f"give exactly one of {_ONE_OF}: the answer your production model gives today"
        # A misspelt key (`texts`) is why none is given: name it, and what it was likely meant to be.
        for key in (str(k) for k in given if k not in ("text", "json", "tool_call")):
            close = difflib.get_close_matches(key, ("text", "json", "tool_call"), n=1)
            what += f"; unknown field `{key}`" + (f" (did you mean `{close[0]}`?)" if close else "")
        return what, fix
    if loc == ("input",) and isinstance(given, dict):
        if given.get("messages") == []:
            return "`messages` is empty", "add at least one message, or use `prompt` instead"
        if given.get("messages") is None:
            fix = "give `prompt` (with an optional `system`), or a `messages` list"
            return "neither `prompt` nor `messages` is given", fix
        return "both `messages` and `prompt`/`system` are given", "keep one of the two forms"
    return text, "correct the value"


def _one(err: dict[str, Any], model: type[BaseModel], syntax: str) -> tuple[str | None, str, str]:
    kind, loc, given, ctx = err["type"], tuple(err["loc"]), err.get("input"), err.get("ctx") or {}
    shown, _ = _walk(model, loc)
    field = dotted(shown)
    table = "a table" if syntax == "toml" else "an object"
    if kind == "extra_forbidden":
        _, parent = _walk(model, loc[:-1])
        names = allowed_fields(parent)
        listed = f"; allowed fields are {', '.join(names)}" if names else ""
        return field, f"unknown field {_quoted(loc[-1])}{listed}", "remove it or correct its spelling"
    if kind == "missing":
        where = f" to `{dotted(shown[:-1])}`" if len(shown) > 1 else ""
        return field, f"missing required field `{loc[-1]}`", f"add `{loc[-1]}`{where}"
    if kind == "union_tag_invalid":
        kinds = ", ".join(SCORER_KINDS)
        what = f"unknown scorer kind {_show(ctx.get('tag'), syntax)}; the six kinds are {kinds}"
        return dotted(shown + ["kind"]), what, "set `kind` to one of them"
    if kind == "union_tag_not_found":
        kinds = ", ".join(SCORER_KINDS)
        return dotted(shown + ["kind"]), "missing `kind`", f"add `kind`, one of {kinds}"
    if kind in _EXPECTED_BY_TYPE:
        want = _EXPECTED_BY_TYPE[kind].format(table=table)
        fix = f"write it as {want}"
        if want == "a string" and isinstance(given, (int, float)) and not isinstance(given, bool):
            fix = "put the value in quotes"
        return field, f"expected {want}, got {_show(given, syntax)}", fix
    if kind == "string_pattern_mismatch" and loc and loc[-1] in ("id", "workload_id"):
        fix = "use 1 to 128 letters, digits, `.`, `_` or `-`, starting with a letter or digit"
        return field, f"{_show(given, syntax)} is not a valid id", fix
    if kind == "literal_error":
        expected = ctx.get("expected", "")
        return field, f"{_show(given, syntax)} is not allowed here", f"use one of {expected}"
    if kind in ("too_short", "string_too_short") and ctx.get("min_length") == 1:
        unit = "character" if "string" in kind else "item"
        return field, "must not be empty", f"give at least one {unit}"
    if kind in ("value_error", "assertion_error"):
        text = str(err.get("msg", "")).removeprefix("Value error, ").removeprefix("Assertion failed, ")
        message, fix = _value_error(loc, text, given)
        return field, message, fix
    said = str(err.get("msg", "is not valid")).replace("Input should", "should")
    return field, f"{said} (got {_show(given, syntax)})", "correct the value"


def problems_from_validation(exc: ValidationError, file: Path, model: type[BaseModel], syntax: str) -> list[Problem]:
    """One `Problem` per wrong field of `file`, validated as `model` from `syntax` (toml|json)."""
    merged: dict[str | None, tuple[str, str]] = {}
    for err in exc.errors(include_url=False):
        field, message, fix = _one(dict(err), model, syntax)
        if field in merged:
            # A union reports one error per member: "expected a string, got …" and
            # "expected an array, got …" become "expected a string or an array, got …".
            old = merged[field][0]
            if old.startswith("expected ") and message.startswith("expected "):
                want_old, _, got = old.removeprefix("expected ").partition(", got ")
                want_new = message.removeprefix("expected ").partition(", got ")[0]
                merged[field] = (f"expected {want_old} or {want_new}, got {got}", "write it as one of those")
            continue
        merged[field] = (message, fix)
    return [Problem(file, field, message, fix) for field, (message, fix) in merged.items()]

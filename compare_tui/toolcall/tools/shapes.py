"""Check a user's tool schemas for shapes servers refuse, before anything is sent.

A tool whose `parameters` are not an object schema, or that uses a type name JSON Schema does
not define (BFCL's `"dict"`, `"float"`, `"tuple"`, `"any"`), makes servers refuse the whole
request: llama.cpp cannot build its tool-call grammar from it (HTTP 400 "Unable to generate
parser for this template … unrecognized type dict") and OpenAI refuses the schema. Such a
refusal is *unsupported* (the server refused the request shape), and every scenario that
offers the tool meets it, so the notes are printed with the run and `--skip-invalid-tools`
leaves such tools out. Names outside OpenAI's pattern are sent renamed (`names.py`), which is
noted but not refused. Pure.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Protocol

from compare_tui.toolcall.schema.survey import survey

_BFCL_TYPES = {"dict": "object", "float": "number", "tuple": "array", "any": "string"}


class _Tool(Protocol):
    @property
    def name(self) -> str: ...
    @property
    def parameters(self) -> dict[str, Any]: ...


@dataclass(frozen=True, slots=True)
class ShapeNote:
    """One thing about a tool's schema a server may refuse. `refused`: servers are known to
    refuse a request that offers the tool (not only this scenario's)."""

    tool: str
    """The tool's name as the user wrote it."""
    text: str
    refused: bool = True

    def __str__(self) -> str:
        return f"tool {self.tool!r}: {self.text}"


def shape_notes(tool: _Tool) -> list[ShapeNote]:
    """What in `tool`'s parameters schema servers refuse, in schema order."""
    out: list[ShapeNote] = []
    kind = tool.parameters.get("type", "object")
    if kind != "object":
        out.append(
            ShapeNote(
                tool.name,
                f"its parameters schema is of type {kind!r}, not object: servers such as OpenAI's refuse "
                "a tool whose arguments are not a JSON object",
            )
        )
    for item in survey(tool.parameters).not_checked:
        if item.odd_type is not None:
            odd = item.odd_type
            fix = f" (BFCL's {odd!r} is JSON Schema's {_BFCL_TYPES[odd]!r})" if odd in _BFCL_TYPES else ""
            out.append(
                ShapeNote(
                    tool.name,
                    f"unknown type {odd!r} at {item.schema_pointer or '/'}: JSON Schema has no such type and "
                    f"servers refuse it (llama.cpp cannot build its tool-call grammar){fix}",
                )
            )
    return out


def refused_tools(tools: Iterable[_Tool]) -> dict[str, str]:
    """Tool name → the first reason servers refuse it, for the tools that have one."""
    out: dict[str, str] = {}
    for tool in tools:
        notes = [n for n in shape_notes(tool) if n.refused]
        if notes:
            out[tool.name] = notes[0].text
    return out


def responsible(tools: Iterable[_Tool], server_message: str | None, wire_names: dict[str, str]) -> str | None:
    """The tool a refusal of a request offering `tools` can be put down to, in words, or None
    when it cannot be told: the one offered tool whose shape servers refuse, else the one
    offered tool the server's message names (`wire_names`: original → as sent)."""
    tools = list(tools)
    refused = refused_tools(tools)
    if len(refused) == 1:
        name, why = next(iter(refused.items()))
        return f"tool {name!r}: {why}"
    message = server_message or ""
    named = [t.name for t in tools if wire_names.get(t.name, t.name) in message]
    if len(named) == 1:
        return f"tool {named[0]!r} (named in the server's message)"
    if refused:
        return "tools " + ", ".join(repr(n) for n in refused) + " (each has a schema servers refuse)"
    return None

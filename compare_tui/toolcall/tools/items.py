"""Recognise the shape of each JSON document in a tools file and normalise every tool in it.

Split from `file.py` (which does the bounding, decoding and final checks) so that the
shape rules read in one place. Every function returns problems instead of raising, so one
run reports all of them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

NO_PARAMETERS = {"type": "object", "properties": {}}
"""What a tool without a `parameters` schema is sent with."""


@dataclass(frozen=True, slots=True)
class ItemProblem:
    where: str
    message: str

    def __str__(self) -> str:
        return f"{self.where}: {self.message}" if self.where else self.message


@dataclass(slots=True)
class UserToolDraft:
    name: str
    description: str
    parameters: dict[str, Any]
    source: str
    where: str
    extras: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def documents_items(documents: list[Any]) -> tuple[list[UserToolDraft], list[ItemProblem], str]:
    """All tools in all documents, the problems found, and a phrase naming the shape."""
    drafts: list[UserToolDraft] = []
    problems: list[ItemProblem] = []
    shapes: list[tuple[str, str]] = []  # (shape phrase, the page it came from)
    for number, document in enumerate(documents, 1):
        where = f"document {number}" if len(documents) > 1 else ""
        for item, item_where, kind, shape, page in _items(document, where, problems, nested=False):
            shapes.append((shape, page))
            draft = _tool(item, item_where, kind, problems)
            if draft is not None:
                drafts.append(draft)
    label = ", ".join(dict.fromkeys(s for s, _ in shapes)) or "nothing recognised"
    pages = len({page for _, page in shapes})
    if pages > 1:
        label += f" ({pages} pages)"
    return drafts, problems, label


def _at(where: str, key: str | int) -> str:
    step = f"[{key}]" if isinstance(key, int) else (f".{key}" if where else key)
    return f"{where}{step}" if where else step


def _items(doc: Any, where: str, problems: list[ItemProblem], *, nested: bool) -> list[tuple[Any, str, str, str, str]]:
    """(item, where, kind hint, shape phrase, page) for each tool a document holds."""
    if isinstance(doc, list):
        out = []
        for index, element in enumerate(doc):
            here = _at(where, index)
            if not nested and isinstance(element, dict) and _is_page(element):
                out += _items(element, here, problems, nested=True)  # several saved pages
            else:
                out.append((element, here, "auto", "a bare array of tools", where))
        return out
    if not isinstance(doc, dict):
        problems.append(ItemProblem(where, f"expected a JSON object or array, found {_kind(doc)}"))
        return []
    if "error" in doc and ("jsonrpc" in doc or "id" in doc):
        error = doc["error"]
        message = error.get("message") if isinstance(error, dict) else error
        problems.append(
            ItemProblem(where, f"this is a JSON-RPC error response ({str(message)[:200]!r}), not a tools/list result")
        )
        return []
    if "result" in doc and ("jsonrpc" in doc or "id" in doc):
        result = doc["result"]
        if not isinstance(result, dict) or not isinstance(result.get("tools"), list):
            problems.append(
                ItemProblem(_at(where, "result"), "expected an MCP tools/list result: an object with a tools array")
            )
            return []
        return [
            (t, _at(_at(_at(where, "result"), "tools"), i), "mcp", "MCP tools/list response", where)
            for i, t in enumerate(result["tools"])
        ]
    for key, kind, shape in (("tools", "auto", "a tools array"), ("functions", "legacy", "legacy functions")):
        if key in doc:
            if not isinstance(doc[key], list):
                problems.append(ItemProblem(_at(where, key), "expected an array"))
                return []
            if key == "tools" and (
                "nextCursor" in doc or any(isinstance(t, dict) and "inputSchema" in t for t in doc[key])
            ):
                shape = "MCP tools/list result"
            return [(t, _at(_at(where, key), i), kind, shape, where) for i, t in enumerate(doc[key])]
    if "name" in doc or "function" in doc:
        return [(doc, where, "auto", "a single tool object", where)]
    problems.append(
        ItemProblem(
            where,
            'not a recognised shape: expected {"tools": [...]}, {"functions": [...]}, '
            "an MCP tools/list response or result, or an array of tools",
        )
    )
    return []


def _is_page(element: dict[str, Any]) -> bool:
    return "result" in element or "jsonrpc" in element or ("tools" in element and "name" not in element)


def _kind(value: Any) -> str:
    return {dict: "an object", list: "an array", str: "a string", bool: "a boolean", type(None): "null"}.get(
        type(value), "a number"
    )


def _tool(item: Any, where: str, kind: str, problems: list[ItemProblem]) -> UserToolDraft | None:
    """One tool normalised to name, description and parameters; None after a problem."""
    if not isinstance(item, dict):
        problems.append(ItemProblem(where, f"expected a tool object, found {_kind(item)}"))
        return None
    source = kind
    body = item
    if "function" in item or item.get("type") is not None:
        if item.get("type") != "function" or not isinstance(item.get("function"), dict):
            problems.append(
                ItemProblem(
                    where,
                    f"only function tools can be tested (type {str(item.get('type'))[:40]!r}); "
                    'expected {"type": "function", "function": {...}}',
                )
            )
            return None
        body, where, source = item["function"], _at(where, "function"), "openai"
    elif "inputSchema" in item or kind == "mcp":
        source = "mcp"
    elif source == "auto":
        source = "function"
    name = body.get("name")
    if not isinstance(name, str) or not name:
        problems.append(ItemProblem(_at(where, "name"), "every tool needs a non-empty string name"))
        return None
    schema_key = "inputSchema" if source == "mcp" else "parameters"
    parameters = body.get(schema_key)
    draft = UserToolDraft(name, "", dict(NO_PARAMETERS), source, where)
    if parameters is None:
        if source == "mcp":
            problems.append(
                ItemProblem(_at(where, schema_key), f"tool {name!r}: MCP requires an inputSchema object (never null)")
            )
            return None
    elif not isinstance(parameters, dict):
        problems.append(
            ItemProblem(
                _at(where, schema_key), f"tool {name!r}: expected a JSON Schema object, found {_kind(parameters)}"
            )
        )
        return None
    else:
        draft.parameters = parameters  # shapes servers refuse are noted by `shapes`
    description = body.get("description")
    if description is None and source == "mcp":
        description = body.get("title")  # MCP: description ?? title
    if description is not None and not isinstance(description, str):
        problems.append(ItemProblem(_at(where, "description"), f"tool {name!r}: expected a string"))
        return None
    draft.description = description or ""
    if source == "mcp":
        draft.extras = {k: body[k] for k in ("title", "annotations", "outputSchema") if k in body}
    if body.get("strict") is True:
        draft.notes.append(
            f"tool {name!r}: strict: true is not sent (structured-output opt-in changes what is measured)"
        )
    return draft

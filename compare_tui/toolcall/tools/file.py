"""Read a user's tool definitions: OpenAI function JSON or MCP `tools/list` output.

Accepted (reference notes, "Mapping MCP tools/list to OpenAI tools"): a `tools` array of
OpenAI tools, bare `{name, description, parameters}` objects, legacy `{"functions": [...]}`,
an MCP `tools/list` JSON-RPC response, its bare `result`, a bare array of MCP tools, or
several saved pages (a JSON array of them, or one JSON document after another). The file
is read as schemas only: no MCP server is contacted and no tool is run.

Hostile input is bounded before it is parsed (size cap, nesting depth scanned without
recursion, tool count), and every problem is reported with where it is and what to do.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from compare_tui.errors import CompareTuiError
from compare_tui.scoring.json_values import STRICT_DECODER
from compare_tui.toolcall.schema.json_values import MAX_DEPTH, nesting_depth
from compare_tui.toolcall.tools.items import ItemProblem, UserToolDraft, documents_items
from compare_tui.toolcall.tools.names import NameMap, map_names
from compare_tui.toolcall.tools.shapes import refused_tools, shape_notes

MAX_FILE_BYTES = 4 * 1024 * 1024
MAX_TOOLS = 128
"""OpenAI's own limit on tools per request."""
MAX_DOCUMENTS = 100


class ToolsFileError(CompareTuiError, ValueError):
    """The tools file cannot be used; the message names the file, the place and the fix."""


@dataclass(frozen=True, slots=True)
class UserTool:
    """One tool from the file. `name` is the original; `wire_name` what requests carry."""

    name: str
    wire_name: str
    description: str
    parameters: dict[str, Any]
    source: str
    """"openai", "function", "legacy" or "mcp"."""
    extras: dict[str, Any] = field(default_factory=dict)
    """MCP fields kept for the report, never sent: title, annotations, outputSchema."""


@dataclass(frozen=True, slots=True)
class ToolsFile:
    path: str
    digest: str
    shape: str
    tools: tuple[UserTool, ...]
    names: NameMap
    notes: tuple[str, ...] = ()
    """What to know before sending: renamed tools, fields not sent, and schema shapes servers
    refuse (`shapes`); printed with every run and by `toolcall list`."""

    @property
    def refused(self) -> dict[str, str]:
        """Tool name → why servers refuse a request offering it (`shapes.refused_tools`)."""
        return refused_tools(self.tools)


def read_tools_file(path: str | Path) -> ToolsFile:
    """Read and check the tools file at `path`; `ToolsFileError` with every problem found."""
    source = Path(path)
    try:
        size = source.stat().st_size
        if size > MAX_FILE_BYTES:
            raise ToolsFileError(
                f"{source}: the file is {size / 1048576:.1f} MiB; the limit is {MAX_FILE_BYTES // 1048576} MiB. "
                "Save only the tools/list output (or split it into smaller files)"
            )
        data = source.read_bytes()
    except OSError as exc:
        raise ToolsFileError(f"{source}: cannot be read: {exc.strerror or exc}") from None
    return parse_tools_bytes(data, str(source))


def parse_tools_bytes(data: bytes, where: str = "<tools>") -> ToolsFile:
    """The same checks as `read_tools_file`, on bytes already read."""
    if len(data) > MAX_FILE_BYTES:
        raise ToolsFileError(f"{where}: {len(data)} bytes; the limit is {MAX_FILE_BYTES} bytes")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ToolsFileError(f"{where}: not UTF-8 text (byte {exc.start}); save the file as UTF-8 JSON") from None
    depth = nesting_depth(text)
    if depth > MAX_DEPTH:
        raise ToolsFileError(
            f"{where}: JSON nested {depth} levels deep; the limit is {MAX_DEPTH}. "
            "Real tool schemas are far shallower: is this the right file?"
        )
    documents = _documents(text, where)
    drafts, problems, shape = documents_items(documents)
    tools, more = _finish(drafts)
    problems += more
    if not problems and not tools:
        problems.append(
            ItemProblem("", "no tools found: expected a tools array, functions, or an MCP tools/list result")
        )
    if problems:
        shown = "\n".join(f"  - {p}" for p in problems[:20])
        extra = f"\n  … and {len(problems) - 20} more" if len(problems) > 20 else ""
        raise ToolsFileError(f"{where}: {len(problems)} problem(s):\n{shown}{extra}")
    names = map_names(t.name for t in tools)
    final = tuple(
        UserTool(t.name, names.to_wire[t.name], t.description, t.parameters, t.source, t.extras) for t in tools
    )
    notes = [
        f"tool {o!r} is sent as {w!r} (OpenAI names allow only a-z A-Z 0-9 _ -, 64 at most)"
        for o, w in names.renamed.items()
    ]
    notes += [n for t in tools for n in t.notes]
    notes += [str(note) for t in final for note in shape_notes(t)]
    return ToolsFile(where, "sha256:" + hashlib.sha256(data).hexdigest(), shape, final, names, tuple(notes))


def _documents(text: str, where: str) -> list[Any]:
    """Every JSON document in `text`: one, or several one after another (saved pages, JSONL)."""
    decoder = STRICT_DECODER
    documents: list[Any] = []
    position = 0
    while True:
        while position < len(text) and text[position] in " \t\r\n":
            position += 1
        if position >= len(text):
            break
        if len(documents) >= MAX_DOCUMENTS:
            raise ToolsFileError(f"{where}: more than {MAX_DOCUMENTS} JSON documents; merge the pages into fewer files")
        try:
            document, position = decoder.raw_decode(text, position)
        except RecursionError:  # pragma: no cover - the depth scan rules this out
            raise ToolsFileError(f"{where}: JSON nested too deeply") from None
        except ValueError as exc:
            line = text.count("\n", 0, getattr(exc, "pos", position)) + 1
            raise ToolsFileError(f"{where}: not valid JSON (line {line}): {getattr(exc, 'msg', exc)}") from None
        documents.append(document)
    if not documents:
        raise ToolsFileError(f"{where}: the file is empty; expected OpenAI tools JSON or an MCP tools/list result")
    return documents


def _finish(drafts: list[UserToolDraft]) -> tuple[list[UserToolDraft], list[ItemProblem]]:
    """Drop exact duplicates (pages saved twice); refuse clashing ones; cap the count."""
    kept: dict[str, UserToolDraft] = {}
    problems: list[ItemProblem] = []
    for draft in drafts:
        earlier = kept.get(draft.name)
        if earlier is None:
            kept[draft.name] = draft
        elif (earlier.description, earlier.parameters) != (draft.description, draft.parameters):
            problems.append(
                ItemProblem(
                    draft.where,
                    f"tool name {draft.name!r} is defined again, differently, "
                    f"after {earlier.where}; names must be unique",
                )
            )
    if len(kept) > MAX_TOOLS:
        problems.append(
            ItemProblem(
                "",
                f"{len(kept)} tools; the limit is {MAX_TOOLS} (OpenAI's limit per request). "
                "Split the file and run each part",
            )
        )
    return list(kept.values()), problems

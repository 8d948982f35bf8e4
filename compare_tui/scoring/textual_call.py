"""A tool call written as text: the model meant to call a tool, but the call came back as the
answer's *content* (a JSON object with `name` and `arguments`, maybe in a code fence or inside
`<tool_call>` tags the server did not parse) instead of a structured `tool_calls` entry.

That is a finding about the serving stack as much as the model (the chat template or the
server's tool parser did not turn the text into a call), so the `tool_call` scorer and the
tool-call suite name it apart from "no tool call". Pure.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

from compare_tui.scoring.result import ToolCall

ADVICE = "the server did not parse it: check the chat template and the server's tool parser"
_TRAILER = re.compile(r"(?:\s*(?:```|</tool_call>))+\s*$")
"""A closing code fence or tag after a call cut short: dropped before closing the braces."""
_DECODER = json.JSONDecoder()
_MAX_STARTS = 64
"""Objects looked at per answer: a tool call is near the start; long prose is not searched whole."""


def written_as_text(content: str | None, tool_names: Iterable[str]) -> ToolCall | None:
    """The first call of a declared tool written as JSON text in `content`, or None.

    Looks at each `{` in turn for a JSON object `{"name": <declared tool>, "arguments": {...}}`
    (arguments may also be `parameters`, or a JSON string); text around it is allowed, and an
    object cut short of its last one or two closing braces at the end of the answer is closed.
    """
    if not content or "{" not in content:
        return None
    names = set(tool_names)
    # Fences and tags lie outside the JSON, so each `{` is decoded in the content as it is
    # (removing them everywhere would also change a string inside the call that holds them).
    starts = [i for i, ch in enumerate(content) if ch == "{"][:_MAX_STARTS]
    for start in starts:
        call = _as_call(_decode(content, start), names)
        if call is not None:
            return call
    # Small models often stop one or two braces short at the end of the answer (seen from
    # Qwen2.5-Coder 0.5B): the intent is still plain, so close the object and look again.
    tail = _TRAILER.sub("", content).rstrip()
    for start in starts:
        for closing in ("}", "}}"):
            call = _as_call(_decode(tail + closing, start), names)
            if call is not None:
                return call
    return None


def _decode(text: str, start: int) -> Any:
    try:
        return _DECODER.raw_decode(text, start)[0]
    except ValueError:
        return None


def _as_call(value: Any, names: set[str]) -> ToolCall | None:
    if not isinstance(value, dict) or value.get("name") not in names:
        return None
    arguments = value.get("arguments", value.get("parameters"))
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except ValueError:
            return None
    if not isinstance(arguments, dict):
        return None
    return ToolCall(str(value["name"]), json.dumps(arguments, ensure_ascii=False))

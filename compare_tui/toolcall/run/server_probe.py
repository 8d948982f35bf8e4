"""Ask a server what it says about itself, where it says anything (llama.cpp's `/props`).

Recorded as "reported by the server", never used to decide an outcome: it explains one.
llama.cpp accepts tools for a chat template that cannot show them and silently drops them;
its `/props` then says `supports_tools: false`, which turns a puzzling column of fails into
an explained one. Endpoints without `/props` (vLLM, hosted APIs) simply give no notes.
"""

from __future__ import annotations

import asyncio
import re
from typing import Any

from compare_tui.endpoint.props import PropsUnavailable, fetch_props

_CAP = re.compile(
    r"['\"]?(supports_tools|supports_tool_calls|supports_parallel_tool_calls)['\"]?\s*:\s*(true|false)", re.I
)


def template_caps(props: dict[str, Any]) -> dict[str, bool]:
    """The tool capabilities in `chat_template_caps` (a dict, or the string form some builds send)."""
    caps = props.get("chat_template_caps")
    if isinstance(caps, dict):
        return {k: bool(v) for k, v in caps.items() if k.startswith("supports_") and "tool" in k}
    if isinstance(caps, str):
        return {m.group(1): m.group(2).lower() == "true" for m in _CAP.finditer(caps)}
    return {}


def notes_from_props(props: dict[str, Any]) -> list[str]:
    """Plain-words notes from a `/props` body."""
    notes = []
    if isinstance(props.get("build_info"), str):
        notes.append(f"llama.cpp build {props['build_info'][:60]}")
    caps = template_caps(props)
    if caps.get("supports_tools") is False or caps.get("supports_tool_calls") is False:
        notes.append(
            "llama.cpp says the model's chat template does not support tools "
            f"({', '.join(f'{k}={v}' for k, v in sorted(caps.items()))}): tool definitions may never "
            "reach the model, so calls are not expected to appear"
        )
    elif caps:
        notes.append("llama.cpp chat template capabilities: " + ", ".join(f"{k}={v}" for k, v in sorted(caps.items())))
    return notes


async def probe(endpoint: str, headers: dict[str, str] | None = None) -> list[str]:
    """Notes from the server's own description; empty when it offers none (never raises)."""
    try:
        body = await asyncio.to_thread(fetch_props, endpoint, headers=headers, timeout_s=3.0)
    except PropsUnavailable:
        return []
    return notes_from_props(body)

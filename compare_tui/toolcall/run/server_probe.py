"""Ask a server what it says about itself, where it says anything (llama.cpp's `/props`).

Recorded as "reported by the server", never used to decide an outcome: it explains one.
llama.cpp accepts tools for a chat template that cannot show them and silently drops them;
its `/props` then says `supports_tools: false`, which turns a puzzling column of fails into
an explained one. Endpoints without `/props` (vLLM, hosted APIs) simply give no notes.
"""

from __future__ import annotations

import asyncio
from typing import Any

from compare_tui.endpoint.account import LlamaProps
from compare_tui.endpoint.props import PropsUnavailable, fetch_props


def notes_from_props(props: LlamaProps | dict[str, Any]) -> list[str]:
    """Plain-words notes from a `/props` answer (typed, or a body `LlamaProps.parse` reads)."""
    typed = props if isinstance(props, LlamaProps) else LlamaProps.parse(props) or LlamaProps()
    notes = []
    if typed.build_info:
        notes.append(f"llama.cpp build {typed.build_info[:60]}")
    caps = typed.caps
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

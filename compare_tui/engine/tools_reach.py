"""Whether the tools a request offers reach the model's prompt, as the server renders it.

A chat template without tool support renders the same prompt with or without `tools`: the
server accepts the request and the model never sees the tools, so "expected a call, got none"
is the template's doing, not the model's. Both stacks can be asked without generating a
token: llama.cpp renders a request's prompt at `POST /apply-template` (its `prompt` text), and
vLLM tokenizes one at `POST /tokenize` (its `count`). The same one-message request is rendered
with and without the tools; equal renderings mean the tools were dropped. Any other server, or
an answer of another shape, leaves it unchecked (None), never guessed.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypedDict

import httpx

from compare_tui.endpoint import Endpoint
from compare_tui.endpoint.client import probe_client

TIMEOUT_S = 5.0
_MESSAGES = [{"role": "user", "content": "ping"}]


class ToolsReachEntry(TypedDict):
    """`ToolsReach` as the run environment stores it (`tools_reach`)."""

    reached: bool
    how: str


@dataclass(frozen=True, slots=True)
class ToolsReach:
    """What the server's rendering of a prompt showed."""

    reached: bool
    how: str
    """Which request showed it and the two sizes, e.g. `llama.cpp POST /apply-template: 1,184
    characters with the tools, 61 without`."""

    def as_dict(self) -> ToolsReachEntry:
        return {"reached": self.reached, "how": self.how}


def _llama(client: httpx.Client, at: Endpoint, tools: Sequence[Mapping[str, Any]]) -> ToolsReach | None:
    sizes = []
    for body in ({"messages": _MESSAGES, "tools": list(tools)}, {"messages": _MESSAGES}):
        answer = client.post(at.beside("apply-template"), json=body)
        prompt = answer.json().get("prompt") if answer.status_code == 200 else None
        if not isinstance(prompt, str):
            return None
        sizes.append(len(prompt))
    return ToolsReach(
        sizes[0] > sizes[1],
        f"llama.cpp POST /apply-template: {sizes[0]:,} characters with the tools, {sizes[1]:,} without",
    )


def _vllm(client: httpx.Client, at: Endpoint, model: str, tools: Sequence[Mapping[str, Any]]) -> ToolsReach | None:
    counts = []
    for body in (
        {"model": model, "messages": _MESSAGES, "tools": list(tools)},
        {"model": model, "messages": _MESSAGES},
    ):
        answer = client.post(at.beside("tokenize"), json=body)
        count = answer.json().get("count") if answer.status_code == 200 else None
        if not isinstance(count, int):
            return None
        counts.append(count)
    return ToolsReach(
        counts[0] > counts[1], f"vLLM POST /tokenize: {counts[0]:,} prompt tokens with the tools, {counts[1]:,} without"
    )


def tools_reach_now(
    endpoint: str, model: str, tools: Sequence[Mapping[str, Any]], headers: Mapping[str, str] | None = None
) -> ToolsReach | None:
    """Ask the server (llama.cpp first, then vLLM); None when neither answers. Never raises."""
    if not tools:
        return None
    at = Endpoint(endpoint)
    try:
        with probe_client(timeout_s=TIMEOUT_S, headers=headers) as client:
            return _llama(client, at, tools) or _vllm(client, at, model, tools)
    except (httpx.HTTPError, ValueError):
        return None


async def tools_reach(
    endpoint: str, model: str, tools: Sequence[Mapping[str, Any]], headers: Mapping[str, str] | None = None
) -> ToolsReach | None:
    """`tools_reach_now` off the event loop."""
    return await asyncio.to_thread(tools_reach_now, endpoint, model, tools, headers)

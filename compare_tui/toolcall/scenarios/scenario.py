"""A scenario: one request shape sent to a model, and what its answer must satisfy.

Official scenarios come from the versioned data files in `suite/`; scenarios for a user's
own tools are built by `user_tools.py`. Both are the same frozen type, so the runner and the
checks never need to know where a scenario came from.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

OMITTED = "omitted"
"""`Scenario.tool_choice_form` when the request carries no `tool_choice` field at all."""


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """One tool offered to the model. `wire_name` is what is sent (it fits OpenAI's name
    pattern); `name` is what the user calls it and what results report."""

    name: str
    wire_name: str
    description: str
    parameters: dict[str, Any]

    def as_openai(self) -> dict[str, Any]:
        """The `tools[]` entry sent in a request."""
        function: dict[str, Any] = {"name": self.wire_name, "parameters": copy.deepcopy(self.parameters)}
        if self.description:
            function["description"] = self.description
        return {"type": "function", "function": function}


@dataclass(frozen=True, slots=True)
class CallPattern:
    """An expected call: a tool name and a matcher per argument (see `checks/expectations.py`).
    `args` None: values not compared; `{}`: the call must have no arguments."""

    name: str
    args: dict[str, dict[str, Any]] | None = None


@dataclass(frozen=True, slots=True)
class Expectation:
    """What the answer must show for the scenario to pass, beyond the universal checks."""

    refused: bool = False
    """The request is invalid: a 4xx is the pass, a 200 the fail (S17)."""
    http_error_is_fail: bool = False
    """A reasoned non-200 (400/422/500 with a message) is the model-plus-template failing, not
    a transport problem (multi-turn scenarios: a template that cannot render the history)."""
    min_calls: int | None = None
    max_calls: int | None = None
    match: tuple[CallPattern, ...] = ()
    """Each pattern must be met by a distinct call, in any order."""
    content_not_empty: bool = False
    text_contains: tuple[str, ...] = ()
    not_repeated: tuple[CallPattern, ...] = ()
    """Calls that must not be made again (their result is already in the history)."""


@dataclass(frozen=True, slots=True)
class Scenario:
    """One request and its expectation. `tool_choice` is None when the field is omitted."""

    id: str
    name: str
    category: str
    title: str
    tools: tuple[ToolSpec, ...]
    messages: tuple[dict[str, Any], ...]
    expect: Expectation
    tool_choice: Any = None
    parallel_tool_calls: bool | None = None
    stream: bool = False
    catches: str = ""
    user_tools: bool = False
    """True for scenarios built from a user's tools file (never publishable)."""

    @property
    def tool_choice_form(self) -> str:
        """`auto`, `none`, `required`, `named` or `omitted`, for tables and filters."""
        if self.tool_choice is None:
            return OMITTED
        if isinstance(self.tool_choice, dict):
            return "named"
        return str(self.tool_choice)

    def wire_to_name(self) -> dict[str, str]:
        """Offered wire names mapped back to the names users know."""
        return {tool.wire_name: tool.name for tool in self.tools}

    def request_body(self, model: str, *, max_tokens: int, temperature: float) -> dict[str, Any]:
        """The chat-completion request. `n` is always 1; `stream` always stated."""
        body: dict[str, Any] = {
            "model": model,
            "messages": copy.deepcopy(list(self.messages)),
            "temperature": temperature,
            "n": 1,
            "max_tokens": max_tokens,
            "stream": self.stream,
        }
        if self.tools:
            body["tools"] = [tool.as_openai() for tool in self.tools]
        if self.tool_choice is not None:
            body["tool_choice"] = copy.deepcopy(self.tool_choice)
        if self.parallel_tool_calls is not None:
            body["parallel_tool_calls"] = self.parallel_tool_calls
        if self.stream:
            # Asking for usage makes the server send the `choices: []` chunk that rule 6 of
            # the assembly rules says a client must tolerate.
            body["stream_options"] = {"include_usage": True}
        return body

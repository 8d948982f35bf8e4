"""What a scorer decides about one answer, and the answer it decides about."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from compare_tui.vocabulary import Outcome

__all__ = ["Answer", "Outcome", "ScoreResult", "ToolCall"]


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One tool call as the model made it. `arguments` is the raw JSON text the model sent."""

    name: str
    arguments: str
    id: str | None = None

    def parsed_arguments(self) -> Any:
        """The arguments decoded from JSON; raises `ValueError` when they are not JSON."""
        return json.loads(self.arguments) if self.arguments.strip() else {}

    def canonical(self) -> str:
        """`[tool call] name(args)` with arguments as compact, key-sorted JSON when they parse."""
        try:
            args = json.dumps(self.parsed_arguments(), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        except ValueError:
            args = self.arguments
        return f"[tool call] {self.name}({args})"


@dataclass(frozen=True, slots=True)
class Answer:
    """What a model returned for one attempt: its text, its tool calls, and any reasoning trace."""

    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    reasoning: str | None = None

    def rendered(self) -> str:
        """The answer as a person reads it: text, then each tool call in canonical form."""
        parts = [self.text] if self.text else []
        parts.extend(call.canonical() for call in self.tool_calls)
        return "\n".join(parts)


@dataclass(frozen=True, slots=True)
class ScoreResult:
    """A scorer's decision: the outcome, a one-line human reason, and structured detail.

    `isolation` is set only by the `command` scorer: which sandbox isolations were in force.
    """

    outcome: Outcome
    detail: str
    data: dict[str, Any] = field(default_factory=dict)
    isolation: dict[str, bool | str] | None = None

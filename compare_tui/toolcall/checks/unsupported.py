"""Tell a server that refuses a request *shape* (unsupported) from one that failed (error).

Reference notes (b): match the message text, never the status, because llama.cpp answers
a configuration refusal with 500 while vLLM uses 400. Signatures are the exact messages the
servers' sources produce; a heuristic catches reworded ones and says it is unconfirmed.
Unsupported is about the serving setup, not the model.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

from compare_tui.engine.exchange import RawExchange
from compare_tui.vocabulary import HTTP_STATUS_CLASSES, ErrorClass

UNSUPPORTED_MEANS = (
    "unsupported: the server refused this request shape; that describes the serving setup "
    "(server, flags, chat template), not the model"
)


@dataclass(frozen=True, slots=True)
class Signature:
    server: str
    pattern: re.Pattern[str]
    meaning: str


def _sig(server: str, pattern: str, meaning: str) -> Signature:
    return Signature(server, re.compile(pattern, re.IGNORECASE), meaning)


SIGNATURES: tuple[Signature, ...] = (
    _sig("llama.cpp", r"tools param requires --jinja flag", "llama-server without --jinja refuses tools"),
    _sig("llama.cpp", r"tool_choice param requires --jinja flag", "llama-server without --jinja refuses tool_choice"),
    _sig("llama.cpp", r"Cannot use tools with stream", "this llama-server build cannot stream tool calls"),
    # b11434 builds its tool-call parser (and grammar) from the chat template and the tools'
    # schemas for each request; a schema it cannot turn into a grammar refuses the request.
    _sig(
        "llama.cpp",
        r"Unable to generate parser for this template",
        "llama-server could not build a tool-call parser for these tools with this chat template",
    ),
    # Only for values OpenAI defines: an old build that does not know one of them is a
    # limit of the server; any other value would be our own invalid request.
    _sig(
        "llama.cpp",
        r"Invalid tool_choice: (required|none|auto)\b",
        "this llama-server build does not accept that tool_choice",
    ),
    _sig(
        "vLLM",
        r'"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser',
        "vLLM without --enable-auto-tool-choice/--tool-call-parser refuses auto tool choice",
    ),
    _sig("vLLM", r"`?tool_choice`? must either be a named tool", "this vLLM version refuses tool_choice required"),
    _sig(
        "vLLM", r'Only named tools, "none", "auto" or "required" are supported', "vLLM refuses this tool_choice value"
    ),
    _sig("Ollama", r"does not support tools", "Ollama: the model has no tools capability"),
)

_HEURISTIC_NOUN = re.compile(r"\btool|\bfunction|tool_choice", re.IGNORECASE)
_HEURISTIC_VERB = re.compile(r"support|requires?|unsupported|invalid|not allowed", re.IGNORECASE)
_ERROR_STATUSES = {
    401: "authentication failed",
    403: "access refused",
    404: "no such endpoint or model",
    429: "rate limited",
}
_CONTEXT = re.compile(r"context (length|window|size)|maximum context|too many tokens|exceeds? the", re.IGNORECASE)


class FailureKind(StrEnum):
    """What a failed exchange means: the server refused the request shape (`unsupported`),
    failed (`error`), or refused an ordinary bad request (`refused`, a 4xx: what S17 wants)."""

    UNSUPPORTED = "unsupported"
    ERROR = "error"
    REFUSED = "refused"


@dataclass(frozen=True, slots=True)
class Classification:
    """How a failed exchange is classified (`kind`), why, and by which server's known message."""

    kind: FailureKind
    reason: str
    confirmed: bool = True
    server: str | None = None


def match_signature(message: str | None) -> Signature | None:
    """The known refusal `message` matches, if any."""
    if not message:
        return None
    for signature in SIGNATURES:
        if signature.pattern.search(message):
            return signature
    return None


def classify(ex: RawExchange) -> Classification:
    """What a failed exchange (`ex.error_class` set) means for a scenario's outcome."""
    message = ex.server_message or ""
    signature = match_signature(message)
    if signature is not None:
        return Classification(
            FailureKind.UNSUPPORTED, f"{signature.meaning} (the server said: {message[:200]})", True, signature.server
        )
    if ex.error_class not in HTTP_STATUS_CLASSES and ex.error_class != ErrorClass.STREAM_ERROR:
        return Classification(FailureKind.ERROR, ex.error or ex.error_class or "no answer")
    status = ex.status or 0
    if status in _ERROR_STATUSES:
        return Classification(FailureKind.ERROR, f"{_ERROR_STATUSES[status]}: {ex.error}")
    if _CONTEXT.search(message):
        return Classification(FailureKind.ERROR, f"the request does not fit the model's context: {ex.error}")
    if status in (400, 422, 501) and _HEURISTIC_NOUN.search(message) and _HEURISTIC_VERB.search(message):
        return Classification(
            FailureKind.UNSUPPORTED,
            f"unconfirmed: the refusal names tools but matches no known "
            f"server message (the server said: {message[:200]})",
            False,
        )
    if 400 <= status < 500:
        return Classification(FailureKind.REFUSED, ex.error or f"HTTP {status}")
    return Classification(FailureKind.ERROR, ex.error or f"HTTP {status}")

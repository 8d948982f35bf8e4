"""Key policy: compare-tui only ever sends *virtual* keys (a gateway's per-user key).

A provider's own API key is refused before any request is made, and is never forwarded,
logged or stored. We recognise provider keys by their published prefixes; anything else is
treated as a virtual key.

Gateway virtual keys must not look like provider keys. LiteLLM issues `sk-…` virtual keys
by default, which are indistinguishable from OpenAI (and DeepSeek) keys, so they are
refused too: have the gateway issue keys with a prefix of their own, e.g. `vk-…` (LiteLLM's
`/key/generate` accepts an explicit `key`). Providers without a fixed prefix (Mistral,
Cohere, Together, Azure OpenAI) cannot be recognised and are not checked.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from compare_tui.catalogue.errors import ModelRefused

if TYPE_CHECKING:
    from compare_tui.catalogue.models import ModelEntry

REDACTED = "[redacted]"

# (provider, pattern). Order matters: the specific `sk-…` prefixes come before the bare
# `sk-` so the message names the right provider. Patterns match from the key's start.
PROVIDER_KEY_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (provider, re.compile(pattern))
    for provider, pattern in (
        ("Anthropic (sk-ant-)", r"sk-ant-"),
        ("OpenRouter (sk-or-)", r"sk-or-"),
        ("OpenAI project key (sk-proj-)", r"sk-proj-"),
        ("OpenAI service-account key (sk-svcacct-)", r"sk-svcacct-"),
        ("OpenAI admin key (sk-admin-)", r"sk-admin-"),
        ("OpenAI or DeepSeek (sk-)", r"sk-"),
        ("Google (AIza…)", r"AIza[0-9A-Za-z_-]{35}$"),
        ("Groq (gsk_)", r"gsk_"),
        ("xAI (xai-)", r"xai-"),
        ("Hugging Face (hf_)", r"hf_"),
        ("Replicate (r8_)", r"r8_"),
        ("Perplexity (pplx-)", r"pplx-"),
        ("Fireworks (fw_)", r"fw_"),
        ("AWS access key id (AKIA/ASIA)", r"(?:AKIA|ASIA)[0-9A-Z]{16}$"),
        ("GitHub token (ghp_)", r"ghp_"),
        ("GitHub token (github_pat_)", r"github_pat_"),
        ("GitHub token (gho_/ghu_/ghs_/ghr_)", r"gh[ousr]_"),
    )
)

_BEARER = re.compile(r"(?i)^bearer\s+")
# Candidate tokens in free text for `mask_provider_keys`. Real provider keys are 20+
# characters; 16 keeps the short prefixes in our own messages (e.g. "(sk-proj-)") intact.
_TOKEN = re.compile(r"[A-Za-z0-9_-]{16,}")


def provider_key_kind(value: str) -> str | None:
    """The provider whose key pattern `value` matches (e.g. "Groq (gsk_)"), else None.

    Surrounding whitespace and a leading "Bearer " are ignored, because that is how a key
    pasted from a curl command arrives."""
    candidate = _BEARER.sub("", value.strip())
    for provider, pattern in PROVIDER_KEY_PATTERNS:
        if pattern.match(candidate):
            return provider
    return None


def resolve_key(entry: ModelEntry, environ: Mapping[str, str] | None = None) -> str | None:
    """The virtual key for `entry`, read from the variable its `key_env` names.

    Returns None when the entry has no `key_env` (the endpoint needs no key). Raises
    `ModelRefused` when the variable is unset or empty, or holds something that looks like
    a provider API key; the message names the variable and the provider pattern, never
    the value."""
    if entry.key_env is None:
        return None
    env = os.environ if environ is None else environ
    var = entry.key_env
    raw = env.get(var)
    if raw is None or not raw.strip():
        state = "is not set" if raw is None else "is empty"
        raise ModelRefused(
            f"model {entry.name!r}: key_env = {var!r} but ${var} {state}; "
            f"export {var}=<your virtual key>, or remove key_env if the endpoint needs no key",
            model=entry.name,
        )
    key = raw.strip()
    provider = provider_key_kind(key)
    if provider is not None:
        raise ModelRefused(
            f"model {entry.name!r}: ${var} holds what looks like a provider API key "
            f"({provider}); compare-tui never sends provider keys. Issue a virtual key from "
            f"your gateway with a prefix of its own (e.g. vk-…) and put that in ${var}",
            model=entry.name,
        )
    if any(ord(c) < 0x20 or c == "\x7f" or c.isspace() for c in key):
        # A header value with control characters or spaces is either a paste error or an
        # attempt to inject a second header; neither should reach the wire.
        raise ModelRefused(
            f"model {entry.name!r}: ${var} contains spaces or control characters; "
            f"set it to the key alone",
            model=entry.name,
        )
    return key


def redact(text: str, secrets: Iterable[str]) -> str:
    """`text` with every occurrence of every non-empty secret replaced by "[redacted]".

    One left-to-right pass with the longest secrets tried first, so overlapping secrets
    are handled and a replacement is never re-scanned."""
    unique = sorted({s for s in secrets if s}, key=len, reverse=True)
    if not unique:
        return text
    pattern = re.compile("|".join(re.escape(s) for s in unique))
    return pattern.sub(REDACTED, text)


def mask_provider_keys(text: str) -> str:
    """`text` with every token that looks like a provider API key replaced by
    "[redacted]" — for messages that might echo user input we do not know to be secret."""
    return _TOKEN.sub(
        lambda m: REDACTED if provider_key_kind(m.group()) is not None else m.group(), text
    )

"""Key policy: compare-tui only ever sends *virtual* keys (a gateway's per-user key).

A provider's own API key is refused before any request is made, and is never forwarded,
logged or stored. We recognise provider keys by their published prefixes; anything else is
treated as a virtual key.

One exception, because the most common gateway needs it: LiteLLM requires every virtual key
it issues to start with `sk-` (its `/key/generate` rejects any other), which is also the
shape of an OpenAI or DeepSeek key. A bare `sk-…` key is therefore accepted only for an
entry that declares its endpoint a gateway (`gateway = "litellm"`) on a host that is not a
known provider API host (`PROVIDER_API_HOSTS`), and only once the gateway has confirmed the
key before the first task (`catalogue/gateway.py`). Every other `sk-` shape (`sk-ant-`,
`sk-proj-`, …) names its provider and stays refused. Providers without a fixed prefix
(Mistral, Cohere, Together, Azure OpenAI) cannot be recognised and are not checked.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from typing import Protocol
from urllib.parse import urlsplit

from compare_tui.catalogue.errors import ModelRefused


class KeyedEntry(Protocol):
    """What the key policy reads of a catalogue entry (`models.ModelEntry` is one). A protocol,
    so that this module, which the entry's own validation uses, never imports `models`."""

    @property
    def name(self) -> str: ...
    @property
    def endpoint(self) -> str: ...
    @property
    def key_env(self) -> str | None: ...
    @property
    def gateway(self) -> str | None: ...


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

GATEWAY_SHAPED = "OpenAI or DeepSeek (sk-)"
"""The one provider pattern a gateway's virtual key may match (LiteLLM issues `sk-…` keys)."""

PROVIDER_API_HOSTS: tuple[str, ...] = (
    "api.openai.com",
    "api.deepseek.com",
    "api.anthropic.com",
    "generativelanguage.googleapis.com",
    "api.groq.com",
    "api.x.ai",
    "api.mistral.ai",
    "api.cohere.com",
    "api.cohere.ai",
    "api.together.xyz",
    "api.together.ai",
    "api.fireworks.ai",
    "api.perplexity.ai",
    "openrouter.ai",
    "api.replicate.com",
    "api-inference.huggingface.co",
    "router.huggingface.co",
    "openai.azure.com",
)
"""Hosts (and their subdomains) of providers' own APIs: an `sk-` key is never sent to one of
them, whatever the entry declares, because there it can only be a provider key."""

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


def is_provider_host(endpoint: str) -> bool:
    """True when `endpoint`'s host is one of `PROVIDER_API_HOSTS` or a subdomain of one."""
    host = (urlsplit(endpoint).hostname or "").lower().rstrip(".")
    return any(host == known or host.endswith("." + known) for known in PROVIDER_API_HOSTS)


def gateway_key_allowed(entry: KeyedEntry, provider: str | None) -> bool:
    """Whether a key matching `provider`'s pattern may go to `entry`'s endpoint: only a bare
    `sk-` key, only for a declared gateway, only on a host that is not a provider's API."""
    return provider == GATEWAY_SHAPED and entry.gateway is not None and not is_provider_host(entry.endpoint)


def needs_gateway_confirmation(entry: KeyedEntry, key: str | None) -> bool:
    """True for a key `resolve_key` accepted only because `entry` declares a gateway: it must
    be confirmed by that gateway (`gateway.confirm_key`) before any task is sent."""
    return key is not None and provider_key_kind(key) is not None


def resolve_key(entry: KeyedEntry, environ: Mapping[str, str] | None = None) -> str | None:
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
        raise ModelRefused.about(
            entry.name,
            f"key_env = {var!r} but ${var} {state}; "
            f"export {var}=<your virtual key>, or remove key_env if the endpoint needs no key",
        )
    key = raw.strip()
    provider = provider_key_kind(key)
    if provider is not None and not gateway_key_allowed(entry, provider):
        raise ModelRefused.about(entry.name, _provider_key_refusal(entry, var, provider))
    if any(ord(c) < 0x20 or c == "\x7f" or c.isspace() for c in key):
        # A header value with control characters or spaces is either a paste error or an
        # attempt to inject a second header; neither should reach the wire.
        raise ModelRefused.about(entry.name, f"${var} contains spaces or control characters; set it to the key alone")
    return key


def _provider_key_refusal(entry: KeyedEntry, var: str, provider: str) -> str:
    base = f"${var} holds what looks like a provider API key ({provider}); compare-tui never sends provider keys"
    if provider != GATEWAY_SHAPED:
        return base + f". Put a gateway in front and put its virtual key in ${var}"
    if entry.gateway is not None:  # declared, but the host is a provider's own API
        host = urlsplit(entry.endpoint).hostname
        return base + f", and {host} is a provider's own API host, not a gateway; point the endpoint at your gateway"
    return (
        base + ". If it is a LiteLLM virtual key (LiteLLM issues only sk-… keys), declare "
        'the endpoint a gateway with gateway = "litellm" in the catalogue entry (the gateway '
        "then has to confirm the key before any task is sent)"
    )


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
    return _TOKEN.sub(lambda m: REDACTED if provider_key_kind(m.group()) is not None else m.group(), text)

"""Ask an endpoint what it serves before `models add` writes anything.

`/v1/models` must answer in the OpenAI shape and list the model; then the stack is
identified by what it answers: vLLM by its `/v1/models` fields, llama.cpp by `/props`,
Ollama by `/api/tags` (+ `/api/show`). Each failure that stops an add is one
`EndpointProbeError` line; a stack that offers no self-description just adds no facts.
Requests go where the user pointed, through the endpoint's probe client (never through an
ambient proxy, no redirects followed).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import httpx

from compare_tui.catalogue.errors import EndpointProbeError, ModelNotServed
from compare_tui.catalogue.server_facts import (
    ServerFacts,
    from_llama_props,
    from_ollama,
    from_vllm,
    gateway_findings,
)
from compare_tui.endpoint import Endpoint
from compare_tui.endpoint.account import (
    ListedModel,
    LlamaProps,
    ModelListing,
    TokenizedPrompt,
    engine_version,
    vllm_cache_config,
)
from compare_tui.endpoint.client import causes, connect_failure, probe_client
from compare_tui.endpoint.fingerprint import (
    APPLY_TEMPLATE_PROBE,
    TOKENIZE_MESSAGES,
    TOKENIZE_TOOLS,
    VllmConfig,
    auto_tool_choice_of,
    serving_fingerprint,
    template_mode_of,
)
from compare_tui.endpoint.prometheus import parse_exposition
from compare_tui.endpoint.props import MAX_PROPS_BYTES, PropsUnavailable, fetch_props


@dataclass
class ProbeResult:
    """What the endpoint said: the model id to use, every id it lists, and the facts."""

    model: str
    ids: list[str]
    listing: ModelListing | None = None
    """The typed `/v1/models` answer these ids came from."""
    facts: ServerFacts = field(default_factory=ServerFacts)
    fingerprint: dict[str, Any] = field(default_factory=dict)
    """How the server is configured and what it loaded (`endpoint.fingerprint`)."""
    props: LlamaProps | PropsUnavailable | None = None
    """`/props` as this probe read it (typed; an empty `LlamaProps` for a JSON object of another
    shape), or why there was none; None when it was not asked (a vLLM server). A run's
    environment is made from it, not read again."""


def _get(client: httpx.Client, method: str, url: str, **kwargs: Any) -> tuple[int, Any]:
    """(status, parsed JSON or None). Transport failures propagate as httpx errors."""
    response = client.request(method, url, **kwargs)
    if len(response.content) > MAX_PROPS_BYTES:
        return response.status_code, None
    try:
        return response.status_code, response.json()
    except ValueError:
        return response.status_code, None


def _choose_model(wanted: str | None, fallback: str, ids: list[str], endpoint: str) -> str:
    offer = ", ".join(ids[:20]) + (f" (and {len(ids) - 20} more)" if len(ids) > 20 else "")
    if wanted is not None:
        if wanted in ids or (":" not in wanted and f"{wanted}:latest" in ids):
            return wanted
        listing = f"it lists: {offer}" if ids else "it lists no models"
        raise ModelNotServed(
            f"{endpoint} does not serve model {wanted!r}; {listing}; pass one of those with --model", ids
        )
    if fallback in ids:
        return fallback
    if len(ids) == 1:
        return ids[0]
    if not ids:
        raise EndpointProbeError(
            f"{endpoint} lists no models at /models; start the server with a model loaded, then add it"
        )
    raise EndpointProbeError(f"{endpoint} serves several models ({offer}); choose one with --model")


def probe_endpoint(
    endpoint: str,
    model: str | None,
    *,
    name: str,
    headers: dict[str, str] | None = None,
    gateway: str | None = None,
    timeout_s: float = 10.0,
    transport: httpx.BaseTransport | None = None,
) -> ProbeResult:
    """Probe `endpoint` for `model` (None: the one it serves, or the one called `name`).

    Raises `EndpointProbeError` when the endpoint cannot be reached, is not
    OpenAI-compatible, or does not serve the model; the message never carries `headers`."""
    at = Endpoint(endpoint)
    with probe_client(timeout_s=timeout_s, headers=headers, transport=transport) as client:
        try:
            status, listing = _get(client, "GET", at.models_url)
        except httpx.HTTPError as exc:
            reason = (
                connect_failure(causes(exc), at.models_url)
                if isinstance(exc, httpx.ConnectError)
                else f"{type(exc).__name__}: {str(exc)[:120] or 'no answer'}"
            )
            raise EndpointProbeError(
                f"cannot reach {endpoint} ({reason}); is the server running, and is --endpoint its base URL?"
            ) from None
        if status in (401, 403):
            raise EndpointProbeError(
                f"{endpoint} answered HTTP {status} to GET /models: it needs a key; export a "
                "virtual key and pass the variable's name with --key-env"
            )
        parsed = ModelListing.parse(listing) if status == 200 else None
        if parsed is None:
            got = f"HTTP {status}" if status != 200 else "a body without a `data` list"
            raise EndpointProbeError(
                f"{endpoint} is not an OpenAI-compatible API: GET {at.models_url} gave {got}; "
                "give the base URL that serves /chat/completions (usually ending in /v1)"
            )
        ids = parsed.ids
        try:
            chosen = _choose_model(model, name, ids, endpoint)
        except ModelNotServed as exc:
            raise ModelNotServed(str(exc), exc.ids, parsed.owners) from None
        facts = ServerFacts()
        result = ProbeResult(model=chosen, ids=ids, listing=parsed, facts=facts)
        listed = parsed.find(chosen)
        vllm = from_vllm(listed)
        if vllm is not None:
            facts.merge(vllm)
            version_body = _optional(client, "GET", at.beside("version"))
            version = engine_version(version_body)
            sources = ("GET /v1/models", "GET /version") if version_body is not None else ("GET /v1/models",)
            config, asked = _vllm_config(client, at, chosen, listed)
            result.fingerprint = serving_fingerprint(
                listed=listed, version=version, vllm=config, sources=(*sources, *asked)
            )
            facts.sources += [a.split(" (")[0] for a in asked if a.split(" (")[0] not in facts.sources]
            for key in VLLM_CONFIG_KEYS:
                if key in result.fingerprint:
                    facts.extra[key] = str(result.fingerprint[key])
            return _with_gateway(result, gateway, props_found=False)
        props: LlamaProps | None = None
        try:
            props = LlamaProps.parse(fetch_props(at, client=client, timeout_s=timeout_s))
            result.props = props or LlamaProps()
        except PropsUnavailable as exc:
            result.props = exc
        llama = from_llama_props(props)
        if llama is not None:
            facts.merge(llama)
            mode = template_mode_of(*_answer(client, "POST", at.beside("apply-template"), json=APPLY_TEMPLATE_PROBE))
            if mode is not None:
                facts.extra["template_mode"] = mode
            sources = ("GET /props", "POST /apply-template") if mode else ("GET /props",)
            result.fingerprint = serving_fingerprint(props=props, template_mode=mode, sources=sources)
            return _with_gateway(result, gateway, props_found=True)
        tags = _optional(client, "GET", at.beside("api/tags"))
        if isinstance(tags, dict) and isinstance(tags.get("models"), list):
            show = _optional(client, "POST", at.beside("api/show"), json={"model": chosen})
            ollama = from_ollama(tags, show, chosen)
            if ollama is not None:
                facts.merge(ollama)
        return _with_gateway(result, gateway, props_found=False)


VLLM_CONFIG_KEYS = ("rendered_prompt_sha256", "tools_in_prompt", "auto_tool_choice", "cache_config")
"""The fingerprint fields of vLLM's configuration that `models add` records in `[model.serving]
extra`, so that a run start catches their drift like the context's (`serving_check`)."""


def _vllm_config(
    client: httpx.Client, at: Endpoint, model: str, listed: ListedModel | None
) -> tuple[VllmConfig, tuple[str, ...]]:
    """What vLLM says of its configuration without generating a token, and the requests asked:
    the chat template as rendered by `POST /tokenize` (with and without tools), whether it
    accepts `tool_choice: "auto"` (asked with more output tokens than the context holds, which
    it refuses after the tool check, before any generation), and `/metrics`' cache settings."""
    chat = {"model": model, "messages": TOKENIZE_MESSAGES}
    with_status, with_body = _answer(client, "POST", at.beside("tokenize"), json=chat | {"tools": TOKENIZE_TOOLS})
    _, without_body = _answer(client, "POST", at.beside("tokenize"), json=chat)
    too_many = (listed.max_model_len if listed and listed.max_model_len else 10**8) + 1
    status, body = _answer(
        client,
        "POST",
        at.api("chat/completions"),
        json=chat | {"tools": TOKENIZE_TOOLS, "tool_choice": "auto", "max_tokens": too_many, "stream": False},
    )
    auto = auto_tool_choice_of(status, body)
    metrics = _text(client, at.metrics_url)
    cache = None
    if metrics is not None:
        try:
            cache = vllm_cache_config(parse_exposition(metrics))
        except ValueError:
            cache = None
    config = VllmConfig(
        with_tools=TokenizedPrompt.parse(with_body) if with_status == 200 else None,
        without_tools=TokenizedPrompt.parse(without_body),
        auto_tool_choice=auto,
        cache_config=cache,
    )
    asked = [
        *(("POST /tokenize",) if config.with_tools else ()),
        *(("POST /v1/chat/completions (tool_choice auto, refused before generating)",) if auto else ()),
        *(("GET /metrics",) if cache else ()),
    ]
    return config, tuple(asked)


def _text(client: httpx.Client, url: str) -> str | None:
    try:
        response = client.get(url)
    except httpx.HTTPError:
        return None
    if response.status_code != 200 or len(response.content) > MAX_PROPS_BYTES:
        return None
    return response.text


def _answer(client: httpx.Client, method: str, url: str, **kwargs: Any) -> tuple[int | None, Any]:
    """(status, JSON or None) of a request a stack may not serve; (None, None) when unreachable."""
    try:
        return _get(client, method, url, **kwargs)
    except httpx.HTTPError:
        return None, None


def _optional(client: httpx.Client, method: str, url: str, **kwargs: Any) -> Any:
    """A self-description that a stack may not offer: its JSON, or None."""
    try:
        status, body = _get(client, method, url, **kwargs)
    except httpx.HTTPError:
        return None
    return body if status == 200 else None


def _with_gateway(result: ProbeResult, gateway: str | None, *, props_found: bool) -> ProbeResult:
    if gateway is not None:
        result.facts.notes += gateway_findings(gateway, props_found)
    return result

"""What a run was measured on: this host, and the server's own account of itself.

Stored with every run so that two runs can be told apart later ("same model, but the server
was rebuilt" or "different CPU"). Everything here is best effort: a field that cannot be read
is None, and a server that will not answer is recorded as {"error": ...}, never raised.
"""

from __future__ import annotations

import asyncio
import json
import os
import platform
import socket
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, NotRequired, TypedDict

import httpx

from compare_tui import __version__
from compare_tui.endpoint import Endpoint
from compare_tui.endpoint.account import LlamaProps, ModelListing
from compare_tui.endpoint.client import probe_client
from compare_tui.endpoint.props import PropsUnavailable, fetch_props

if TYPE_CHECKING:
    from compare_tui.engine.settings import StoredSettings

TEMPLATE_KEEP_CHARS = 2000
"""How much of a chat template is stored verbatim; the sha256 covers the whole of it."""


class PropsIdentity(TypedDict):
    """The parts of llama.cpp's /props that change what a run measures (`props_entry`)."""

    build_info: str | None
    n_ctx: int | None
    total_slots: int | None
    chat_template: str | None
    """The first `TEMPLATE_KEEP_CHARS` characters of the template."""
    chat_template_sha256: str | None
    chat_template_chars: NotRequired[int]
    """The whole template's length; only when the server gave a template."""


class ReadError(TypedDict):
    """A part of the identity the server would not give: why, fit to store."""

    error: str


class ModelIds(TypedDict):
    """The model ids `{base}/models` listed."""

    ids: list[str]


class ServerIdentity(TypedDict):
    """The server's account of itself, stored as the run environment's `server`: `props` is
    None for a server without /props (HTTP 404: not llama.cpp; or not asked: vLLM)."""

    base_url: str
    models: ModelIds | ReadError
    props: PropsIdentity | ReadError | None


def cpu_model(cpuinfo: Path = Path("/proc/cpuinfo")) -> str | None:
    """The CPU model name from /proc/cpuinfo (Linux), else what `platform` knows, else None."""
    try:
        for line in cpuinfo.read_text(errors="replace").splitlines():
            key, _, value = line.partition(":")
            # x86 says "model name"; some ARM kernels only say "Hardware" or "Model".
            if key.strip() in ("model name", "Hardware", "Model") and value.strip():
                return value.strip()
    except OSError:
        pass
    return platform.processor() or None


def capture_environment(
    *,
    server_identity: ServerIdentity | None = None,
    gpu: dict[str, Any] | None = None,
    settings: StoredSettings | None = None,
) -> dict[str, Any]:
    """A JSON-ready description of this machine, plus the given server identity (from
    `fetch_server_identity`), GPU report and run settings, stored as given."""
    return {
        "captured_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "host": socket.gethostname(),
        "os": platform.platform(),
        "machine": platform.machine(),
        "cpu_model": cpu_model(),
        "cpu_count": os.cpu_count(),
        "python": platform.python_version(),
        "python_implementation": platform.python_implementation(),
        "compare_tui_version": __version__,
        "server": server_identity,
        "gpu": gpu,
        "settings": settings,
    }


def _get_json(client: httpx.Client, url: str) -> Any:
    """GET and parse JSON; raises LookupError with a message fit to store (never echoing the
    headers, which may hold a key)."""
    try:
        response = client.get(url)
    except httpx.HTTPError as exc:
        raise LookupError(f"GET {url} failed: {type(exc).__name__}: {exc}") from None
    if response.status_code != 200:
        raise LookupError(f"GET {url} returned HTTP {response.status_code}")
    try:
        return json.loads(response.content)
    except ValueError:
        raise LookupError(f"GET {url} did not return JSON") from None


def _props_identity(props: LlamaProps) -> PropsIdentity:
    """The parts of llama.cpp's /props that change what a run measures."""
    template = props.chat_template
    out: PropsIdentity = {
        "build_info": props.build_info,
        "n_ctx": props.context_per_slot,
        "total_slots": props.total_slots,
        "chat_template": None,
        "chat_template_sha256": None,
    }
    if template is not None:
        out["chat_template"] = template[:TEMPLATE_KEEP_CHARS]
        out["chat_template_sha256"] = props.chat_template_sha256
        out["chat_template_chars"] = len(template)
    return out


async def fetch_server_identity(
    base_url: str,
    headers: Mapping[str, str] | None = None,
    *,
    timeout: float = 10.0,
    transport: httpx.BaseTransport | None = None,
) -> ServerIdentity:
    """`server_identity` in a thread (two quick GETs through the endpoint's probe client)."""
    return await asyncio.to_thread(server_identity, base_url, headers, timeout=timeout, transport=transport)


def server_identity(
    base_url: str,
    headers: Mapping[str, str] | None = None,
    *,
    timeout: float = 10.0,
    transport: httpx.BaseTransport | None = None,
) -> ServerIdentity:
    """Ask the server what it is: model ids from `{base}/models`, and for llama.cpp the
    build, chat template, context size and slots from `/props` (`endpoint.props`).

    Returns {"base_url", "models": {"ids": [...]} | {"error"}, "props": {...} | {"error"} |
    None}. `props` is None when the server has no /props (HTTP 404: not llama.cpp). Never
    raises: each failure is recorded as {"error": "..."} in its place."""
    at = Endpoint(base_url.rstrip("/"))
    models: ModelIds | ReadError
    props: PropsIdentity | ReadError | None
    with probe_client(timeout_s=timeout, headers=headers, transport=transport) as client:
        try:
            listing = ModelListing.parse(_get_json(client, at.models_url))
            if listing is None:
                raise LookupError(f"GET {at.models_url}: no `data` list in the answer")
            models = {"ids": listing.ids}
        except Exception as exc:  # noqa: BLE001 - identity is evidence, not a precondition
            models = {"error": str(exc)}
        try:
            props = props_entry(LlamaProps.parse(fetch_props(at, client=client, timeout_s=timeout)) or LlamaProps())
        except PropsUnavailable as exc:
            props = props_entry(exc)
        except Exception as exc:  # noqa: BLE001
            props = {"error": f"{type(exc).__name__}: {exc}"}
    return {"base_url": at.base_url, "models": models, "props": props}


def props_entry(answer: LlamaProps | PropsUnavailable | None) -> PropsIdentity | ReadError | None:
    """The identity's `props`: what a `/props` answer says (`_props_identity`; a JSON object of
    another shape says nothing), None for a server without one (HTTP 404, or not asked: vLLM),
    else {"error"}."""
    if answer is None:
        return None
    if isinstance(answer, PropsUnavailable):
        return None if answer.status == 404 else {"error": str(answer)}
    return _props_identity(answer)


def identity_from(base_url: str, ids: list[str], props: LlamaProps | PropsUnavailable | None) -> ServerIdentity:
    """`server_identity` made from answers already read (the serving probe's `/v1/models` ids
    and `/props`; None: not asked, a vLLM server), so that a run asks the server once for both."""
    return {
        "base_url": Endpoint(base_url.rstrip("/")).base_url,
        "models": {"ids": list(ids)},
        "props": props_entry(props),
    }

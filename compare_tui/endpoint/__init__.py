"""The one seam to a model endpoint: where its APIs live (`Endpoint`), the key header
(`key_headers`), every client to it (`endpoint.client`: `chat_client` for chat requests,
`probe_client` for probes) and llama.cpp's `/props` (`endpoint.props.fetch_props`). Every
runner, the catalogue and the probes use it. This module imports no HTTP library (importing
one is slow), its submodules do.

An endpoint in the catalogue is the OpenAI-compatible base URL (`http://host:port/v1`). Servers
serve their own APIs beside `/v1`, not under it (llama.cpp `/props`, `/metrics`; Ollama
`/api/*`), so every URL is built from `Endpoint`, never by string surgery at the call site.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Endpoint", "key_headers", "server_root"]


def key_headers(key: str | None) -> dict[str, str]:
    """The request headers that carry an entry's (virtual) key: `Authorization: Bearer KEY`,
    or none without a key. Every client to a model endpoint builds them here, once."""
    return {"Authorization": f"Bearer {key}"} if key else {}


def server_root(base_url: str) -> str:
    """`http://host:port/v1` -> `http://host:port` (a trailing slash is ignored)."""
    base = base_url.rstrip("/")
    return base[: -len("/v1")] if base.endswith("/v1") else base


@dataclass(frozen=True)
class Endpoint:
    """An OpenAI-compatible endpoint as the catalogue states it (`base_url`, usually ending `/v1`)."""

    base_url: str

    @property
    def root(self) -> str:
        """The server's root, where stacks serve their own APIs (`/props`, `/metrics`, `/api/*`)."""
        return server_root(self.base_url)

    def api(self, path: str) -> str:
        """A URL under the OpenAI-compatible base: `api("models")` -> `…/v1/models`."""
        return f"{self.base_url.rstrip('/')}/{path.lstrip('/')}"

    def beside(self, path: str) -> str:
        """A URL at the server's root: `beside("props")` -> `http://host:port/props`."""
        return f"{self.root}/{path.lstrip('/')}"

    @property
    def props_url(self) -> str:
        """llama.cpp's `/props` (build, chat template, slots, context, loaded model file)."""
        return self.beside("props")

    @property
    def models_url(self) -> str:
        """The OpenAI `/models` listing (vLLM adds `root` and `max_model_len` to each entry)."""
        return self.api("models")

    @property
    def metrics_url(self) -> str:
        """Prometheus metrics (llama.cpp with `--metrics`, vLLM always)."""
        return self.beside("metrics")

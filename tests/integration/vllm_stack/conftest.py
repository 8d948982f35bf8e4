"""A real vLLM OpenAI server for the tests of this package, one at a time.

`vllm` hands out a running server for a bundled model (started on first use, on loopback). Only
one vLLM runs at a time (SmolLM2 takes about 3.3 GB, Qwen 0.5B about 5 GB): asking for another
model stops the one running first, so the modules are ordered to need few restarts
(`test_vllm_provenance.py` first, which stops this fixture's server and runs its own two; then
SmolLM2's tests, then Qwen's: `test_vllm_toolcall.py` sorts last). Every server is stopped when
the package's last test ends (package scope): idle, a server uses ~1 % of a core, but its memory
is better given back before the rest of the integration tier runs.

If vLLM cannot be provisioned or started the tests ERROR with the reason, never skip.
"""

from __future__ import annotations

import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.vllm_server import QWEN, SMOLLM, TOOL_PARSER, VllmServer, VllmUnavailable


class VllmServers:
    """At most one running vLLM server, by (model, extra arguments)."""

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self.running: VllmServer | None = None

    def get(
        self,
        model: str,
        extra_args: tuple[str, ...] = (),
        *,
        name: str | None = None,
        repo: str | None = None,
        hf_home: Path | None = None,
    ) -> VllmServer:
        """A running server of `model` with `extra_args` (started under `workdir/name`, by
        default the model's name); with `repo`, served as that repository id from the Hugging
        Face cache under `hf_home`."""
        current = self.running
        wanted = (model, extra_args, repo, hf_home)
        if current is not None and (current.model, current.extra_args, current.repo, current.hf_home) == wanted:
            if current.process is not None and current.process.poll() is None:
                return current
        self.stop()
        server = VllmServer(self.workdir / (name or model), model, extra_args, repo=repo, hf_home=hf_home)
        try:
            self.running = server.start()
        except VllmUnavailable as exc:
            pytest.fail(f"could not provision or start vLLM:\n{exc}", pytrace=False)
        return server

    def stop(self) -> None:
        if self.running is not None:
            self.running.stop()
            self.running = None


def _interrupt(signum: int, frame: object) -> None:
    # A vLLM server runs in its own session and holds 3-5 GB: SIGTERM/SIGHUP (a CI timeout, a
    # closed SSH session) must tear the fixture down, so they become KeyboardInterrupt.
    raise KeyboardInterrupt(f"signal {signum}")


@pytest.fixture(scope="package")
def vllm_servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[VllmServers]:
    servers = VllmServers(tmp_path_factory.mktemp("vllm"))
    handlers = {sig: signal.getsignal(sig) for sig in (signal.SIGTERM, signal.SIGHUP)}
    for sig, handler in handlers.items():
        if handler == signal.SIG_DFL:  # never replace a handler someone else installed
            signal.signal(sig, _interrupt)
    try:
        yield servers
    finally:
        servers.stop()
        for sig, handler in handlers.items():
            if signal.getsignal(sig) is _interrupt:
                signal.signal(sig, handler)


SMOLLM_ARGS = ("--enable-prompt-tokens-details",)
"""SmolLM2's one server for the SmolLM2 tests: its answers say what came from the prefix cache
(`usage.prompt_tokens_details`), which the prompt-cache test reads and the others ignore, so no
test restarts vLLM (a start is one to three minutes on 2 cores) just to add it."""


@pytest.fixture
def smollm(vllm_servers: VllmServers) -> VllmServer:
    """SmolLM2-135M-Instruct served by vLLM (with `SMOLLM_ARGS`)."""
    return vllm_servers.get(SMOLLM, SMOLLM_ARGS)


@pytest.fixture
def qwen_tools(vllm_servers: VllmServers) -> VllmServer:
    """Qwen2.5-Coder-0.5B-Instruct served by vLLM with the hermes tool-call parser."""
    return vllm_servers.get(QWEN, TOOL_PARSER)

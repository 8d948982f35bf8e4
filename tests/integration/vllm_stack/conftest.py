"""A real vLLM OpenAI server for the tests of this package, at most one serving at a time.

`vllm` hands out a running server for a bundled model (started on first use, on loopback).
Asking for another model stops the one serving first, so the modules are ordered to need few
starts (`test_vllm_provenance.py` first, with its own two; then SmolLM2's tests, then Qwen's:
`test_vllm_toolcall.py` sorts last): four in all. A start is mostly three Python processes
importing torch and vLLM one after another, on one core, while a module's tests leave the other
core mostly idle: so each module starts the *next* module's server beside its own (`NEXT`, only
when that module is collected too), and that module finds it ready. At most two vLLMs are then
alive (SmolLM2 takes about 3.3 GB, Qwen 0.5B about 5 GB), one of them idle. Every server is
stopped when the package's last test ends (package scope): its memory is better given back
before the rest of the integration tier runs.

If vLLM cannot be provisioned or started the tests ERROR with the reason, never skip.
"""

from __future__ import annotations

import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.vllm_server import QWEN, SMOLLM, TOOL_PARSER, VllmServer, VllmUnavailable


def _key(server: VllmServer) -> tuple[object, ...]:
    return (server.model, server.extra_args, server.repo, server.hf_home)


class VllmServers:
    """At most one serving vLLM server, by (model, extra arguments), and those launched ahead
    for the next module (`warm`)."""

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self.running: VllmServer | None = None
        self.warming: dict[tuple[object, ...], VllmServer] = {}
        """Launched by `warm`, not yet handed out: `get` of the same server takes it over."""

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
        if current is not None and _key(current) == wanted:
            if current.process is not None and current.process.poll() is None:
                return current
        self.stop()
        server = self.warming.pop(wanted, None)
        try:
            if server is None:
                server = VllmServer(self.workdir / (name or model), model, extra_args, repo=repo, hf_home=hf_home)
                server.launch()
            self.running = server.wait_ready()
        except VllmUnavailable as exc:
            pytest.fail(f"could not provision or start vLLM:\n{exc}", pytrace=False)
        return server

    def warm(self, model: str, extra_args: tuple[str, ...] = ()) -> None:
        """Launch `model` with `extra_args` now, without waiting, for a later `get` of it (a
        failed launch is left for that `get` to report)."""
        key = (model, extra_args, None, None)
        if key in self.warming or (self.running is not None and _key(self.running) == key):
            return
        server = VllmServer(self.workdir / model, model, extra_args)
        try:
            self.warming[key] = server.launch()
        except VllmUnavailable:
            pass  # not provisioned: the `get` that needs it fails with the reason

    def stop(self) -> None:
        """Stop the serving server (a warming one goes on)."""
        if self.running is not None:
            self.running.stop()
            self.running = None

    def stop_all(self) -> None:
        self.stop()
        while self.warming:
            self.warming.popitem()[1].stop()


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
        servers.stop_all()
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


NEXT = {
    "test_vllm_provenance": ("test_vllm_runs", SMOLLM, SMOLLM_ARGS),
    "test_vllm_runs": ("test_vllm_toolcall", QWEN, TOOL_PARSER),
}
"""For each module (by name), the module after it and the server that module's fixture asks for."""


@pytest.fixture(scope="module", autouse=True)
def _warm_the_next_modules_server(request: pytest.FixtureRequest, vllm_servers: VllmServers) -> None:
    """Launch the next module's server as this module starts, when that module runs too."""
    module = request.module.__name__.rsplit(".", 1)[-1]
    if module not in NEXT:
        return
    following, model, args = NEXT[module]
    modules = {getattr(item, "module", None) for item in request.session.items}
    if any(m is not None and m.__name__.rsplit(".", 1)[-1] == following for m in modules):
        vllm_servers.warm(model, args)

"""Shared fixtures and the tiers. Keep this file small: fixtures used by one test module live in
that module.

The tests are in three tiers, one folder each: `core/` (plain pytest: the core, statistics,
parsers, the CLI against loopback servers), `tui/` (Pilot and snapshot tests, the tmux smoke
test) and `integration/` (real llama-servers, the LiteLLM proxy, headless Chromium). Each test
is marked with its tier (`-m core`), and `scripts/test.sh core` runs one.

`local_cluster` is the integration tier's entry point: real llama.cpp servers for both bundled
models, started once per session and stopped at its end.
"""

from __future__ import annotations

import os
import signal

import pytest
from hypothesis import settings

from tests.support.fake_nvml import fake_nvml_library  # noqa: F401 - the session fixture, for every tier

# No Hypothesis deadline: speed is measured in bench/, never asserted in a test. A deadline is a
# timed assertion, and on a shared 2-core machine an example that imports Textual first, or runs
# while another suite starts its servers, passed it or not by the machine's load.
settings.register_profile("compare-tui", deadline=None)
settings.load_profile("compare-tui")

TIERS = ("core", "tui", "integration")
"""The tiers: the folders under tests/, and the marker each test in one gets."""


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        # A tier folder may hold a package of its own (integration/vllm_stack/): its tier is
        # the tier folder above it.
        tier = next((part for part in item.path.parent.parts[::-1] if part in TIERS), None)
        if tier is not None:
            item.add_marker(tier)


SESSION_MODELS = ["smollm2-135m", "gemma3-270m"]
"""The session servers: the two small bundled models. The third (Qwen2.5-Coder 0.5B) is started
only by the tests it adds coverage to (tool calls, the decision end to end), to keep CI quick."""


def _interrupt(signum, frame):
    # SIGTERM/SIGHUP (a CI timeout, `timeout`, a closed SSH session) would kill pytest without
    # running fixture teardown, leaving the servers behind; as KeyboardInterrupt, pytest tears
    # the session down first.
    raise KeyboardInterrupt(f"signal {signum}")


@pytest.fixture(autouse=True)
def _no_user_config(tmp_path_factory, monkeypatch):
    """The user's own config (a `[budget]`, a theme) never reaches a test: each reads an empty
    XDG config folder unless it sets its own."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path_factory.getbasetemp() / "no-user-config"))


@pytest.fixture(scope="session")
def local_cluster(tmp_path_factory):
    """Both bundled models served by real llama-servers for the whole session (4 slots, ctx
    4096), as a `compare_tui.local.LocalCluster`; its catalogue is `cluster.catalogue_path`.

    Server state goes to a session temp dir: COMPARE_TUI_STATE_DIR is set while the session
    runs (a plain env var, because monkeypatch is function-scoped) and restored afterwards.
    The GGUF files stay in the normal models dir, so only the first session assembles them.

    If provisioning fails the requesting tests ERROR with the reason: never skip, because a
    silently skipped integration tier looks exactly like a passing one.
    """
    from compare_tui.local import LocalError, down, up

    state_dir = tmp_path_factory.mktemp("local-state")
    previous = os.environ.get("COMPARE_TUI_STATE_DIR")
    os.environ["COMPARE_TUI_STATE_DIR"] = str(state_dir)
    handlers = {sig: signal.getsignal(sig) for sig in (signal.SIGTERM, signal.SIGHUP)}
    for sig, handler in handlers.items():
        if handler == signal.SIG_DFL:  # never replace a handler someone else installed
            signal.signal(sig, _interrupt)
    try:
        try:
            cluster = up(SESSION_MODELS, parallel=4, ctx=4096, catalogue_path=state_dir / "models.toml")
        except LocalError as exc:
            pytest.fail(f"could not provision the local llama.cpp servers:\n{exc}", pytrace=False)
        yield cluster
    finally:
        os.environ["COMPARE_TUI_STATE_DIR"] = str(state_dir)  # a test may have changed it
        down()  # stops exactly what up() recorded, also after a failed test
        for sig, handler in handlers.items():
            signal.signal(sig, handler)
        if previous is None:
            os.environ.pop("COMPARE_TUI_STATE_DIR", None)
        else:
            os.environ["COMPARE_TUI_STATE_DIR"] = previous


QWEN = "qwen2.5-coder-0.5b"


@pytest.fixture(scope="module")
def qwen_cluster(local_cluster, tmp_path_factory):
    """The third bundled model started beside the session's two for one module, and stopped when
    it ends. Its catalogue is a copy of the session's plus Qwen, so the session catalogue keeps
    exactly the two session models for every other test."""
    from compare_tui import local

    catalogue = tmp_path_factory.mktemp("qwen-catalogue") / "models.toml"
    catalogue.write_text(local_cluster.catalogue_path.read_text(encoding="utf-8"), encoding="utf-8")
    cluster = local.up([QWEN], parallel=4, ctx=4096, catalogue_path=catalogue)
    try:
        yield cluster
    finally:
        local.down([QWEN])

#!/usr/bin/env bash
# The whole test suite, or one tier of it: `scripts/test.sh core` (or tui, integration) runs
# tests/<tier>/ after lint and types; test files as arguments run only those (no lint). A run
# provisions only what the tiers it reaches need: `core` needs gcc alone; `tui` adds tmux;
# `integration` (and the whole suite) adds Chromium, LiteLLM, Ray and vLLM.
# Integration tests start the embedded llama.cpp server themselves (tests/conftest.py) and
# fail, never skip, when it cannot be provisioned.
set -euo pipefail
cd "$(dirname "$0")/.."
TIER=""
case "${1:-}" in
  core | tui | integration) TIER="$1"; shift; set -- "tests/$TIER" "$@" ;;
esac
# A system tool some tests drive: installed when running as root (CI), else a clear refusal.
need_tool() {  # COMMAND PACKAGE WHY
  if ! command -v "$1" >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ]; then
      apt-get update -qq && apt-get install -y -qq "$2" >/dev/null
    else
      echo "$3: install it (sudo apt-get install $2)" >&2
      exit 2
    fi
  fi
}
# Which tiers this run reaches, so that it provisions only what they need: the whole suite, or
# options only (`-k …`), collects every tier; paths given reach the tiers they lie in (a path
# outside the three tier folders counts as every tier).
REACH_TUI=0 REACH_INTEGRATION=0 REACH_VLLM=0 PATHS=0
for arg in "$@"; do
  path="${arg%%::*}"
  path="${path#./}"
  [ -e "$path" ] || continue
  PATHS=1
  case "$path" in
    tests/core | tests/core/*) ;;
    tests/tui | tests/tui/*) REACH_TUI=1 ;;
    tests/integration/vllm_stack*) REACH_INTEGRATION=1 REACH_VLLM=1 ;;
    tests/integration | tests/integration/) REACH_INTEGRATION=1 REACH_VLLM=1 ;;
    tests/integration/*) REACH_INTEGRATION=1 ;;
    *) REACH_TUI=1 REACH_INTEGRATION=1 REACH_VLLM=1 ;;
  esac
done
if [ "$PATHS" = 0 ]; then REACH_TUI=1 REACH_INTEGRATION=1 REACH_VLLM=1; fi
# The NVML tests (core and integration) build the project's stand-in libnvidia-ml.so.1
# (tests/support/fake_nvml.c): the one tool every tier needs.
need_tool gcc gcc "gcc is needed to build the NVML stand-in of the GPU tests"
if [ "$REACH_TUI" = 1 ]; then
  # The TUI smoke test drives the app in a real terminal multiplexer.
  need_tool tmux tmux "tmux is needed by the TUI smoke test"
fi
export COMPARE_TUI_LITELLM_VENV="${COMPARE_TUI_LITELLM_VENV:-$PWD/.state/litellm-venv}"
if [ "$REACH_INTEGRATION" = 1 ]; then
  # The publish tests open bundles in a real headless browser (tests/integration/test_publish_browser.py).
  need_tool chromium chromium "chromium is needed by the publish tests"
  # The gateway tests (tests/integration/test_gateway_litellm.py) run a real LiteLLM proxy, pinned, in its own
  # virtual environment (never the project's dependencies). Made once; a warm run only checks the
  # stamp. Never 1.107.0 (a compromised release). A failure here fails the suite: no silent skip.
  LITELLM_PIN="1.108.7"
  if [ "$(cat "$COMPARE_TUI_LITELLM_VENV/.compare-tui-pin" 2>/dev/null)" != "litellm[proxy]==$LITELLM_PIN" ]; then
    echo "provisioning LiteLLM $LITELLM_PIN into $COMPARE_TUI_LITELLM_VENV (once; pip caches it)" >&2
    rm -rf "$COMPARE_TUI_LITELLM_VENV"
    if ! { .venv/bin/python -m venv "$COMPARE_TUI_LITELLM_VENV" &&
           "$COMPARE_TUI_LITELLM_VENV/bin/pip" install -q --disable-pip-version-check "litellm[proxy]==$LITELLM_PIN" &&
           [ -x "$COMPARE_TUI_LITELLM_VENV/bin/litellm" ] &&
           [ "$("$COMPARE_TUI_LITELLM_VENV/bin/python" -c 'import importlib.metadata as m; print(m.version("litellm"))')" = "$LITELLM_PIN" ]; }; then
      echo "could not provision LiteLLM $LITELLM_PIN into $COMPARE_TUI_LITELLM_VENV (the error is above; pip needs the package index or its cache): fix that and run the tests again" >&2
      exit 2
    fi
    echo "litellm[proxy]==$LITELLM_PIN" > "$COMPARE_TUI_LITELLM_VENV/.compare-tui-pin"
  fi
  # The Ray scorer tests (tests/integration/test_ray_scorers.py) start a real two-node Ray cluster
  # with the project's extra `ray` (pinned in pyproject.toml), inside a loopback-only network
  # namespace (unshare, nsenter and ip). A failure here fails the suite: no silent skip.
  RAY_PIN="2.60.0"
  if [ "$(.venv/bin/python -c 'import importlib.metadata as m; print(m.version("ray"))' 2>/dev/null)" != "$RAY_PIN" ] ||
     ! .venv/bin/python -c 'import grpc' 2>/dev/null; then
    echo "provisioning Ray $RAY_PIN (the extra compare-tui[ray]) into .venv (once; pip caches it)" >&2
    if ! .venv/bin/pip install -q --disable-pip-version-check "ray[client]==$RAY_PIN"; then
      echo "could not install ray[client]==$RAY_PIN into .venv (the error is above; pip needs the package index or its cache): fix that and run the tests again" >&2
      exit 2
    fi
  fi
  need_tool ip iproute2 "ip (iproute2) is needed by the Ray scorer tests"
fi
# The vLLM tests (tests/integration/vllm_stack/) run a real vLLM server: a pinned CPU build in its
# own virtual environment and the bundled models converted for it (scripts/provision_vllm.sh: made
# once, then only its stamps are checked). A failure fails the suite, never skips it.
export COMPARE_TUI_VLLM_VENV="${COMPARE_TUI_VLLM_VENV:-$PWD/.state/vllm-venv}"
export COMPARE_TUI_VLLM_MODELS="${COMPARE_TUI_VLLM_MODELS:-$PWD/.state/vllm-models}"
if [ "$REACH_VLLM" = 1 ]; then
  COMPARE_TUI_MODELS_DIR="${COMPARE_TUI_MODELS_DIR:-$PWD/.state/models}" bash scripts/provision_vllm.sh
fi
# Keep the suite's files (state dir, store, assembled models) away from the user's own.
export COMPARE_TUI_TEST_ROOT="${COMPARE_TUI_TEST_ROOT:-$PWD/.state/test}"
mkdir -p "$COMPARE_TUI_TEST_ROOT"
export COMPARE_TUI_MODELS_DIR="${COMPARE_TUI_MODELS_DIR:-$PWD/.state/models}"
# A test that falls back to a default location (store, state, preferences) finds a fresh, empty
# one of the suite's own, never the user's ~/.local/share/compare-tui (whose store may be newer).
rm -rf "$COMPARE_TUI_TEST_ROOT/xdg"
for d in data state config cache; do mkdir -p "$COMPARE_TUI_TEST_ROOT/xdg/$d"; done
export XDG_DATA_HOME="$COMPARE_TUI_TEST_ROOT/xdg/data" XDG_STATE_HOME="$COMPARE_TUI_TEST_ROOT/xdg/state" \
       XDG_CONFIG_HOME="$COMPARE_TUI_TEST_ROOT/xdg/config" XDG_CACHE_HOME="$COMPARE_TUI_TEST_ROOT/xdg/cache"
# Lint and types first (configured in pyproject.toml), only for the whole suite: a run of
# chosen test files (arguments given) is a developer's quick loop.
if [ "$#" -eq 0 ] || [ -n "$TIER" ]; then
  .venv/bin/ruff check --quiet compare_tui tests bench  # set -e: a finding fails the suite
  .venv/bin/ruff format --check --quiet compare_tui tests bench
  echo "ruff: clean (lint and format)"
  .venv/bin/mypy
  # The documentation site, strictly: a broken link, a missing page or a bad anchor fails.
  NO_MKDOCS_2_WARNING=1 .venv/bin/mkdocs build --strict --quiet --site-dir "$COMPARE_TUI_TEST_ROOT/site"
  echo "docs: built strictly"
fi
exec .venv/bin/python -m pytest -q -p no:cacheprovider "$@"

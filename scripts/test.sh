#!/usr/bin/env bash
# The whole test suite. Integration tests start the embedded llama.cpp server themselves
# (tests/conftest.py) and fail, never skip, when it cannot be provisioned.
set -euo pipefail
cd "$(dirname "$0")/.."
# The TUI smoke test drives the app in a real terminal multiplexer.
if ! command -v tmux >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq && apt-get install -y -qq tmux >/dev/null
  else
    echo "tmux is needed by the TUI smoke test: install it (sudo apt-get install tmux)" >&2
    exit 2
  fi
fi
# The publish tests open bundles in a real headless browser (tests/test_publish_browser.py).
if ! command -v chromium >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq && apt-get install -y -qq chromium >/dev/null
  else
    echo "chromium is needed by the publish tests: install it (sudo apt-get install chromium)" >&2
    exit 2
  fi
fi
# Keep the suite's files (state dir, store, assembled models) away from the user's own.
export COMPARE_TUI_TEST_ROOT="${COMPARE_TUI_TEST_ROOT:-$PWD/.state/test}"
mkdir -p "$COMPARE_TUI_TEST_ROOT"
export COMPARE_TUI_MODELS_DIR="${COMPARE_TUI_MODELS_DIR:-$PWD/.state/models}"
# Lint and types first (configured in pyproject.toml), only for the whole suite: a run of
# chosen test files (arguments given) is a developer's quick loop.
if [ "$#" -eq 0 ]; then
  .venv/bin/ruff check --quiet compare_tui tests bench  # set -e: a finding fails the suite
  echo "ruff: clean"
  .venv/bin/mypy

fi
exec .venv/bin/python -m pytest -q -p no:cacheprovider "$@"

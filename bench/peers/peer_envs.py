"""Create the peers' environments (never the project's venv) and say which versions they hold.

inspect_ai goes into `bench/peers/.venv-inspect` (python3 -m venv + pip); promptfoo into
`bench/peers/.node` (npm --prefix). promptfoo is pinned to the newest release whose
`engines.node` still accepts Node 20 (0.120.20 onwards demand Node >= 22.22)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
INSPECT_VENV = HERE / ".venv-inspect"
NODE_PREFIX = HERE / ".node"
INSPECT_SPEC = ["inspect-ai==0.3.285", "openai"]
PROMPTFOO_SPEC = "promptfoo@0.120.19"


def inspect_python() -> Path:
    return INSPECT_VENV / "bin" / "python"


def promptfoo_bin() -> Path:
    return NODE_PREFIX / "node_modules" / ".bin" / "promptfoo"


def ensure() -> None:
    """Install both peers if they are missing (idempotent; needs the package registries)."""
    if (
        not inspect_python().exists()
        or subprocess.run([inspect_python(), "-c", "import inspect_ai, openai"], capture_output=True).returncode
    ):
        subprocess.run([sys.executable, "-m", "venv", INSPECT_VENV], check=True)
        subprocess.run([inspect_python(), "-m", "pip", "install", "-q", *INSPECT_SPEC], check=True)
    if not promptfoo_bin().exists():
        NODE_PREFIX.mkdir(exist_ok=True)
        subprocess.run(
            ["npm", "install", "--no-audit", "--no-fund", "--prefix", NODE_PREFIX, PROMPTFOO_SPEC], check=True
        )


def versions() -> dict[str, str]:
    """The installed versions, as the tools themselves report them."""
    out = {}
    out["inspect_ai"] = subprocess.run(
        [
            inspect_python(),
            "-c",
            "import inspect_ai, openai; print(inspect_ai.__version__, '(openai', openai.__version__ + ')')",
        ],
        capture_output=True,
        text=True,
    ).stdout.strip()
    out["promptfoo"] = (
        subprocess.run([promptfoo_bin(), "--version"], capture_output=True, text=True)
        .stdout.strip()
        .splitlines()[-1:][0:1]
    )
    out["promptfoo"] = (out["promptfoo"] or ["?"])[0]
    out["node"] = subprocess.run(["node", "--version"], capture_output=True, text=True).stdout.strip()
    root = Path(__file__).resolve().parents[2]
    out["compare-tui"] = subprocess.run(
        [root / ".venv" / "bin" / "python", "-c", "import compare_tui; print(compare_tui.__version__)"],
        capture_output=True,
        text=True,
        cwd=root,
    ).stdout.strip()
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=root
    ).stdout.strip()
    out["compare-tui"] += f" (git {commit}, working tree)"
    return out


if __name__ == "__main__":
    ensure()
    print(json.dumps(versions(), indent=2))

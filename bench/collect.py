"""Assemble bench/RESULTS.md from the per-benchmark files in bench/results/.

Each benchmark writes its own `bench/results/NAME.md` (with the command that produced it);
this joins them in a fixed order so RESULTS.md always matches what was last measured.

    .venv/bin/python bench/collect.py
"""

from __future__ import annotations

from pathlib import Path

HERE = Path(__file__).resolve().parent
ORDER = [
    "engine_overhead",
    "ttft_accuracy",
    "transport",
    "hashing",
    "sandbox",
    "store",
    "report",
    "publish",
    "tui",
    "sampling",
    "peers",
    "soak",
]
EMBEDDED = {"soak_chaos", "soak_load"}
"""Raw outputs of the soak scripts that soak.md quotes with its reading of them."""


def write_section(name: str, lines: list[str]) -> Path:
    """Write one benchmark's `results/NAME.md` (what `main` joins) and echo it."""
    out = HERE / "results" / f"{name}.md"
    out.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    print(f"wrote {out}")
    return out


def main() -> None:
    results = HERE / "results"
    files = {p.stem: p for p in results.glob("*.md") if p.stem not in EMBEDDED}
    names = [n for n in ORDER if n in files] + sorted(n for n in files if n not in ORDER)
    parts = [
        "# Benchmark results",
        "",
        "Measured on the project's development machine kind (2 cores, 24 GiB, no GPU), shared with other",
        "work, so absolute figures are noisy; ratios are measured side by side in one run. Each section",
        "names the command that produced it. Regenerate this file with `.venv/bin/python bench/collect.py`.",
        "",
    ]
    for name in names:
        text = files[name].read_text().strip()
        # Demote the section's own title one level under this page's.
        lines = [("#" + line) if line.startswith("#") else line for line in text.splitlines()]
        parts += lines + [""]
    (HERE / "RESULTS.md").write_text("\n".join(parts))
    print(f"wrote {HERE / 'RESULTS.md'} from {len(names)} result files")


if __name__ == "__main__":
    main()

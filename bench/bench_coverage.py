"""Simulated coverage of every interval the report labels 95 %.

For each interval family, counts (or per-run pass rates) are drawn from a known truth with
numpy's default_rng (fixed seed), the product's own function computes the interval, and
coverage is the share of draws whose interval contains the true value. Side by side: the
old percentile bootstraps the product used before (`paired_bootstrap_ci`,
`bootstrap_mean_ci`, with fewer resamples and fewer simulations) and Wilson on
(wins + ½ ties) for the win rate. Cells below 0.93 are flagged; with 2000 simulations a
cell's Monte Carlo standard error is about 0.005 at 95 %, so 0.93 is four of them below.

Intervals are memoised by their counts (many simulated count tuples repeat), so the whole
run takes a few minutes on one core. Prints the tables and writes bench/results/coverage.md,
then replaces (or appends) its section in bench/RESULTS.md.

    PYTHONPATH=. .venv/bin/python bench/bench_coverage.py [--sims 2000] [--boot-sims 1000]
"""

from __future__ import annotations

import argparse
import functools
import math
import os
import platform
import re
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from compare_tui.report import stats

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results" / "coverage.md"
RESULTS_MD = HERE / "RESULTS.md"
TITLE = "Coverage of every 95 % interval"
FLAG = 0.93
COMMAND = "PYTHONPATH=. .venv/bin/python bench/bench_coverage.py"

PAIRED_N = (10, 20, 50, 100, 200, 500)
PAIRED_SETTINGS = ((0.02, 0.0), (0.05, 0.02), (0.1, 0.1), (0.2, 0.1), (0.3, 0.25))
WILSON_N = (10, 20, 50, 64, 100, 200, 500)
WILSON_P = (0.01, 0.05, 0.2, 0.5, 0.9, 0.98)
WIN_N = (20, 100, 300)
WIN_TIES = (0.0, 0.3, 0.6, 0.9)
WIN_THETA = (0.5, 0.6, 0.75)
MEAN_RUNS = (3, 5, 10, 20, 50)
MEAN_BOOT_RUNS = (2, 3, 5)
MEAN_P = (0.3, 0.7, 0.9)
MEAN_TASKS = 50
PAIRED_BOOT = "paired_bootstrap_ci (old, for comparison)"
WILSON_HALF = "Wilson on wins + ½ ties (comparison)"
MEAN_BOOT = "bootstrap_mean_ci (old, for comparison)"
WILSON_PLAIN = "wilson_interval (plain, for comparison)"
COMPARISONS = {PAIRED_BOOT, WILSON_HALF, MEAN_BOOT, WILSON_PLAIN}


@dataclass
class Cell:
    family: str
    params: str
    coverage: float
    sims: int
    exact: float | None = None
    """The exact coverage, where it can be summed over every outcome (binomial intervals)."""

    @property
    def flagged(self) -> bool:
        # Where the exact coverage is known it decides: the simulated figure only adds noise.
        return self.exact < FLAG if self.exact is not None else self.coverage < FLAG

    def describe(self) -> str:
        exact = "" if self.exact is None else f", exact {self.exact:.3f}"
        return f"{self.family}: {self.params}: {self.coverage:.3f} simulated{exact}"


# ------------------------------------------------------------------ memoised intervals


@functools.cache
def paired(only_a: int, only_b: int, ties: int) -> tuple[float, float]:
    interval = stats.paired_interval(only_a, only_b, ties)
    return interval.low, interval.high


@functools.cache
def rejects(only_a: int, only_b: int) -> bool:
    return stats.mcnemar_exact(only_a, only_b) < 0.05


@functools.cache
def win_rate(wins: int, ties: int, losses: int) -> tuple[float, float]:
    interval = stats.win_rate_interval(wins, ties, losses)
    return interval.low, interval.high


@functools.cache
def proportion(successes: int, trials: int) -> tuple[float, float]:
    return ends(stats.proportion_interval(int(successes), int(trials)))


@functools.cache
def wilson(successes: float, trials: int) -> tuple[float, float]:
    interval = stats.wilson_interval(successes, trials)  # type: ignore[arg-type]  # half-counts
    return interval.low, interval.high


def ends(interval: stats.Interval | None) -> tuple[float, float]:
    assert interval is not None
    return interval.low, interval.high


def bounds_of(rows: np.ndarray, fn: Callable[..., tuple[float, float]]) -> tuple[np.ndarray, np.ndarray]:
    """Low and high bounds for each row of counts, computing each distinct row once."""
    unique, inverse = np.unique(rows, axis=0, return_inverse=True)
    found = np.array([fn(*(int(v) for v in row)) for row in unique])
    inverse = inverse.reshape(-1)
    return found[inverse, 0], found[inverse, 1]


def covered(low: np.ndarray, high: np.ndarray, truth: float) -> float:
    return float(np.mean((low <= truth) & (truth <= high)))


def fmt(value: float | None, flagged: bool = True) -> str:
    if value is None:
        return "—"
    text = f"{value:.3f}"
    return f"**{text}**" if flagged and value < FLAG else text


# ------------------------------------------------------------------ families


def paired_family(rng: np.random.Generator, sims: int, boot_sims: int, resamples: int, cells: list[Cell]) -> list[str]:
    coverage: dict[tuple[int, tuple[float, float]], tuple[float, float, float, float]] = {}
    disagree_total = boot_total = 0
    for setting in PAIRED_SETTINGS:
        p10, p01 = setting
        truth = p10 - p01
        for n in PAIRED_N:
            draws = rng.multinomial(n, [p10, p01, 1 - p10 - p01], size=sims)
            low, high = bounds_of(draws, paired)
            tango = covered(low, high, truth)
            # The bootstrap on the first `boot_sims` of the same draws, one seed per draw.
            seeds = rng.integers(0, 2**63, size=boot_sims)
            boot = np.array(
                [
                    ends(stats.paired_bootstrap_ci(int(a), int(b), int(t), int(s), resamples))
                    for (a, b, t), s in zip(draws[:boot_sims], seeds)
                ]
            )
            boot_cover = covered(boot[:, 0], boot[:, 1], truth)
            excludes = ~((boot[:, 0] <= 0.0) & (0.0 <= boot[:, 1]))
            exact = np.array([rejects(int(a), int(b)) for a, b, _ in draws[:boot_sims]])
            disagree = float(np.mean(excludes != exact))
            disagree_total += int(np.sum(excludes != exact))
            boot_total += boot_sims
            width = float(np.mean(high - low))
            coverage[(n, setting)] = (tango, boot_cover, disagree, width)
            cells.append(Cell("paired_interval (Tango + exact McNemar)", f"n={n}, p10={p10}, p01={p01}", tango, sims))
            cells.append(Cell(PAIRED_BOOT, f"n={n}, p10={p10}, p01={p01}", boot_cover, boot_sims))
    heads = [f"({p10}, {p01})" for p10, p01 in PAIRED_SETTINGS]
    lines = [
        "## Paired difference: `paired_interval` vs the old `paired_bootstrap_ci`",
        "",
        (
            f"True Δ = p10 − p01 (p10: share of tasks passed only by A, p01: only by B). Each cell: "
            f"coverage of `paired_interval` over {sims} simulations / of `paired_bootstrap_ci` "
            f"({resamples} resamples) over the first {boot_sims} of the same draws."
        ),
        "",
        "| n \\ (p10, p01) | " + " | ".join(heads) + " |",
        "|---:|" + "---:|" * len(heads),
    ]
    for n in PAIRED_N:
        row = [f"{fmt(coverage[(n, s)][0])} / {fmt(coverage[(n, s)][1])}" for s in PAIRED_SETTINGS]
        lines.append(f"| {n} | " + " | ".join(row) + " |")
    lines += [
        "",
        (
            'Share of the bootstrap draws whose "excludes zero" disagrees with exact McNemar p < 0.05 '
            "(`paired_interval` agrees by construction, 0 everywhere):"
        ),
        "",
        "| n \\ (p10, p01) | " + " | ".join(heads) + " |",
        "|---:|" + "---:|" * len(heads),
    ]
    for n in PAIRED_N:
        lines.append(f"| {n} | " + " | ".join(f"{coverage[(n, s)][2]:.3f}" for s in PAIRED_SETTINGS) + " |")
    lines += [
        "",
        (
            f"Overall: the bootstrap disagrees with the exact test in {disagree_total} of {boot_total} "
            f"draws ({disagree_total / boot_total:.1%})."
        ),
        "",
    ]
    lines += [
        "Mean width of `paired_interval`:",
        "",
        "| n \\ (p10, p01) | " + " | ".join(heads) + " |",
        "|---:|" + "---:|" * len(heads),
    ]
    for n in PAIRED_N:
        lines.append(f"| {n} | " + " | ".join(f"{coverage[(n, s)][3]:.3f}" for s in PAIRED_SETTINGS) + " |")
    return lines + [""]


def exact_coverage(n: int, p: float, interval: Callable[[int, int], tuple[float, float]]) -> float:
    """P(the interval contains p) summed over every outcome k = 0..n: no simulation noise."""
    total = 0.0
    for k in range(n + 1):
        low, high = interval(k, n)
        if low <= p <= high:
            total += math.comb(n, k) * p**k * (1 - p) ** (n - k)
    return total


def wilson_family(rng: np.random.Generator, sims: int, cells: list[Cell]) -> list[str]:
    lines = [
        "## Proportion: `proportion_interval` (the pass rate's) vs plain `wilson_interval`",
        "",
        (
            f"Successes ~ binomial(n, p), {sims} simulations per cell. Each cell: simulated coverage / "
            f"exact coverage of `proportion_interval` (exact, Clopper–Pearson) / "
            f"exact coverage of plain Wilson, for comparison (exact: the binomial probabilities of every "
            f"k whose interval contains p, summed)."
        ),
        "",
        "| n \\ p | " + " | ".join(str(p) for p in WILSON_P) + " |",
        "|---:|" + "---:|" * len(WILSON_P),
    ]
    for n in WILSON_N:
        row = []
        for p in WILSON_P:
            successes = rng.binomial(n, p, size=sims)
            low, high = bounds_of(np.column_stack([successes, np.full(sims, n)]), proportion)
            value = covered(low, high, p)
            exact = exact_coverage(n, p, proportion)
            plain = exact_coverage(n, p, wilson)
            cells.append(Cell("proportion_interval (Clopper–Pearson)", f"n={n}, p={p}", value, sims, exact))
            cells.append(Cell(WILSON_PLAIN, f"n={n}, p={p}", plain, sims, plain))
            row.append(f"{fmt(value)} / {fmt(exact)} / {fmt(plain)}")
        lines.append(f"| {n} | " + " | ".join(row) + " |")
    return lines + [""]


def win_family(rng: np.random.Generator, sims: int, cells: list[Cell]) -> list[str]:
    lines = [
        "## Win rate: `win_rate_interval` vs Wilson on (wins + ½ ties)",
        "",
        (
            f"θ = P(win) + ½·P(tie), tie share s, so P(win) = θ − s/2 and P(loss) = 1 − θ − s/2; "
            f"{sims} simulations per cell. Each cell: coverage of `win_rate_interval` / of Wilson on "
            f'(wins + ½ ties) / mean width ratio (ours ÷ Wilson). "—": no such trinomial '
            f"(s > 2·min(θ, 1 − θ))."
        ),
        "",
        "| n | tie share | " + " | ".join(f"θ = {t}" for t in WIN_THETA) + " |",
        "|---:|---:|" + "---|" * len(WIN_THETA),
    ]
    for n in WIN_N:
        for s in WIN_TIES:
            row = []
            for theta in WIN_THETA:
                p_win, p_loss = theta - s / 2, 1 - theta - s / 2
                if p_win < -1e-12 or p_loss < -1e-12:
                    row.append("—")
                    continue
                probs = np.clip([p_win, s, p_loss], 0.0, 1.0)
                draws = rng.multinomial(n, probs / probs.sum(), size=sims)
                low, high = bounds_of(draws, win_rate)
                half = np.column_stack([draws[:, 0] * 2 + draws[:, 1], np.full(sims, n)])
                # Wilson on half-counts: memoise on the doubled integer count.
                w_low, w_high = bounds_of(half, lambda twice, trials: wilson(twice / 2, trials))
                ours, theirs = covered(low, high, theta), covered(w_low, w_high, theta)
                ratio = float(np.mean(high - low) / np.mean(w_high - w_low))
                # Without ties the interval is binomial: its exact coverage is computable, no noise.
                exact = exact_coverage(n, theta, lambda k, m: win_rate(k, 0, m - k)) if s == 0 else None
                cells.append(Cell("win_rate_interval", f"n={n}, ties={s}, θ={theta}", ours, sims, exact))
                cells.append(Cell(WILSON_HALF, f"n={n}, ties={s}, θ={theta}", theirs, sims))
                row.append(f"{fmt(ours)} / {fmt(theirs)} / {ratio:.2f}")
            lines.append(f"| {n} | {s} | " + " | ".join(row) + " |")
    return lines + [""]


def mean_family(rng: np.random.Generator, sims: int, boot_sims: int, resamples: int, cells: list[Cell]) -> list[str]:
    runs_axis = sorted(set(MEAN_RUNS) | set(MEAN_BOOT_RUNS))
    table: dict[tuple[int, float], tuple[float | None, float | None]] = {}
    for p in MEAN_P:
        for runs in runs_axis:
            rates = rng.binomial(MEAN_TASKS, p, size=(sims, runs)) / MEAN_TASKS
            t_cover = boot_cover = None
            if runs in MEAN_RUNS:
                found = np.array([ends(stats.mean_interval(row)) for row in rates])
                t_cover = covered(found[:, 0], found[:, 1], p)
                cells.append(Cell("mean_interval (Student t)", f"N={runs}, p={p}", t_cover, sims))
            if runs in MEAN_BOOT_RUNS:
                seeds = rng.integers(0, 2**63, size=boot_sims)
                found = np.array(
                    [
                        ends(stats.bootstrap_mean_ci(row, int(seed), resamples))
                        for row, seed in zip(rates[:boot_sims], seeds)
                    ]
                )
                boot_cover = covered(found[:, 0], found[:, 1], p)
                cells.append(Cell(MEAN_BOOT, f"N={runs}, p={p}", boot_cover, boot_sims))
            table[(runs, p)] = (t_cover, boot_cover)
    lines = [
        "## Mean over repeated runs: `mean_interval` vs the old `bootstrap_mean_ci`",
        "",
        (
            f"Each run's pass rate ~ binomial({MEAN_TASKS} tasks, p) / {MEAN_TASKS}; the interval is of the mean "
            f"pass rate over N runs, the truth is p. Each cell: coverage of `mean_interval` over {sims} "
            f"simulations / of `bootstrap_mean_ci` ({resamples} resamples) over {boot_sims}. "
            f'"—": not computed (`mean_interval` gives None below N = 3; the report shows the range).'
        ),
        "",
        "| N runs \\ p | " + " | ".join(str(p) for p in MEAN_P) + " |",
        "|---:|" + "---:|" * len(MEAN_P),
    ]
    for runs in runs_axis:
        row = [f"{fmt(table[(runs, p)][0])} / {fmt(table[(runs, p)][1])}" for p in MEAN_P]
        lines.append(f"| {runs} | " + " | ".join(row) + " |")
    return lines + [""]


# ------------------------------------------------------------------ report


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def summary(cells: list[Cell]) -> list[str]:
    families: dict[str, list[Cell]] = {}
    for cell in cells:
        families.setdefault(cell.family, []).append(cell)
    lines = [
        "| interval | cells | simulations per cell | min coverage | at | cells < 0.93 (exact where known, else simulated) |",
        "|---|---:|---:|---:|---|---:|",
    ]
    for family, group in families.items():
        worst = min(group, key=lambda c: c.coverage)
        flagged = sum(c.flagged for c in group)
        value = fmt(worst.coverage)
        exact = [c for c in group if c.exact is not None]
        if exact:
            lowest = min(exact, key=lambda c: c.exact or 0.0)
            value += f" (exact: {fmt(lowest.exact)} at {lowest.params})"
        lines.append(f"| {family} | {len(group)} | {group[0].sims} | {value} | {worst.params} | {flagged} |")
    lines.append("")
    for label, keep in (
        ("the product's intervals", lambda c: c.family not in COMPARISONS),
        ("the comparisons (not used by the product)", lambda c: c.family in COMPARISONS),
    ):
        flagged_cells = [c for c in cells if c.flagged and keep(c)]
        if not flagged_cells:
            lines += [f"Cells below {FLAG}, {label}: none.", ""]
            continue
        lines += [f"Cells below {FLAG}, {label}:", ""]
        lines += [f"- {c.describe()}" for c in flagged_cells]
        lines.append("")
    return lines


def update_results_md(text: str) -> None:
    """Replace this benchmark's section of RESULTS.md (headings one level down, as
    bench/collect.py writes them), or append it when there is none."""
    section = "\n".join(("#" + line) if line.startswith("#") else line for line in text.strip().splitlines())
    current = RESULTS_MD.read_text(encoding="utf-8") if RESULTS_MD.exists() else "# Benchmark results\n"
    pattern = re.compile(rf"^## {re.escape(TITLE)}\n.*?(?=^## |\Z)", re.DOTALL | re.MULTILINE)
    if pattern.search(current):
        updated = pattern.sub(lambda _: section + "\n\n", current, count=1)
    else:
        updated = current.rstrip("\n") + "\n\n" + section + "\n"
    RESULTS_MD.write_text(updated.rstrip("\n") + "\n", encoding="utf-8")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sims", type=int, default=2000, help="simulations per cell")
    parser.add_argument("--boot-sims", type=int, default=1000, help="simulations per bootstrap cell")
    parser.add_argument("--resamples", type=int, default=1000, help="bootstrap resamples")
    parser.add_argument("--seed", type=int, default=20261203)
    parser.add_argument("--no-results-md", action="store_true", help="do not touch bench/RESULTS.md")
    args = parser.parse_args()

    rng = np.random.default_rng(args.seed)
    cells: list[Cell] = []
    timings: list[str] = []
    sections: list[str] = []
    start = time.perf_counter()
    for name, run in (
        ("paired", lambda: paired_family(rng, args.sims, args.boot_sims, args.resamples, cells)),
        ("wilson", lambda: wilson_family(rng, args.sims, cells)),
        ("win rate", lambda: win_family(rng, args.sims, cells)),
        ("mean", lambda: mean_family(rng, args.sims, args.boot_sims, args.resamples, cells)),
    ):
        began = time.perf_counter()
        sections += run()
        timings.append(f"{name} {time.perf_counter() - began:.0f} s")
        print(f"[{name}: {time.perf_counter() - began:.1f} s]", file=sys.stderr, flush=True)
    total = time.perf_counter() - start

    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    command = COMMAND
    if (args.sims, args.boot_sims, args.resamples, args.seed) != (2000, 1000, 1000, 20261203):
        command += f" --sims {args.sims} --boot-sims {args.boot_sims} --resamples {args.resamples} --seed {args.seed}"
    lines = [
        f"# {TITLE}",
        "",
        f"Command: `{command}`",
        "",
        f"- date: {time.strftime('%Y-%m-%d %H:%M %Z')}; seed {args.seed} (numpy default_rng); one process",
        (
            f"- machine: {cpu_model()}, {os.cpu_count()} logical CPUs visible, shared (load average "
            f"{load:.1f} at the end); Python {platform.python_version()}, numpy {np.__version__}"
        ),
        f"- run time: {total:.0f} s ({', '.join(timings)})",
        (
            f"- {args.sims} simulations per cell ({args.boot_sims} for the bootstrap cells, "
            f"{args.resamples} resamples each); Monte Carlo standard error ≈ "
            f"{(0.95 * 0.05 / args.sims) ** 0.5:.3f} at 95 % coverage. **Bold**: below {FLAG}."
        ),
        "",
        (
            "Coverage: the share of simulated data sets whose interval contains the true value. "
            "Every interval the report labels 95 % is here (`paired_interval`, `proportion_interval`, "
            "`win_rate_interval`, `mean_interval`); the bootstraps and Wilson-on-half-counts are the "
            "comparisons."
        ),
        "",
        "## Summary: minimum coverage per interval",
        "",
        *summary(cells),
        *sections,
    ]
    text = "\n".join(lines).rstrip("\n") + "\n"
    print(text)
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(text, encoding="utf-8")
    if not args.no_results_md:
        update_results_md(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())

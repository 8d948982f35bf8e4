"""The anytime-valid verdict (`report.sequential`): its error at every stopping time and the
tasks it would have saved, simulated on the coverage benchmark's grid of paired flip rates.

Each cell is a golden set of N tasks with exact counts (a share `only_a` of tasks passed only by
the candidate, `only_b` only by the baseline), so its Δ is known; simulations draw the order the
tasks run in (numpy's default_rng, fixed seed), independently per candidate (Bonferroni needs
no assumption on how candidates relate). Each look asks the product's own test
(`sequential.log_capital`, at `sequential.side_alpha(K)`) and the set's certain range, exactly
as `sequential.sequence` does (checked against it on the first draws of each cell).

- Error: every candidate sits on a null's edge: Δ = 0 (a "better" or a "worse" would be wrong)
  or Δ at the largest multiple of 1/N at or below −M (a "no worse" would be wrong). A wrong
  verdict is counted if the sequence shows it at *any* look up to N, so the figure bounds the
  error at every stopping time. Family-wise: any of the K candidates wrong. Target ≤ 0.05.
- Tasks: the look at which the verdict settles (no later outcome can change it), against the N
  tasks a run uses today, and against the fixed-sample test's own n for 80 % power
  (`power.tasks_needed` at the same level), with the sequence's chance to settle right by then.
- Method: the same cells through other bets (a finer mixture, one constant bet, the
  with-replacement form that ignores that the set is finite), beside the product's choice.

    PYTHONPATH=. .venv/bin/python bench/bench_sequential.py [--sims 1000]
"""

from __future__ import annotations

import argparse
import math
import re
import sys
import time
from pathlib import Path

import numpy as np

from compare_tui.report import power
from compare_tui.report.decision import Verdict, family_level
from compare_tui.report.sequential import BETS, Crossings, crossings, point_verdict, sequence, side_alpha

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_coverage import PAIRED_SETTINGS  # noqa: E402  (bench/ is not a package)

HERE = Path(__file__).resolve().parent
RESULTS_MD = HERE / "RESULTS.md"
TITLE = "Anytime-valid verdicts: error at every look and tasks saved"
COMMAND = "PYTHONPATH=. .venv/bin/python bench/bench_sequential.py"
MARGIN = 0.05
SIZES = (64, 200)
KS = (1, 2, 3, 4, 5)
DEMO = (0.56, 0.03)  # +53 points: the demo's Qwen against SmolLM2
EFFECTS = (DEMO, (0.3, 0.1), (0.2, 0.1), (0.1, 0.05), (0.1, 0.1), (0.05, 0.1))
FINE_BETS = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)
METHODS = {
    "mixture of 3 bets (0.25, 0.5, 0.75), without replacement (the product)": (BETS, True),
    "mixture of 9 bets (0.1 … 0.9), without replacement": (FINE_BETS, True),
    "one bet 0.5, without replacement": ((0.5,), True),
    "mixture of 3 bets, with replacement (the set taken as infinite)": (BETS, False),
}


def looks(orders: np.ndarray, total: int, alpha: float, bets: tuple[float, ...], finite: bool) -> Crossings:
    return crossings(orders, total, MARGIN * 100, alpha, bets, finite)


def settle(seen: Crossings) -> tuple[np.ndarray, np.ndarray]:
    """(the look each order settles at, 1-based; the verdict there as 0 better, 1 no worse, 2 worse)."""
    settled = seen.settled()
    n = settled.shape[-1]
    first = np.where(settled.any(axis=-1), settled.argmax(axis=-1), n - 1)
    rows = np.arange(settled.shape[0])
    verdict = np.where(seen.low_above_zero[rows, first], 0, np.where(seen.low_above_margin[rows, first], 1, 2))
    return first + 1, verdict


CODES = {Verdict.BETTER: 0, Verdict.NO_WORSE: 1, Verdict.WORSE: 2}


def population(only_a: float, only_b: float, total: int) -> np.ndarray:
    wins, losses = round(only_a * total), round(only_b * total)
    return np.array([1] * wins + [-1] * losses + [0] * (total - wins - losses))


def orders_of(rng: np.random.Generator, tasks: np.ndarray, sims: int) -> np.ndarray:
    return rng.permuted(np.broadcast_to(tasks, (sims, tasks.size)), axis=-1)


def self_check(orders: np.ndarray, total: int, k: int) -> None:
    """The vectorised looks agree with `sequential.sequence` itself on the first orders (those
    where the sequence never missed: there `sequence` falls back on the certain range, while
    these flags keep reading the crossed bounds; a chance of at most 2α, and the error figures
    count the statistics' rejections, which a miss does not hide)."""
    stops, verdicts = settle(looks(orders[:5], total, side_alpha(k), BETS, True))
    for row, stop, verdict in zip(orders[:5], stops, verdicts, strict=True):
        result = sequence(row.tolist(), total, margin_pp=MARGIN * 100, candidates=k)
        first = result.settled_at
        if any(look.missed for look in result.looks):
            continue
        assert first is not None and first.tasks == stop and CODES[first.verdict] == verdict, (first, stop, verdict)


def error_table(rng: np.random.Generator, sims: int) -> list[str]:
    lines = [
        "### Wrong verdicts at any look (family-wise over K candidates)",
        "",
        (
            f"Every candidate on a null's edge; {sims} orders per cell; a verdict counts as wrong if the sequence "
            "shows it at any look up to N (so this bounds the error at every stopping time). Columns: Δ = 0 "
            '(wrong "better" or "worse"), and Δ at or just below −M = −5 points (wrong "no worse"). Target ≤ 0.05.'
        ),
        "",
        "| flips (only cand. + only base) | N | K | Δ = 0: wrong better | wrong worse | Δ ≤ −M: wrong no worse |",
        "|---:|---:|---:|---:|---:|---:|",
    ]
    worst = 0.0
    for only_a, only_b in PAIRED_SETTINGS:
        flips = only_a + only_b
        for total in SIZES:
            below = math.floor(-MARGIN * total + 1e-9)
            half = round(flips * total / 2)
            even = np.array([1] * half + [-1] * half + [0] * (total - 2 * half))
            wins = max(0, (round(flips * total) + below) // 2)
            behind = np.array([1] * wins + [-1] * (wins - below) + [0] * (total - 2 * wins + below))
            assert even.sum() == 0 and behind.sum() == below
            for k in KS:
                alpha = side_alpha(k)
                zero = looks(orders_of(rng, even, sims * k), total, alpha, BETS, True)
                edge = looks(orders_of(rng, behind, sims * k), total, alpha, BETS, True)
                wrong_better = zero.low_above_zero.any(axis=-1).reshape(sims, k).any(axis=-1).mean()
                wrong_worse = zero.high_below_zero.any(axis=-1).reshape(sims, k).any(axis=-1).mean()
                wrong_nw = edge.low_above_margin.any(axis=-1).reshape(sims, k).any(axis=-1).mean()
                worst = max(worst, wrong_better + wrong_worse, wrong_nw)
                lines.append(
                    f"| {flips:.2f} | {total} | {k} | {wrong_better:.4f} | {wrong_worse:.4f} | {wrong_nw:.4f} |"
                )
    lines += [
        "",
        f"Largest family-wise error in any cell (better + worse at Δ = 0, or no worse at −M): {worst:.4f}.",
        "",
    ]
    return lines


def tasks_table(rng: np.random.Generator, sims: int) -> list[str]:
    lines = [
        "### Tasks used: where the verdict settles",
        "",
        (
            f"{sims} orders per cell. *Settled*: no outcome of the remaining tasks can change the verdict. "
            "*Requests saved*: the share of the (K + 1) × N requests a run sends today that it would not send "
            "(the baseline runs until its last candidate settles). *Fixed n (80 %)*: the fixed-sample test's own "
            "tasks for 80 % power at the same level (`power.tasks_needed`), and the sequence's chance to have "
            "settled right within that many tasks."
        ),
        "",
        "| only cand. | only base | Δ (pts) | N | K | mean settle task | median | 90th pct | right | requests saved | fixed n (80 %) | sequence settled right by then |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for only_a, only_b in EFFECTS:
        for total in SIZES:
            tasks = population(only_a, only_b, total)
            delta = tasks.sum() / total
            right = CODES[point_verdict(delta, MARGIN * 100)]
            for k in (1, 3):
                orders = orders_of(rng, tasks, sims * k)
                self_check(orders, total, k)
                stops, verdicts = settle(looks(orders, total, side_alpha(k), BETS, True))
                stops, verdicts = stops.reshape(sims, k), verdicts.reshape(sims, k)
                requests = (stops.max(axis=-1) + stops.sum(axis=-1)) / ((k + 1) * total)
                margin = None if right == 0 else MARGIN
                need = power.tasks_needed(only_a, only_b, margin=margin, level=family_level(k)) if right < 2 else None
                fixed = by_then = "—"
                if need is not None and need.tasks is not None:
                    fixed = f"{need.tasks:,}"
                    by_then = f"{np.mean((stops <= need.tasks) & (verdicts == right)):.2f}"
                lines.append(
                    f"| {only_a} | {only_b} | {delta * 100:+.1f} | {total} | {k} | {stops.mean():.1f} | "
                    f"{np.median(stops):.0f} | {np.quantile(stops, 0.9):.0f} | {np.mean(verdicts == right):.3f} | "
                    f"{1 - requests.mean():.0%} | {fixed} | {by_then} |"
                )
    return lines + [""]


def methods_table(rng: np.random.Generator, sims: int) -> list[str]:
    lines = [
        "### Choosing the bets",
        "",
        (
            f"K = 1, N = 64 and 200; {sims} orders per cell. Mean settle task on three effects, and the wrong "
            '"better" at Δ = 0 (flips 0.2) at any look.'
        ),
        "",
        "| method | N | +53 pts (demo) | +10 pts (0.2/0.1) | 0 pts (0.1/0.1) | wrong better at Δ = 0 |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for label, (bets, finite) in METHODS.items():
        for total in SIZES:
            cells = []
            for only_a, only_b in (DEMO, (0.2, 0.1), (0.1, 0.1)):
                orders = orders_of(rng, population(only_a, only_b, total), sims)
                stops, _ = settle(looks(orders, total, side_alpha(1), bets, finite))
                cells.append(f"{stops.mean():.1f}")
            null = looks(orders_of(rng, population(0.1, 0.1, total), sims), total, side_alpha(1), bets, finite)
            wrong = null.low_above_zero.any(axis=-1).mean()
            lines.append(f"| {label} | {total} | " + " | ".join(cells) + f" | {wrong:.4f} |")
    return lines + [""]


def update_results_md(text: str) -> None:
    """Replace this benchmark's section of RESULTS.md, or append it."""
    current = RESULTS_MD.read_text(encoding="utf-8")
    pattern = re.compile(rf"^## {re.escape(TITLE)}\n.*?(?=^## |\Z)", re.DOTALL | re.MULTILINE)
    if pattern.search(current):
        updated = pattern.sub(lambda _: text.strip() + "\n\n", current, count=1)
    else:
        updated = current.rstrip("\n") + "\n\n" + text.strip() + "\n"
    RESULTS_MD.write_text(updated.rstrip("\n") + "\n", encoding="utf-8")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sims", type=int, default=1000, help="orders simulated per cell")
    parser.add_argument("--seed", type=int, default=20261207)
    parser.add_argument("--no-results-md", action="store_true", help="do not touch bench/RESULTS.md")
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    started = time.perf_counter()
    body = error_table(rng, args.sims) + tasks_table(rng, args.sims) + methods_table(rng, max(200, args.sims // 2))
    took = time.perf_counter() - started
    text = "\n".join(
        [
            f"## {TITLE}",
            "",
            f"`{COMMAND} --sims {args.sims}` (seed {args.seed}, {took:.0f} s). Each candidate's sequence runs at "
            "α = 0.05 / (2K) a side (Bonferroni over K candidates and the two sides); margin M = 5 points.",
            "",
            *body,
        ]
    )
    print(text)
    if not args.no_results_md:
        update_results_md(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

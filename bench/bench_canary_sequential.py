"""The canary's anytime-valid verdict on an unbounded stream (`report.sequential.stream_look`,
the with-replacement form): its type-I error when looked at after every pair, beside a raw
pass-rate delta peeked at the same way (the optional-stopping flaw), and the pairs it needs to
reach a verdict for a few true differences.

Outcomes x = candidate − baseline ∈ {−1, 0, +1} are drawn independently; "discordance" is
P(x ≠ 0). Type-I: Δ = 0 exactly, a false "better" or "worse" at any look up to `--looks` (two
one-sided tests at α/2 each, α = 0.05). Power: the first look with a verdict other than "not
yet", and which one, at margin 5 points.

    PYTHONPATH=. .venv/bin/python bench/bench_canary_sequential.py [--streams 4000] [--looks 2000]
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from compare_tui.report.sequential import side_alpha, stream_look, stream_rejections  # noqa: E402

ALPHA = 0.05


def draws(rng: np.random.Generator, shape: tuple[int, int], up: float, down: float) -> np.ndarray:
    u = rng.random(shape)
    return np.where(u < up, 1, np.where(u < up + down, -1, 0)).astype(np.int8)


def type_one(rng: np.random.Generator, streams: int, looks: int, discordance: float) -> tuple[float, float]:
    ours = peeking = 0
    for start in range(0, streams, 500):
        x = draws(rng, (min(500, streams - start), looks), discordance / 2, discordance / 2).astype(float)
        a = side_alpha(1, ALPHA)
        ours += int((stream_rejections(x, 0.0, a) | stream_rejections(-x, 0.0, a)).sum())
        n = np.arange(1, looks + 1)
        mean = np.cumsum(x, axis=-1) / n
        sd = np.sqrt(np.maximum(np.cumsum(x**2, axis=-1) / n - mean**2, 1e-12))
        peeking += int((np.abs(mean) > 1.96 * sd / np.sqrt(n))[:, 10:].any(axis=-1).sum())
    return ours / streams, peeking / streams


def pairs_to_verdict(rng: np.random.Generator, delta: float, discordance: float, looks: int, runs: int) -> str:
    up, down = (discordance + delta) / 2, (discordance - delta) / 2
    found: list[int] = []
    verdicts: dict[str, int] = {}
    for _ in range(runs):
        x = [int(v) for v in draws(rng, (1, looks), up, down)[0]]
        lo, hi = 1, looks
        if stream_look(x, margin_pp=5).verdict.value == "inconclusive":
            verdicts["not yet"] = verdicts.get("not yet", 0) + 1
            continue
        while lo < hi:  # the verdict, once reached, keeps its bound crossed: bisect the first look
            mid = (lo + hi) // 2
            lo, hi = (mid + 1, hi) if stream_look(x[:mid], margin_pp=5).verdict.value == "inconclusive" else (lo, mid)
        found.append(lo)
        verdict = stream_look(x[:lo], margin_pp=5).verdict.value
        verdicts[verdict] = verdicts.get(verdict, 0) + 1
    median = f"{statistics.median(found):.0f}" if found else "–"
    return f"{median} | " + ", ".join(f"{k} {v}" for k, v in sorted(verdicts.items()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--streams", type=int, default=4000)
    parser.add_argument("--looks", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=100)
    args = parser.parse_args()
    rng = np.random.default_rng(51)
    print(f"type-I error, Δ = 0, a look after every pair up to {args.looks}, {args.streams} streams, α = {ALPHA}")
    print("| discordance | anytime-valid (ours) | raw delta, z-test peeked at every look from 10 |")
    print("|---:|---:|---:|")
    for discordance in (0.1, 0.3, 0.6):
        ours, peeking = type_one(rng, args.streams, args.looks, discordance)
        print(f"| {discordance:g} | {ours:.4f} | {peeking:.3f} |")
    print(f"\npairs to the first verdict (median over {args.runs} streams, up to {args.looks} pairs), margin 5 points")
    print("| true Δ | discordance | median pairs | verdicts |")
    print("|---:|---:|---:|---|")
    for delta, discordance in ((-0.5, 0.5), (-0.2, 0.3), (-0.1, 0.3), (0.0, 0.1), (0.1, 0.3), (0.5, 0.5)):
        print(f"| {delta:+g} | {discordance:g} | {pairs_to_verdict(rng, delta, discordance, args.looks, args.runs)} |")


if __name__ == "__main__":
    main()

"""How many paired tasks a verdict needs: exact power of the test the report uses.

A verdict comes from the paired interval of `stats.paired_interval` at the decision's level
(95 %, or 1 − 0.05/K with K candidates). Its two questions are tests on the counts of tasks only
the candidate passed (b) and only the baseline passed (c), out of n:

- **better** (the interval's lower bound above 0) exactly when the exact McNemar test rejects
  at 1 − level and b > c;
- **no worse** within M points (lower bound above −M) exactly when Tango's score statistic at
  Δ = −M exceeds the interval's z (the score decreases in Δ, and the reconciliation with the
  exact test only moves bounds at zero).

`verdict_power` sums the trinomial probabilities of every (b, c) that gives the verdict, at
flip rates "like these" (the observed shares), so it is the power of the report's own test, not
a normal approximation to it (Connor's formula, the usual one, gives 0.77–0.79 by the exact
test and nothing sensible at a handful of tasks). `tasks_needed` finds the fewest tasks with at
least 80 % power, or None where no number of tasks would reach it (the candidate does not lead,
or trails by the margin or more) or more than `MAX_TASKS` would be needed.

`plan_tasks` is what the report states. Flip rates read off a pilot understate how often the
two models disagree when few tasks separated them (0 of 40 separated says little about 2 %),
and a plan from them promises more than it delivers (from a 40-task pilot of models 1 % apart
each way, the plug-in n had a median true power of 0.54). So the plan is made for a
discordance (b + c)/n as high as its one-sided `PLANNING_CONFIDENCE` Clopper–Pearson upper
bound, with the observed lead b − c (for *no worse*, no lead where the pilot saw one); with no
task separating the two yet it says so and plans for that bound. `bench/bench_coverage.py`
checks the median true power at the stated n, over simulated pilots, against 0.80.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, replace

import numpy as np

from compare_tui.report.stats import Z80_POWER, proportion_interval, regularized_beta, z_for

MAX_TASKS = 20_000
"""Above this many tasks a sample size is called out of reach rather than computed."""
POWER = 0.80
PLANNING_CONFIDENCE = 0.90
"""The one-sided confidence of the upper bound of the discordance a plan is made for."""


@dataclass(frozen=True, slots=True)
class TasksNeeded:
    """Paired tasks for `POWER` to show a verdict, by the report's own test."""

    goal: str
    """`better`, or `no worse` (within the margin)."""
    tasks: int | None
    """Tasks in all; None when out of reach (see `reason`)."""
    power: float | None
    """The exact power at `tasks` (at least 0.80)."""
    reason: str | None = None
    """Why there is no figure, in words."""
    discordance: float | None = None
    """The share of tasks that separate the two models (one passes, the other not) that the plan
    is made for: the observed share's upper bound (`plan_tasks`); None for a plug-in figure."""
    observed: float | None = None
    """The share of the pilot's tasks that separated them (None for a plug-in figure)."""
    lead: float | None = None
    """The lead the plan assumes, candidate − baseline as a share (None for a plug-in figure)."""

    @property
    def separated(self) -> bool:
        """Some task of the pilot separated the two models (False: every task was a tie)."""
        return bool(self.observed)


def _log_factorials(n: int) -> np.ndarray:
    return np.concatenate(([0.0], np.cumsum(np.log(np.arange(1, n + 1, dtype=float)))))


def _span(n: int, p: float) -> np.ndarray:
    """The counts of a binomial(n, p) that carry all but a negligible share of its mass."""
    if p <= 0.0:
        return np.zeros(1, dtype=np.int64)
    if p >= 1.0:
        return np.full(1, n, dtype=np.int64)
    sd = math.sqrt(n * p * (1 - p))
    low, high = max(0, math.floor(n * p - 9 * sd - 3)), min(n, math.ceil(n * p + 9 * sd + 3))
    return np.arange(low, high + 1, dtype=np.int64)


def _xlogp(count: np.ndarray, p: float) -> np.ndarray:
    if p <= 0.0:
        return np.where(count == 0, 0.0, -np.inf)
    return count * math.log(p)


def tango_scores(b: np.ndarray, c: np.ndarray, n: int, delta: float) -> np.ndarray:
    """Tango's score statistic at Δ for every (b, c), as `stats.paired_interval` computes it.
    `b` and `c` may be a column and a row: the result is their broadcast grid."""
    numerator, variance = _tango_parts(b, c, n, delta)
    with np.errstate(divide="ignore", invalid="ignore"):
        scores = numerator / np.sqrt(variance)
        signed_inf = np.where(numerator == 0, 0.0, np.copysign(np.inf, numerator))
    return np.where(variance > 1e-300, scores, signed_inf)


def _tango_parts(b: np.ndarray, c: np.ndarray, n: int, delta: float) -> tuple[np.ndarray, np.ndarray]:
    """The score's numerator and variance (the score is their ratio to the variance's root)."""
    b, c = b.astype(float), c.astype(float)
    big_b = -b - c + (2 * n - b + c) * delta
    big_c = -c * delta * (1 - delta)
    q = (np.sqrt(np.maximum(0.0, big_b * big_b - 8 * n * big_c)) - big_b) / (4 * n)
    return b - c - n * delta, n * (2 * q + delta * (1 - delta))


def _tango_exceeds(b: np.ndarray, c: np.ndarray, n: int, delta: float, z: float) -> np.ndarray:
    """`tango_scores(b, c, n, delta) > z` for z > 0, without the division: where the variance
    vanishes the score is ±inf by the numerator's sign, which the same comparison gives."""
    numerator, variance = _tango_parts(b, c, n, delta)
    exceeds: np.ndarray = numerator > z * np.sqrt(np.maximum(variance, 0.0))
    return exceeds


@functools.lru_cache(maxsize=65_536)
def mcnemar_critical(discordant: int, alpha: float) -> int:
    """The least b > m/2 (m = `discordant`) that the exact two-sided McNemar test rejects at
    `alpha`; m + 1 when none does. Searched from the normal approximation, checked exactly."""
    m = discordant
    if m == 0:
        return 1

    def rejects(b: int) -> bool:
        return 2 * b > m and b <= m and 2 * regularized_beta(b, m - b + 1, 0.5) < alpha  # 2·P(X ≥ b)

    b = max(m // 2 + 1, min(m, math.ceil(m / 2 + z_for(1 - alpha) * math.sqrt(m) / 2)))
    if rejects(b):
        while b - 1 > m / 2 and rejects(b - 1):
            b -= 1
        return b
    while b <= m and not rejects(b):
        b += 1
    return b


def verdict_power(n: int, only_a: float, only_b: float, *, margin: float | None, level: float = 0.95) -> float:
    """P(the verdict is shown) over n paired tasks where a task is passed only by the candidate
    with probability `only_a` and only by the baseline with `only_b`. `margin` (a share, e.g.
    0.05) asks for *no worse* within it (better counts too); None asks for *better*."""
    if n <= 0:
        return 0.0
    log_fact = _log_factorials(n)
    b = _span(n, only_a)[:, None]
    c = _span(n, only_b)[None, :]
    rest = n - b - c
    valid = rest >= 0
    rest_safe = np.where(valid, rest, 0)
    # The multinomial's log-probabilities: the parts of b and of c alone are a column and a row.
    log_p = (
        (log_fact[n] - log_fact[b] + _xlogp(b, only_a))
        + (_xlogp(c, only_b) - log_fact[c])
        + (_xlogp(rest_safe, max(0.0, 1 - only_a - only_b)) - log_fact[rest_safe])
    )
    prob = np.where(valid, np.exp(log_p), 0.0)
    if margin is None:
        total = b + c
        first = int(total.min())
        critical = np.array([mcnemar_critical(m, 1 - level) for m in range(first, int(total.max()) + 1)])
        shown = valid & (b >= critical[total - first])
    else:
        shown = valid & _tango_exceeds(b, c, n, -margin, z_for(level))
    return float(prob[shown].sum())


def _first_guess(only_a: float, only_b: float, margin: float, level: float) -> int:
    """Connor's (1987) normal approximation, shifted by the margin: where the search starts."""
    psi, delta = only_a + only_b, only_a - only_b + margin
    z = z_for(level)
    top = (z * math.sqrt(max(psi, 1e-9)) + Z80_POWER * math.sqrt(max(0.0, psi - (only_a - only_b) ** 2))) ** 2
    return max(2, math.ceil(top / (delta * delta)))


@functools.lru_cache(maxsize=1024)  # a report is rebuilt on every refresh: the search runs once per setting
def tasks_needed(only_a: float, only_b: float, *, margin: float | None, level: float = 0.95) -> TasksNeeded:
    """The fewest paired tasks with at least 80 % power to show *better* (`margin` None) or
    *no worse* within `margin` (a share), at flip rates `only_a` (candidate only) and `only_b`."""
    goal = "better" if margin is None else "no worse"
    shift = 0.0 if margin is None else margin
    if only_a - only_b + shift <= 0:
        reason = (
            "its pass rate on these tasks is not higher, so more tasks like these would not show it better"
            if margin is None
            else "it trails by the margin or more on these tasks, so more tasks like these would not show it no worse"
        )
        return TasksNeeded(goal, None, None, reason)

    @functools.cache
    def power(n: int) -> float:
        return verdict_power(n, only_a, only_b, margin=margin, level=level)

    high = min(_first_guess(only_a, only_b, shift, level), MAX_TASKS)
    while power(high) < POWER:
        if high >= MAX_TASKS:
            return TasksNeeded(goal, None, None, f"more than {MAX_TASKS:,} tasks like these would be needed")
        high = min(2 * high, MAX_TASKS)
    low = 0  # power(0) = 0 < POWER
    while high - low > 1:
        mid = (low + high) // 2
        if power(mid) >= POWER:
            high = mid
        else:
            low = mid
    return TasksNeeded(goal, high, power(high))


def planning_rates(only_a: int, only_b: int, tasks: int, *, no_worse: bool) -> tuple[float, float]:
    """The flip rates a plan is made for: the discordance (b + c)/n raised to its one-sided
    `PLANNING_CONFIDENCE` Clopper–Pearson upper bound, and the observed lead (b − c)/n, except
    that a *no worse* plan assumes no lead where one was seen (the usual non-inferiority plan:
    a pilot's chance lead would otherwise shrink the n)."""
    interval = proportion_interval(only_a + only_b, tasks, 2 * PLANNING_CONFIDENCE - 1)
    if interval is None:
        raise ValueError("a plan needs at least one task")
    lead = (only_a - only_b) / tasks
    if no_worse:
        lead = min(lead, 0.0)
    return (interval.high + lead) / 2, (interval.high - lead) / 2


def plan_tasks(only_a: int, only_b: int, tasks: int, *, margin: float | None, level: float = 0.95) -> TasksNeeded:
    """The tasks the report states for 80 % power to show *better* (`margin` None) or *no worse*
    within `margin`, from a pilot of `tasks` paired tasks where `only_a` were passed only by the
    candidate and `only_b` only by the baseline: `tasks_needed` at `planning_rates`."""
    plan_a, plan_b = planning_rates(only_a, only_b, tasks, no_worse=margin is not None)
    need = tasks_needed(plan_a, plan_b, margin=margin, level=level)
    return replace(need, discordance=plan_a + plan_b, observed=(only_a + only_b) / tasks, lead=plan_a - plan_b)


def plan_basis(need: TasksNeeded, done: int) -> str:
    """What a plan over `done` tasks so far is made for, in words: `planned for as many as 5.6%
    of tasks separating the two (3 of 40 did here)`, or `(no task has separated them yet)`."""
    if need.discordance is None or need.observed is None:
        return "at flip rates like these"
    seen = round(need.observed * done)
    pilot = f"{seen} of {done} did here" if seen else "no task has separated them yet"
    return f"planned for as many as {need.discordance:.1%} of tasks separating the two ({pilot})"


def need_words(need: TasksNeeded, done: int, *, basis: bool = True) -> str:
    """A plan in words, for `done` tasks compared so far: `about 1,234 tasks in all (1,194 more)
    for 80 % power`, then the lead it assumes where that is not "this size" (a *no worse* plan
    assumes none where one was seen) and, with `basis`, `plan_basis`; or `out of reach (why)`."""
    if need.tasks is None:
        return f"out of reach ({need.reason})"
    more = max(0, need.tasks - done)
    text = f"about {need.tasks:,} tasks in all ({more:,} more) for {POWER * 100:.0f} % power"
    if need.lead is not None and not basis:
        if need.goal == "better":
            text += f" if its lead of {need.lead * 100:.1f} points is real"
        elif need.lead == 0 and need.observed:
            text += " if it has no real lead"
        elif need.lead < 0:
            text += f" if it trails by {-need.lead * 100:.1f} points, as here"
    return text + (f", {plan_basis(need, done)}" if basis else "")

"""How the human-readable renderers (terminal, Markdown, TUI) write a figure: one spelling of
each number, so every surface shows the same string. Formatting only; no figure is computed.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from compare_tui.report.cost import Cost
from compare_tui.report.figures import GpuMemory, PassRate, Tokens
from compare_tui.report.gpu_words import DASH as DASH
from compare_tui.report.gpu_words import byte_size as byte_size
from compare_tui.report.gpu_words import gpu as gpu
from compare_tui.report.gpu_words import gpu_line as gpu_line
from compare_tui.report.gpu_words import gpu_source as gpu_source
from compare_tui.report.inputs import StepGrading
from compare_tui.report.stats import Interval, Percentiles
from compare_tui.report.trajectories import DRIVEN, LOST, RunStrip, Trajectories
from compare_tui.store.summary import RunSummary
from compare_tui.vocabulary import money as money  # re-exported: the renderers format money here
from compare_tui.vocabulary import plural as plural

MARKS = {"pass": "✓", "fail": "✗", "review": "?", "error": "!", "missing": "·"}
"""One mark per block status: the shape carries the meaning, colour only repeats it."""
MARK_WORDS = {
    "pass": "pass",
    "fail": "fail",
    "review": "needs a person",
    "error": "error (scorer or request failed)",
    "missing": "not done",
}


def confidence(level: str | None) -> str:
    """The rule's confidence as every surface writes it: `high`, `medium`, `low`, or `none`
    when there is no recommendation (lower case, as the JSON and the rule spell it)."""
    return level or "none"


def percent(share: float | None, digits: int = 1) -> str:
    return DASH if share is None else f"{share * 100:.{digits}f}%"


def interval(value: Interval | None) -> str:
    return DASH if value is None else f"{value.low * 100:.1f}–{value.high * 100:.1f}%"


def pass_rate(rate: PassRate) -> str:
    """`80.0% (8/10)`."""
    if rate.rate is None:
        return f"{DASH} (0 scored)"
    return f"{percent(rate.rate)} ({rate.passed}/{rate.scored})"


def latency(p: Percentiles) -> str:
    """`120/340/410 ms` (p50/p95/p99), in seconds when the slowest is 10 s or more."""
    if p.n == 0 or p.p50 is None or p.p95 is None or p.p99 is None:
        return DASH
    if p.p99 < 10_000:
        return f"{p.p50:.0f}/{p.p95:.0f}/{p.p99:.0f} ms"
    return f"{p.p50 / 1000:.1f}/{p.p95 / 1000:.1f}/{p.p99 / 1000:.1f} s"


def tokens(t: Tokens) -> str:
    if t.prompt_per_task is None or t.completion_per_task is None:
        return DASH
    return f"{t.prompt_per_task:,.0f} + {t.completion_per_task:,.0f}"


def cost_per_task(cost: Cost) -> str:
    return money(cost.per_task, cost.currency)


def cost_basis(cost: Cost, gpu: GpuMemory | None = None) -> str:
    """The basis in words: `hardware $2/h (1 GPU)` or `token price $0.15 in / $0.6 out per Mtok,
    captured 2026-11-30`. The GPUs are as the catalogue states them (`gpu_count`: read by
    `models add` or given, never assumed); given the run's `gpu` figure, a stated count that the
    run did not measure, or measured otherwise, says so: `(1 GPU stated; none measured)`."""
    if cost.basis == "hardware":
        return f"hardware {money(cost.usd_per_hour, cost.currency)}/h ({_gpus(cost.gpu_count, gpu)})"
    return (
        f"token price {money(cost.price_input, cost.currency)} in / {money(cost.price_output, cost.currency)} "
        f"out per Mtok, captured {cost.captured}"
    )


def _gpus(count: int | None, gpu: GpuMemory | None) -> str:
    if count is None:
        return "GPU count not stated"
    stated = "no GPU" if count == 0 else f"{count} GPU{'s' if count > 1 else ''}"
    if gpu is None or not gpu.applicable or (count == 0 and not gpu.measured):
        return stated
    if not gpu.measured:
        return f"{stated} stated; none measured"
    return stated if gpu.devices == count else f"{stated} stated; {gpu.devices} measured"


MINUS = "\u2212"
"""The sign of every negative figure shown, on every surface (text, Markdown, HTML, TUI): a real
minus, `−`, never the hyphen `-`. `number` and `signed` write it."""


def number(value: float, spec: str) -> str:
    """`value` as `format(value, spec)` writes it (`.1f`, `+.2f`, `+,`, `>+6.2f`), its sign a real
    minus (`MINUS`) when it has one: `−0.25`, `+1.5`, `−1,200`."""
    text = format(value, spec)
    # The sign comes before any digit; a later hyphen (an exponent's, `1e-05`) is not a sign.
    return text.replace("-", MINUS, 1) if text.lstrip().startswith("-") else text


def signed(value: float | None, unit: str = "", digits: int = 1) -> str:
    """`+1.2 pts`, `−40.0%`: an explicit sign (a real minus), or a dash when unknown."""
    if value is None:
        return DASH
    return number(value, f"+.{digits}f") + unit


def bound(value: float) -> str:
    """An interval bound in points, with the digits it needs to show its side of zero: `+1.6`,
    `−0.03`, and exactly zero as `0.0` (never `+0.0`, which would hide a bound that touches it)."""
    if value == 0:
        return "0.0"
    if abs(value) < 0.05:
        digits = min(6, 1 - math.floor(math.log10(abs(value))))
        return signed(value, "", digits)
    return signed(value)


def points_interval(low_high: tuple[float, float] | None, marks: Sequence[float] = ()) -> str:
    """`−4.0 to +1.6 pts`; a bound near zero keeps the digits that show its side (`bound`), and
    so does a bound near one of `marks` (the margin −M: `−4.97`, never a `−5.0` that could be
    either side of it)."""
    if low_high is None:
        return DASH
    return f"{bound_near(low_high[0], marks)} to {bound_near(low_high[1], marks)} pts"


def bound_near(value: float, marks: Sequence[float] = ()) -> str:
    """`bound(value)`, with as many more digits (up to six) as it takes for the printed bound to
    fall on the same side of each of `marks` as the bound itself (equal only when it is equal)."""
    text = bound(value)
    for digits in range(2, 7):
        shown = float(text.replace("−", "-").replace("+", ""))
        if all(shown != mark and (shown < mark) == (value < mark) or value == mark for mark in marks):
            return text
        text = signed(value, "", digits)
    return text


def level(confidence: float) -> str:
    """`95%`, `98.3%`: an interval's confidence level as a label."""
    return f"{confidence * 100:.3g}%"


def runs_driven(t: Trajectories) -> str:
    """`3 of 4 runs (75.0%, 95% CI 19.4–99.4%)`, plus how many were not decided."""
    text = f"{t.driven} of {t.decided} runs"
    if t.decided:
        text += f" ({percent(t.rate)}, 95% CI {interval(t.interval)})"
    if t.undecided:
        text += f"; {t.undecided} not decided"
    return text


def step_rate(t: Trajectories) -> str:
    """`8/9 steps (88.9%, 95% CI 51.8–99.7%)`, plus the steps not measured."""
    measured = t.steps_kept + t.steps_lost
    text = f"{t.steps_kept}/{measured} steps"
    if measured:
        text += f" ({percent(t.step_rate)}, 95% CI {interval(t.step_interval)})"
    if t.steps_not_measured:
        text += f"; {t.steps_not_measured} not measured"
    return text


def strip_marks(strip: RunStrip) -> str:
    """The run's steps as marks, step 1 first: `✓✓✗✓`."""
    return "".join(MARKS[s] for s in strip.statuses)


def tally_marks(t: RunSummary) -> str:
    """`✓10 ✗9 ?2 !0 of 21` (and `·3` when tasks are not done): a run's task tallies in one
    short cell (`runs list`, the TUI's Home)."""
    not_done = f" {MARKS['missing']}{t.not_done}" if t.not_done else ""
    return (
        f"{MARKS['pass']}{t.passed} {MARKS['fail']}{t.failed} {MARKS['review']}{t.review} "
        f"{MARKS['error']}{t.errored}{not_done} of {t.tasks_planned}"
    )


def strip_widths(t: Trajectories) -> tuple[int, int]:
    """The longest run id and the most steps among `t`'s strips: the widths that line the
    strips and their results up in columns when runs have different numbers of steps."""
    return max((len(s.run) for s in t.runs), default=0), max((len(s.statuses) for s in t.runs), default=0)


def run_verdict(strip: RunStrip) -> str:
    """`driven`, `lost at step 3`, or `not decided (step 2 not measured)`; with `, step 4 by
    a judge's grade` when a stored grade decided a step waiting for a person."""
    graded = ""
    if strip.by_grade:
        steps = ", ".join(str(s) for s in strip.by_grade)
        graded = f", step{'s' if len(strip.by_grade) > 1 else ''} {steps} by a judge's grade"
    if strip.verdict == DRIVEN:
        return "driven" + graded
    if strip.verdict == LOST:
        return f"lost at step {strip.first_lost}" + graded
    steps = ", ".join(str(s) for s in strip.not_measured)
    return f"not decided (step{'s' if len(strip.not_measured) > 1 else ''} {steps} not measured)" + graded


def steps_by_grade(report_grading: StepGrading, fig: Trajectories) -> str:
    """`2 steps decided by gemma3-270m's grades (similarity, kept from 4)`: the steps that
    waited for a person (the caveat says so in full)."""
    steps = "step" if fig.steps_by_grade == 1 else "steps"
    return (
        f"{fig.steps_by_grade} {steps} decided by {report_grading.judge}'s grades "
        f"({report_grading.rubric}, kept from {report_grading.pass_at})"
    )

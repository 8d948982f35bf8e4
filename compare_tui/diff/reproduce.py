"""The reproduce check: two runs of one golden set and one pinned model, compared against
stated tolerances (`tolerances.py`).

Pure. Every figure compared is read from each run's own report (`build_report`), the one
place figures are computed: pass rate, end-to-end p50 latency and total tokens; agreement is
the share of tasks scored in both runs whose report status is the same. Before comparing,
what should have been held fixed is checked — settings, server build, chat template, the
endpoint and serving notes, cost basis — and every difference is flagged. Two runs of
different golden sets (digest) or different model pins are not a reproduction at all:
`NotComparable`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from compare_tui.diff.ab import ChangedTask
from compare_tui.diff.tolerances import Tolerance
from compare_tui.errors import CompareTuiError
from compare_tui.experiment.cells import RUN_SETTINGS, canonical, normalised_settings
from compare_tui.experiment.confounds import FIXED_VARIABLES
from compare_tui.report import ReportInputs, build_report
from compare_tui.report.figures import ModelFigures
from compare_tui.store import RunRecord
from compare_tui.vocabulary import MISSING, Outcome, RunStatus, TaskStatus

PINS = ("model", "revision", "weights_digest", "files")
"""The recorded pins two runs must share to be a reproduction of each other."""
_SCORED = (Outcome.PASS, Outcome.FAIL, Outcome.ERROR)
_EPSILON = 1e-9  # a delta equal to its tolerance is within it, whatever float rounding says


class NotComparable(CompareTuiError, ValueError):
    """The two runs cannot reproduce each other (different set or model); the message says why."""


@dataclass(frozen=True, slots=True)
class Difference:
    """Something that should be the same in both runs and is not (flagged before comparing)."""

    what: str
    a: str
    b: str


@dataclass(frozen=True, slots=True)
class FigureCheck:
    """One figure of both runs, its delta, and the verdict against its tolerance."""

    name: str
    a: float | None
    b: float | None
    delta: float | None
    """pass_rate: b − a (a share); agreement: the observed share; latency_p50 and tokens: |b − a| / a."""
    tolerance: Tolerance
    within: bool
    note: str = ""


@dataclass(frozen=True, slots=True)
class ReproduceCheck:
    """The whole check, as every surface shows it."""

    run_a: str
    run_b: str
    model_name: str
    goldset: str
    differences: tuple[Difference, ...]
    figures: tuple[FigureCheck, ...]
    changed: tuple[ChangedTask, ...]
    compared_tasks: int
    """Tasks scored automatically in both runs (the agreement's denominator)."""
    human_tasks: int

    @property
    def reproduced(self) -> bool:
        """True when every figure is within its tolerance."""
        return all(check.within for check in self.figures)

    @property
    def outside(self) -> tuple[FigureCheck, ...]:
        return tuple(check for check in self.figures if not check.within)


def _text(value: object) -> str:
    return "not recorded" if value is None else value if isinstance(value, str) else canonical(value)


def differences(a: RunRecord, b: RunRecord) -> tuple[Difference, ...]:
    """What should be fixed between two runs but differs: each setting, then every fixed
    variable the experiments check (`confounds.FIXED_VARIABLES`), endpoint and serving notes."""
    found = []
    if a.status != RunStatus.COMPLETED or b.status != RunStatus.COMPLETED:
        found.append(Difference("run status", str(a.status), str(b.status)))
    sa, sb = normalised_settings(a.settings), normalised_settings(b.settings)
    found += [Difference(name, _text(sa[name]), _text(sb[name])) for name in RUN_SETTINGS if sa[name] != sb[name]]
    for variable, read, _ in FIXED_VARIABLES:
        if variable == "settings":
            continue  # compared one by one above
        va, vb = read(a), read(b)
        if va != vb:
            found.append(Difference(variable, _text(va), _text(vb)))
    for field in ("endpoint", "serving"):
        va, vb = a.model_entry.get(field), b.model_entry.get(field)
        if va != vb:
            found.append(Difference(field, _text(va), _text(vb)))
    return tuple(found)


def _refuse_unless_comparable(a: RunRecord, b: RunRecord) -> None:
    if a.goldset_digest != b.goldset_digest:
        raise NotComparable(
            f"runs {a.id} and {b.id} ran different golden sets (digest {a.goldset_digest[:19]}… "
            f"≠ {b.goldset_digest[:19]}…): there is nothing to reproduce; compare them with "
            "`compare-tui report` instead"
        )
    changed = [pin for pin in PINS if a.model_entry.get(pin) != b.model_entry.get(pin)]
    if changed:
        raise NotComparable(
            f"runs {a.id} ({a.model_name}) and {b.id} ({b.model_name}) have different model pins "
            f"({', '.join(changed)}): a reproduce check needs the same pinned model"
        )


def _row(inputs: ReportInputs) -> ModelFigures:
    report = build_report(inputs)
    if not report.models:
        refused = report.refused[0] if report.refused else None
        reason = refused.reason if refused else "the report shows no figures for it"
        run_id = refused.run_id if refused else "?"
        raise NotComparable(f"run {run_id} has no figures to compare: {reason}")
    return report.models[0]


def _relative(name: str, a: float | None, b: float | None, tolerance: Tolerance) -> FigureCheck:
    if a is None and b is None:
        return FigureCheck(name, a, b, None, tolerance, True, "not measured in either run")
    if a is None or b is None:
        return FigureCheck(name, a, b, None, tolerance, False, "measured in only one run")
    if a == 0:
        return FigureCheck(
            name,
            a,
            b,
            0.0 if b == 0 else None,
            tolerance,
            b == 0,
            "" if b == 0 else "run A measured zero: no relative change can be stated",
        )
    delta = abs(b - a) / abs(a)
    return FigureCheck(name, a, b, delta, tolerance, delta <= tolerance.limit + _EPSILON)


def reproduce_check(
    inputs_a: ReportInputs, inputs_b: ReportInputs, tolerances: Mapping[str, Tolerance]
) -> ReproduceCheck:
    """Compare run A (the first run of `inputs_a`) with run B. Raises `NotComparable`."""
    run_a, run_b = inputs_a.runs[0].run, inputs_b.runs[0].run
    _refuse_unless_comparable(run_a, run_b)
    row_a, row_b = _row(inputs_a), _row(inputs_b)
    blocks_b = {block.task_id: block for block in row_b.blocks}
    changed, compared, same, human = [], 0, 0, 0
    for block_a in row_a.blocks:
        block_b = blocks_b.get(block_a.task_id)
        if block_a.human or (block_b is not None and block_b.human):
            human += 1
            continue
        status_b: TaskStatus = block_b.status if block_b else MISSING
        if block_a.status in _SCORED and status_b in _SCORED:
            compared += 1
            same += block_a.status == status_b
        if block_a.status != status_b:
            changed.append(ChangedTask(block_a.task_id, block_a.status, status_b))
    rate_a, rate_b = row_a.pass_rate.rate, row_b.pass_rate.rate
    pass_tol = tolerances["pass_rate"]
    if rate_a is None or rate_b is None:
        both_none = rate_a is None and rate_b is None
        pass_check = FigureCheck(
            "pass_rate",
            rate_a,
            rate_b,
            None,
            pass_tol,
            both_none,
            "no task scored in either run" if both_none else "no task scored in one run",
        )
    else:
        delta = rate_b - rate_a
        pass_check = FigureCheck("pass_rate", rate_a, rate_b, delta, pass_tol, abs(delta) <= pass_tol.limit + _EPSILON)
    agree_tol = tolerances["agreement"]
    agreement = same / compared if compared else None
    agree_check = FigureCheck(
        "agreement",
        None,
        None,
        agreement,
        agree_tol,
        agreement is None or agreement + _EPSILON >= agree_tol.limit,
        "no task scored automatically in both runs"
        if agreement is None
        else f"{same} of {compared} tasks had the same outcome",
    )
    tokens = [row.tokens.prompt_total + row.tokens.completion_total for row in (row_a, row_b)]
    figures = (
        pass_check,
        agree_check,
        _relative("latency_p50", row_a.latency.e2e_ms.p50, row_b.latency.e2e_ms.p50, tolerances["latency_p50"]),
        _relative("tokens", float(tokens[0]), float(tokens[1]), tolerances["tokens"]),
    )
    return ReproduceCheck(
        run_a.id,
        run_b.id,
        run_a.model_name,
        f"{run_a.goldset_id} {run_a.goldset_version}",
        differences(run_a, run_b),
        figures,
        tuple(changed),
        compared,
        human,
    )

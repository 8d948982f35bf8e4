"""An experiment's arms stopped once their verdicts settle (`experiment run --stop-when-settled`).

Where the question is arm-vs-arm — one run per arm (N = 1) and every arm a different catalogue
model — the arms' runs make one sequential comparison (`engine.sequential`, as `run
--stop-when-settled` makes one): the reference arm (the first) is its baseline, every other arm a
candidate, the tasks go to every arm interleaved in a seeded order recorded on the comparison, and
an arm is sent nothing more once its verdict against the reference has settled (the confidence
sequence of `report.sequential`, α split across the arms by Bonferroni as in `run`). Where the
question is not arm-vs-arm (`full_set_reason`), every run covers the full set, and that is said.

Pure: the figures (`ArmsSequence`) come from the comparison's own report, rebuilt from the
stored outcomes by the experiment's reader (`experiment.load`).
"""

from __future__ import annotations

from dataclasses import dataclass

from compare_tui.experiment.config import ArmConfig, ExperimentConfig
from compare_tui.report.sequential_run import METHOD, SequentialRun, candidate_words

NOT_ONE_SEQUENCE = (
    "the arms' runs were not run as one sequence (runs of their cells made before count), so they cover the full set"
)
"""Why an arm-vs-arm experiment's held runs carry no sequential verdict."""


def reference_arm(config: ExperimentConfig) -> ArmConfig:
    """The arm every other arm is judged against: the first one given."""
    return config.arms[0]


def full_set_reason(config: ExperimentConfig) -> str | None:
    """Why this experiment's question is not arm-vs-arm, so its runs cover the full set even with
    `--stop-when-settled` (None: it is, and the arms may stop once settled)."""
    if config.repeats > 1:
        return (
            f"with N = {config.repeats} runs per arm the experiment measures how each arm's rate varies when "
            "the same tasks are run again, and a run stopped early would hold only part of the set "
            "(an arm-vs-arm verdict needs N = 1: `--repeats 1`)"
        )
    by_model: dict[str, str] = {}
    for arm in config.arms:
        if arm.model_name in by_model:
            return (
                f"arms {by_model[arm.model_name]!r} and {arm.label!r} run the same model ({arm.model_name}) with "
                "different settings, and a comparison pairs its runs by model; give each arm its own model"
            )
        by_model[arm.model_name] = arm.label
    return None


def stops_when_settled(config: ExperimentConfig) -> bool:
    """Whether the arms' runs stop once settled (and a `settled` run holds an arm's place)."""
    return config.sequential and full_set_reason(config) is None


@dataclass(frozen=True, slots=True)
class ArmsSequence:
    """What an experiment with `--stop-when-settled` shows about its arms' sequence."""

    reference: str
    """The reference arm's label."""
    full_set_reason: str | None
    """Why the runs cover the full set (not arm-vs-arm); None where the arms stop when settled."""
    comparison_id: str | None = None
    """The sequential comparison of the arms' held runs (None: not run yet)."""
    run: SequentialRun | None = None
    """Its figures (`report.sequential_run`), candidates labelled by arm."""

    @property
    def words(self) -> str:
        """One line: `sequential verdicts against the reference arm A: settled after 12 of 30
        tasks; 36 requests not sent`, or why the full set runs."""
        if self.full_set_reason is not None:
            return f"--stop-when-settled: every run covers the full set: {self.full_set_reason}"
        if self.run is None:
            return f"sequential verdicts against the reference arm {self.reference}: not run yet"
        return f"sequential verdicts against the reference arm {self.reference}: {self.run.words}"

    def arm_words(self, label: str) -> str | None:
        """`better, settled at task 12 of 30 (confidence sequence at 97.5 %: …); 18 tasks not sent`."""
        if self.run is None:
            return None
        not_sent = dict(self.run.not_sent).get(label, 0)
        tail = f"; {not_sent} task(s) not sent" if not_sent else ""
        candidate = self.run.for_candidate(label)
        if candidate is None:
            return f"reference arm{tail}" if label == self.reference else None
        return candidate_words(candidate, self.run.total, self.run.level) + tail

    @property
    def method(self) -> str:
        return METHOD

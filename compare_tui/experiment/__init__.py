"""Experiments: arms × N repeated runs with intervals that hold on repeated tasks, flaky tasks, confounds and run reuse;
arms that stop once their verdict against the reference arm settles (`sequential`).

An experiment is configuration only (`ExperimentConfig`, saved in the store). Its runs are
the first N completed runs of each arm's *cell* (`cells`), whoever started them; its figures
(`experiment_figures`) are computed from those runs every time they are read, from each
run's own report. `load_experiment` is the one reader; `launch_missing` starts only the runs
a cell lacks. Nothing runs at import time.
"""

from compare_tui.experiment.cells import IN_FLIGHT, cell_key, configuration_digest, run_cell_key
from compare_tui.experiment.config import (
    MAX_REPEATS,
    ArmConfig,
    ExperimentConfig,
    GoldenSetRef,
    check_name,
    define_experiment,
    parse_arm_spec,
)
from compare_tui.experiment.confounds import Confound, SeenValue, check_arm
from compare_tui.experiment.figures import (
    ArmFigures,
    ExperimentFigures,
    Spread,
    TaskConsistency,
    experiment_figures,
)
from compare_tui.experiment.launch import (
    LaunchRefused,
    LaunchResult,
    arm_entries,
    being_executed,
    check_goldset,
    launch_missing,
    unfinished_sequence,
)
from compare_tui.experiment.load import (
    ExperimentConfigError,
    ExperimentInputs,
    arm_selections,
    candidate_runs,
    load_experiment,
    parse_config,
)
from compare_tui.experiment.render import experiment_document, render_text
from compare_tui.experiment.run_figures import RunFigures
from compare_tui.experiment.selection import ArmRuns, select_arm_runs
from compare_tui.experiment.sequential import ArmsSequence, full_set_reason, reference_arm, stops_when_settled

__all__ = [
    "IN_FLIGHT",
    "MAX_REPEATS",
    "ArmConfig",
    "ArmFigures",
    "ArmRuns",
    "ArmsSequence",
    "Confound",
    "ExperimentConfig",
    "ExperimentConfigError",
    "ExperimentFigures",
    "ExperimentInputs",
    "GoldenSetRef",
    "LaunchRefused",
    "LaunchResult",
    "RunFigures",
    "SeenValue",
    "Spread",
    "TaskConsistency",
    "arm_entries",
    "being_executed",
    "arm_selections",
    "candidate_runs",
    "cell_key",
    "check_arm",
    "check_goldset",
    "check_name",
    "configuration_digest",
    "define_experiment",
    "experiment_document",
    "experiment_figures",
    "full_set_reason",
    "launch_missing",
    "load_experiment",
    "parse_arm_spec",
    "parse_config",
    "reference_arm",
    "render_text",
    "run_cell_key",
    "select_arm_runs",
    "stops_when_settled",
    "unfinished_sequence",
]

"""Experiments, the pure core: cells, configuration rules, run selection, confounds, figures,
the bootstrap of a mean, and the store's experiment rows."""

from __future__ import annotations

import math
import sqlite3
import statistics

import pytest
from pydantic import ValidationError

from compare_tui.experiment import (
    ExperimentConfig,
    check_arm,
    experiment_figures,
    parse_arm_spec,
    run_cell_key,
    select_arm_runs,
)
from compare_tui.experiment.load import ArmInput, ExperimentInputs
from compare_tui.experiment.render import arm_lines, experiment_document, interval_text
from compare_tui.report import AttemptFacts, ReportInputs, RunInput, build_report
from compare_tui.report.stats import bounded_mean_interval, proportion_interval
from compare_tui.store import CURRENT_VERSION, ExperimentNotFoundError, ExperimentRecord, RunRecord, Store, StoreError
from tests.core.experiment.test_experiment_helpers import entry

DIGEST = "sha256:" + "1" * 64
SETTINGS = {"attempts": 1, "temperature": 0.0, "max_tokens": 16, "concurrency": 4, "timeout_s": 120.0}
PROPS = {"build_info": "b1", "chat_template_sha256": "t1"}


def pins(name="alpha", url="http://127.0.0.1:9001/v1", **changes):
    return entry(url, name, **changes).pins()


def config(repeats=3, arms=None, settings=SETTINGS) -> ExperimentConfig:
    arms = arms or [
        {"label": "alpha", "model": pins()},
        {"label": "beta", "model": pins("beta", "http://127.0.0.1:9002/v1")},
    ]
    return ExperimentConfig.model_validate(
        {
            "goldset": {"workload_id": "w", "version": "1", "digest": DIGEST, "path": "/nowhere"},
            "settings": settings,
            "repeats": repeats,
            "arms": arms,
        }
    )


def run(run_id, *, model=None, settings=SETTINGS, status="completed", minute=0, props=PROPS, **fields) -> RunRecord:
    stamp = f"2026-01-01T00:{minute:02d}:00Z"
    model = model or pins()
    return RunRecord(
        id=run_id,
        status=status,
        created_at=stamp,
        finished_at=stamp if status == "completed" else None,
        goldset_id="w",
        goldset_digest=DIGEST,
        model_name=model["name"],
        model_entry=model,
        settings={**settings, "estimate_usd": 0.1},
        provenance="verified",
        cost_basis=model["cost"],
        environment={"server": {"props": props, "models": {"ids": [model["model"]]}}},
        **fields,
    )


# ------------------------------------------------------------------ cells and configuration


def test_a_plain_run_and_an_arm_share_a_cell_and_what_the_user_asked_for_separates_cells():
    cfg = config()
    alpha = cfg.arms[0]
    assert run_cell_key(run("r1")) == cfg.arm_cell(alpha)
    # temperature 0 and 0.0, extra recorded settings: the same cell
    assert run_cell_key(run("r2", settings={**SETTINGS, "temperature": 0})) == cfg.arm_cell(alpha)
    assert run_cell_key(run("r3", settings={**SETTINGS, "temperature": 0.7})) != cfg.arm_cell(alpha)
    assert run_cell_key(run("r4", model=pins(url="http://127.0.0.1:9009/v1"))) != cfg.arm_cell(alpha)
    assert run_cell_key(run("r5", model=pins(serving={"stack": "vLLM"}))) != cfg.arm_cell(alpha)
    # What a run *got* is not in the key: it is checked as a confound instead.
    assert run_cell_key(run("r6", model=pins(weights_digest="sha256:" + "9" * 64))) == cfg.arm_cell(alpha)
    assert run_cell_key(run("r7", settings={**SETTINGS, "concurrency": 8})) == cfg.arm_cell(alpha)


@pytest.mark.parametrize("repeats", [0, 51])
def test_repeats_outside_1_to_50_are_refused(repeats):
    with pytest.raises(ValidationError, match="repeats"):
        config(repeats=repeats)


def test_an_experiment_needs_two_arms_with_different_configurations():
    with pytest.raises(ValidationError, match="at least 2"):
        config(arms=[{"label": "alpha", "model": pins()}])
    with pytest.raises(ValidationError, match="identical configuration"):
        config(arms=[{"label": "a", "model": pins()}, {"label": "b", "model": pins()}])
    with pytest.raises(ValidationError, match="labelled"):
        config(arms=[{"label": "a", "model": pins()}, {"label": "a", "model": pins("beta")}])
    # The same model at another temperature is a different configuration.
    cfg = config(
        arms=[{"label": "cold", "model": pins()}, {"label": "warm", "model": pins(), "overrides": {"temperature": 0.8}}]
    )
    assert cfg.arm_settings(cfg.arms[1])["temperature"] == 0.8


def test_arm_specs_parse_per_arm_settings_and_refuse_bad_ones():
    assert parse_arm_spec("smollm2-135m") == ("smollm2-135m", {})
    assert parse_arm_spec("m temperature=0.7 max_tokens=32") == ("m", {"temperature": 0.7, "max_tokens": 32})
    for bad in ("", "m temperature", "m colour=red", "m temperature=9", "m attempts=1.5"):
        with pytest.raises(ValueError):
            parse_arm_spec(bad)


# ------------------------------------------------------------------ selection


def test_an_arm_holds_the_first_n_completed_runs_and_counts_runs_in_flight():
    runs = [
        run("late", minute=9),
        run("early", minute=1),
        run("mid", minute=5),
        run("stopped", status="interrupted", minute=2),
        run("gone", status="incomplete", minute=3),
        run("busy", status="running", minute=6),
        run("queued", status="pending", minute=7),
        run("other", settings={**SETTINGS, "max_tokens": 99}),
    ]
    cell = config().arm_cell(config().arms[0])
    two = select_arm_runs(runs, cell, 2)
    assert [r.id for r in two.held] == ["early", "mid"] and two.spare == 1
    assert [r.id for r in two.in_flight] == ["busy", "queued"] and two.missing == 0 and two.complete
    five = select_arm_runs(runs, cell, 5)  # raising N takes in the next run
    assert [r.id for r in five.held] == ["early", "mid", "late"] and five.missing == 0 and not five.complete
    six = select_arm_runs(runs, cell, 6)  # N − held − in flight
    assert six.missing == 1
    one = select_arm_runs(runs, cell, 1)  # lowering N lets go of the latest
    assert [r.id for r in one.held] == ["early"]


# ------------------------------------------------------------------ confounds


def test_drift_in_a_fixed_variable_is_a_confound_with_every_value_and_its_runs():
    other_file = pins(weights_digest="sha256:" + "9" * 64, revision="2027-01-01")
    runs = [run("aaaaaaaa1"), run("bbbbbbbb2"), run("cccccccc3", model=other_file, props={**PROPS, "build_info": "b2"})]
    cfg = config()
    check = check_arm("alpha", runs, cfg.arms[0].model, cfg.arm_settings(cfg.arms[0]))
    found = {c.variable: c for c in check.confounds}
    assert set(found) == {"weights digest", "revision", "server build"}
    digest = found["weights digest"]
    assert [v.sources for v in digest.values] == [("aaaaaaaa1", "bbbbbbbb2", "definition"), ("cccccccc3",)]
    assert "cccccccc" in digest.sentence() and "the experiment's definition" in digest.sentence()


def test_settings_and_cost_basis_drift_are_confounds_and_unrecorded_values_are_not():
    cheap = pins(cost={"basis": "hardware", "usd_per_hour": 0.1})
    runs = [
        run("r1"),
        run("r2", settings={**SETTINGS, "concurrency": 8}),
        run("r3", props={"error": "GET /props failed"}),
    ]
    check = check_arm("alpha", runs)
    assert {c.variable for c in check.confounds} == {"settings"}
    assert ("server build", ("r3",)) in check.unrecorded
    costs = check_arm("alpha", [run("r1"), run("r4", model=cheap)])
    assert {c.variable for c in costs.confounds} == {"cost basis"}


# ------------------------------------------------------------------ figures


def facts(outcomes: dict[str, str], *, e2e=100.0, error_class="malformed_stream") -> tuple[AttemptFacts, ...]:
    out = []
    for task, outcome in outcomes.items():
        klass = error_class if outcome == "error" else None
        if outcome == "scorer-error":
            outcome, klass = "error", None
        out.append(
            AttemptFacts(
                task, 1, outcome, ttft_ms=e2e / 2, e2e_ms=e2e, prompt_tokens=10, completion_tokens=5, error_class=klass
            )
        )
    return tuple(out)


KINDS = {"t1": "exact", "t2": "exact", "t3": "exact", "x": "command", "h": "human"}


def inputs_for(per_run: list[dict[str, str]], repeats=None) -> ExperimentInputs:
    cfg = config(repeats=repeats or len(per_run))
    held = [run(f"run{i}", minute=i) for i in range(len(per_run))]
    arm_inputs = tuple(RunInput(r, facts(o, e2e=100.0 + 10 * i)) for i, (r, o) in enumerate(zip(held, per_run)))
    alpha = ArmInput(cfg.arms[0], select_arm_runs(held, cfg.arm_cell(cfg.arms[0]), cfg.repeats), arm_inputs)
    beta = ArmInput(cfg.arms[1], select_arm_runs([], cfg.arm_cell(cfg.arms[1]), cfg.repeats), ())
    return ExperimentInputs("e", "2026-01-01T00:00:00Z", cfg, (alpha, beta), KINDS, tuple(KINDS))


def test_flaky_and_consistent_tasks_and_a_deterministic_interval_of_the_mean():
    per_run = [
        {"t1": "pass", "t2": "pass", "t3": "fail", "x": "pass", "h": "review"},
        {"t1": "pass", "t2": "fail", "t3": "fail", "x": "pass", "h": "review"},
        {"t1": "pass", "t2": "pass", "t3": "error", "x": "scorer-error", "h": "review"},
    ]
    figures = experiment_figures(inputs_for(per_run))
    alpha, beta = figures.arms
    assert {t.task_id: t.state for t in alpha.tasks} == {
        "t1": "consistent pass",
        "t2": "flaky",
        "t3": "consistent fail",
        "x": "consistent pass",
    }
    assert alpha.flaky == ("t2",) and alpha.human_tasks == 1 and alpha.inconclusive == 1
    # Run 3: the scorer error on x is inconclusive (left out); the malformed answer on t3 (a
    # recorded error) counts as not passed.
    assert [(r.passed, r.conclusive) for r in alpha.runs] == [(3, 4), (2, 4), (2, 3)]
    assert alpha.pass_rate == pytest.approx((3 / 4 + 2 / 4 + 2 / 3) / 3)
    # Three runs: every task-run pooled (exact: 7 of 11) joined with Student-t over the runs (t with
    # 2 degrees of freedom), the same every time.
    rates = [3 / 4, 2 / 4, 2 / 3]
    half = 4.302652729749464 * statistics.stdev(rates) / math.sqrt(3)
    pooled = proportion_interval(7, 11)
    assert alpha.interval.low == pytest.approx(min(pooled.low, statistics.fmean(rates) - half))
    assert alpha.interval.high == pytest.approx(max(pooled.high, min(1.0, statistics.fmean(rates) + half)))
    assert experiment_figures(inputs_for(per_run)).arms[0].interval == alpha.interval
    assert interval_text(alpha).startswith("95% CI ")
    assert alpha.latency_p50_ms.values == (100.0, 110.0, 120.0) and alpha.latency_p50_ms.median == 110.0
    assert (beta.observed, beta.to_launch, beta.pass_rate, beta.interval) == (0, 3, None, None)
    assert not figures.complete and figures.to_launch == 3


def test_with_nothing_inconclusive_a_run_pass_rate_is_the_report_pass_rate():
    outcomes = {"t1": "pass", "t2": "fail", "t3": "error", "x": "pass", "h": "review"}
    figures = experiment_figures(inputs_for([outcomes]))
    report = build_report(
        ReportInputs(runs=(RunInput(run("run0"), facts(outcomes, e2e=100.0)),), task_kinds=KINDS, task_ids=tuple(KINDS))
    )
    [row] = figures.arms[0].runs
    assert row.rate == report.models[0].pass_rate.rate == 0.5
    assert row.latency_p50_ms == report.models[0].latency.e2e_ms.p50
    assert row.tokens_total == report.models[0].tokens.prompt_total + report.models[0].tokens.completion_total
    assert figures.arms[0].interval is None  # one run: no interval to show
    assert interval_text(figures.arms[0]) == "a 95% CI needs three or more runs"


def test_two_runs_show_their_range_labelled_as_a_range_not_an_interval():
    per_run = [
        {"t1": "pass", "t2": "pass", "t3": "fail", "x": "pass", "h": "review"},
        {"t1": "pass", "t2": "fail", "t3": "fail", "x": "pass", "h": "review"},
    ]
    alpha = experiment_figures(inputs_for(per_run)).arms[0]
    assert alpha.interval is None and alpha.rate_range.values == (0.75, 0.5)
    assert interval_text(alpha) == "range 50.0–75.0 % (2 runs: too few for a 95% CI)"


def test_a_run_the_report_refuses_has_no_figures_here_either():
    cfg = config(repeats=1)
    bare = run("bare").model_copy(update={"cost_basis": None})
    arm = ArmInput(
        cfg.arms[0], select_arm_runs([bare], cfg.arm_cell(cfg.arms[0]), 1), (RunInput(bare, facts({"t1": "pass"})),)
    )
    empty = ArmInput(cfg.arms[1], select_arm_runs([], cfg.arm_cell(cfg.arms[1]), 1), ())
    figures = experiment_figures(ExperimentInputs("e", "2026-01-01T00:00:00Z", cfg, (arm, empty), KINDS, tuple(KINDS)))
    [row] = figures.arms[0].runs
    assert row.refused and "cost basis" in row.refused and figures.arms[0].pass_rate is None


# ------------------------------------------------------------------ store rows


def test_the_store_keeps_experiments_as_configuration_rows(tmp_path):
    with Store.open(tmp_path / "s.sqlite") as store:
        assert store.schema_version == CURRENT_VERSION >= 3
        store.create_run(run("keep"))
        store.create_experiment(ExperimentRecord(name="one", config={"repeats": 3}))
        store.create_experiment(ExperimentRecord(name="two", config={"repeats": 1}))
        with pytest.raises(StoreError, match="already exists"):
            store.create_experiment(ExperimentRecord(name="one", config={}))
        assert [e.name for e in store.list_experiments()] == ["two", "one"]
        assert store.update_experiment("one", {"repeats": 5}).config == {"repeats": 5}
        assert store.get_experiment("one").config == {"repeats": 5}
        store.delete_experiment("one")
        with pytest.raises(ExperimentNotFoundError, match="experiment list"):
            store.get_experiment("one")
        assert store.get_run("keep").id == "keep"  # deleting an experiment never touches a run
        with pytest.raises(ValidationError, match="credential"):  # refused before it reaches the file
            ExperimentRecord(name="leak", config={"api_key": "x"})


def test_a_v2_store_gains_the_experiments_table(tmp_path):
    from compare_tui.store import schema

    path = tmp_path / "v2.sqlite"
    conn = sqlite3.connect(path)
    with conn:
        for migration in schema.MIGRATIONS[:2]:
            migration(conn)
        conn.execute("INSERT INTO meta VALUES ('app', 'compare-tui'), ('schema_version', '2')")
    conn.close()
    with Store.open(path) as store:
        assert store.schema_version == CURRENT_VERSION and store.list_experiments() == []


def test_a_rescored_run_is_never_held_as_a_repeat():
    # Issue 48, item 7: a run and its rescored copy counted as two of three repeats.
    source = run("source", minute=1)
    copy = run("copy", minute=2, rescore={"source_run": "source", "changed": []})
    cell = config().arm_cell(config().arms[0])
    arm = select_arm_runs([source, copy, run("other", minute=3)], cell, 3)
    assert [r.id for r in arm.held] == ["source", "other"] and arm.missing == 1
    assert [r.id for r in arm.rescored] == ["copy"]


def test_each_interval_names_the_rate_it_covers_and_tasks_like_these_is_clustered_by_task():
    # Issue 48, item 6: the interval covers this set's rate under re-running; "tasks like
    # these" is its own interval, one value per task.
    per_run = [{"t1": "pass", "t2": "pass", "t3": "fail", "x": "pass", "h": "review", "y": "pass", "z": "fail"}] * 3
    inputs = inputs_for(per_run)
    kinds = {**KINDS, "y": "exact", "z": "exact"}
    inputs = ExperimentInputs(inputs.name, inputs.created_at, inputs.config, inputs.arms, kinds, tuple(kinds))
    alpha = experiment_figures(inputs).arms[0]
    shares = [1.0, 1.0, 0.0, 1.0, 1.0, 0.0]  # t1 t2 t3 x y z over three identical runs
    assert alpha.tasks_interval == bounded_mean_interval(shares, (0.0, 1.0))
    # Identical runs: re-running this set would give the same rate, but other tasks need not.
    assert alpha.tasks_interval.high - alpha.tasks_interval.low > alpha.interval.high - alpha.interval.low
    text = "\n".join(arm_lines(alpha))
    assert "this set's rate under re-running" in text and "tasks like these" in text
    doc = experiment_document(experiment_figures(inputs))["arms"][0]
    assert doc["interval_estimand"].startswith("this set's rate") and doc["tasks_interval"]["low"] < 0.5
    few = experiment_figures(inputs_for([{"t1": "pass", "t2": "fail"}])).arms[0]
    assert few.tasks_interval is None

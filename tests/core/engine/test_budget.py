"""The daily eval budget (`engine/budget.py`): the `[budget]` table, today's spend counted from the
audit ledger, and a session that skips the candidate that would not fit, with the reason
recorded on the comparison and no run of it at all."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from compare_tui.catalogue import load_catalogue
from compare_tui.engine import CollectingObserver, EngineSession, ModelsSkipped, NewRunPlan, RunOverrides, RunRefused
from compare_tui.engine.budget import (
    BudgetConfigError,
    DailyBudget,
    plan_within_budget,
    read_budget,
    reset_sentence,
    spent_today,
)
from compare_tui.engine.estimate import SpendEstimate, estimate_spend
from compare_tui.engine.settings import resolve_settings
from compare_tui.goldset import load_golden_set
from compare_tui.store import Store
from tests.support.builders import write_set
from tests.support.fake_openai import FakeServer, text
from tests.tui.test_tui_data import write_catalogue

NOON = datetime(2026, 12, 7, 15, 48, tzinfo=UTC)


def test_the_budget_table_per_day_and_per_workload(tmp_path):
    path = tmp_path / "config.toml"
    assert read_budget(path) == DailyBudget()  # no file: no budget
    path.write_text('theme = "x"\n[budget]\nusd_per_day = 5\n[budget.workloads]\n"ticket-labels" = 0.5\n')
    budget = read_budget(path)
    assert (budget.usd_per_day, budget.limit_for("ticket-labels"), budget.limit_for("other")) == (5.0, 0.5, None)
    path.write_text("[budget]\nusd_per_day = -1\n")
    with pytest.raises(BudgetConfigError, match="usd_per_day must be a number of US dollars"):
        read_budget(path)
    path.write_text("[budget]\nusd_per_dya = 1\n")
    with pytest.raises(BudgetConfigError, match="unknown key"):
        read_budget(path)


def test_the_reset_time_is_stated():
    assert reset_sentence(NOON) == "resets at 00:00 UTC, in 8 h 12 min"


def test_models_over_the_limit_are_skipped_in_order_and_unestimated_ones_kept():
    est = [
        ("base", SpendEstimate(0.40, "token_price", "")),
        ("a", SpendEstimate(0.30, "token_price", "")),
        ("b", SpendEstimate(0.10, "token_price", "")),
        ("c", SpendEstimate(None, "none", "")),
    ]
    plan = plan_within_budget(est, budget=DailyBudget(1.0), spent=0.45, spent_workload=0.0, workload_id="w", now=NOON)
    assert plan.kept == ("base", "b", "c") and list(plan.skipped) == ["a"]
    assert "$0.15 left of $1.00 today" in plan.skipped["a"] and "resets at 00:00 UTC" in plan.skipped["a"]
    assert "no spend estimate for c" in (plan.warning or "")
    # The workload's own limit binds too.
    plan = plan_within_budget(
        est[:2], budget=DailyBudget(None, {"w": 0.5}), spent=9.0, spent_workload=0.0, workload_id="w", now=NOON
    )
    assert plan.kept == ("base",) and "w's daily eval budget" in plan.skipped["a"]
    assert (
        plan_within_budget(est, budget=DailyBudget(), spent=0, spent_workload=0, workload_id="w", now=NOON).skipped
        == {}
    )


def test_a_session_skips_the_candidate_over_the_budget_and_records_why(tmp_path):
    with FakeServer(default=text("billing")) as server, Store.open(tmp_path / "runs.sqlite") as store:
        set_path = write_set(tmp_path / "set", {f"t{i}": "billing" for i in range(3)})
        catalogue_path = write_catalogue(tmp_path / "models.toml", server.url)
        catalogue = load_catalogue(catalogue_path)
        goldset = load_golden_set(set_path)
        settings = resolve_settings(goldset, RunOverrides())
        est_a = estimate_spend(goldset, catalogue.get("fake-a").cost, settings).usd
        est_b = estimate_spend(goldset, catalogue.get("fake-b").cost, settings).usd
        assert est_a and est_b
        # A first session, unlimited: its requests are today's spend in the ledger.
        EngineSession(
            store, NewRunPlan(set_path, ("fake-a",), RunOverrides()), catalogue_path, CollectingObserver()
        ).run()
        spent = spent_today(store, catalogue, datetime.now(UTC))
        assert spent > 0 and spent == pytest.approx((1.0 * prompt_tokens(store) + 2.0 * completion_tokens(store)) / 1e6)
        assert spent_today(store, catalogue, datetime.now(UTC), "engine-test") == pytest.approx(spent)
        assert spent_today(store, catalogue, datetime.now(UTC), "other-workload") == 0
        # Room for the baseline (fake-a, weighed first though listed second) but not for fake-b.
        budget = DailyBudget(spent + est_a + est_b / 2)
        seen = CollectingObserver()
        plan = NewRunPlan(set_path, ("fake-b", "fake-a"), RunOverrides(), baseline="fake-a", budget=budget)
        session = EngineSession(store, plan, catalogue_path, seen)
        assert session.run() == ("completed",)
        warned = seen.of(ModelsSkipped)
        assert len(warned) == 1 and list(warned[0].skipped) == ["fake-b"]
        assert "1 of 2 models would not fit in today's eval budget" in warned[0].warning
        comparison = store.get_comparison(session.comparison_id)
        assert list(comparison.skipped) == ["fake-b"]
        assert "would exceed the daily eval budget" in comparison.skipped["fake-b"]
        # Never half a run: fake-b has no run in this comparison, nor anywhere.
        assert [store.get_run(r).model_name for r in comparison.run_ids] == ["fake-a"]
        assert store.list_runs(model="fake-b") == []
        # The report says so, with the reason.
        from compare_tui.report import build_report, load_report_inputs

        caveats = build_report(load_report_inputs(store, session.comparison_id)).caveats
        assert any(c.code == "skipped" and c.text.startswith("fake-b was not run: skipped before") for c in caveats)

        # A budget that leaves nothing to do refuses the session before anything is stored or
        # sent (never a comparison left "starting" that `report latest` would then wait on).
        from compare_tui.report.sequential import look_at

        comparisons, requests = len(store.list_comparisons()), chats(server)
        spent = spent_today(store, catalogue, datetime.now(UTC))
        nothing = NewRunPlan(
            set_path, ("fake-a", "fake-b"), RunOverrides(), baseline="fake-a", budget=DailyBudget(spent)
        )
        seen = CollectingObserver()
        assert EngineSession(store, nothing, catalogue_path, seen).run() == ()  # refused
        [refused] = seen.of(RunRefused)
        assert refused.reason.startswith("every model would exceed today's eval budget, so nothing was sent")
        # --stop-when-settled with room for the baseline alone has nothing to pair it with.
        alone = NewRunPlan(
            set_path,
            ("fake-a", "fake-b"),
            RunOverrides(),
            baseline="fake-a",
            budget=DailyBudget(spent + est_a + est_b / 2),
            sequential=True,
        )
        seen = CollectingObserver()
        assert EngineSession(store, alone, catalogue_path, seen, stop_rule=look_at).run() == ()
        [refused] = seen.of(RunRefused)
        assert refused.reason.startswith("--stop-when-settled pairs each candidate with the baseline")
        assert (len(store.list_comparisons()), chats(server)) == (comparisons, requests)  # probes only


def chats(server: FakeServer) -> int:
    """The chat requests the fake server was sent (the pre-flight probes are not model requests)."""
    return sum(1 for r in server.requests if r.path.endswith("/chat/completions"))


def prompt_tokens(store: Store) -> int:
    return sum(row.prompt_tokens or 0 for run in store.list_runs() for row in store.audit_for_run(run.id))


def completion_tokens(store: Store) -> int:
    return sum(row.completion_tokens or 0 for run in store.list_runs() for row in store.audit_for_run(run.id))


def test_an_hourly_run_is_charged_its_wall_clock_not_each_overlapping_request(tmp_path):
    """Four requests at once, each 30 s, over one minute in all: $0.36/h charges one minute."""
    from compare_tui.store import AuditRow, RunRecord

    catalogue = load_catalogue(write_catalogue(tmp_path / "models.toml"))
    now = datetime.now(UTC)
    start = now.replace(microsecond=0) - (now - now.replace(hour=0, minute=0, second=0, microsecond=0)) / 2
    with Store.open(tmp_path / "runs.sqlite") as store:
        store.create_run(
            RunRecord(
                id="box", goldset_id="w", model_name="fake-b", cost_basis={"basis": "hardware", "usd_per_hour": 0.36}
            )
        )
        for i in range(4):
            for second in (0, 30):
                store.record_audit(
                    AuditRow(
                        at=start + timedelta(seconds=second, milliseconds=i),
                        run_id="box",
                        endpoint="http://x/v1",
                        model="fake-model",
                        duration_ms=30_000 - i,
                    )
                )
        # And a judge call (no run) priced from the catalogue entry serving its model id.
        store.record_audit(
            AuditRow(at=start, endpoint="http://x/v1", model="fake-model", prompt_tokens=1000, completion_tokens=500)
        )
        assert spent_today(store, catalogue, now) == pytest.approx(0.36 / 60 + (1000 * 1.0 + 500 * 2.0) / 1e6)


def test_an_experiment_launches_only_what_fits_and_says_which_arm_it_stopped(tmp_path, monkeypatch):
    """A budget of 1.5 run estimates: each run spends far less than its estimate (an upper bound
    at max_tokens), so three runs fit one after another; then beta's second would not, and beta
    stops there with the reason: no cell is half counted."""
    from tests.core.experiment.test_experiment_helpers import catalogue, cli, entry, three_task_set

    goldset_path = three_task_set(tmp_path / "set")
    with FakeServer(default=text("ok")) as alpha, FakeServer(default=text("ok")) as beta:
        models = catalogue(tmp_path / "models.toml", entry(alpha.url, "alpha"), entry(beta.url, "beta"))
        store_path = str(tmp_path / "runs.sqlite")
        made = cli(
            "experiment", "new", "e", str(goldset_path), "--arm", "alpha", "--arm", "beta", "--repeats", "2",
            "--models", str(models), "--store", store_path,
        )  # fmt: skip
        assert made.code == 0, made.err
        goldset = load_golden_set(goldset_path)
        cost = load_catalogue(models).get("alpha").cost
        one = estimate_spend(goldset, cost, resolve_settings(goldset, RunOverrides())).usd
        (tmp_path / "config" / "compare-tui").mkdir(parents=True)
        (tmp_path / "config" / "compare-tui" / "config.toml").write_text(f"[budget]\nusd_per_day = {one * 1.5}\n")
        monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
        result = cli("experiment", "run", "e", "--json", "--models", str(models), "--store", store_path)
    assert "launched 3 run(s): alpha" in result.err, result.err
    assert "arm 'beta': skipped before it started: its estimated spend" in result.err
    with Store.open(tmp_path / "runs.sqlite") as store:
        assert sorted(run.model_name for run in store.list_runs()) == ["alpha", "alpha", "beta"]


def test_a_judging_over_the_budget_is_refused_before_any_judge_call(tmp_path, monkeypatch, capsys):
    """`judge` and `grade` weigh their calls' spend estimate against what today leaves (the daily
    limit, the workload's) and refuse, exit 2, sending nothing; judge calls, of no run, then count
    in today's spend."""
    from compare_tui.cli import main
    from tests.core.judge.test_grade import rule_grader
    from tests.core.judge.test_judge_support import TASKS, add_run, consistent_judge, entry, golden, scored
    from tests.core.judge.test_judge_support import write_models as write_judge

    goldset = golden(tmp_path)
    store_path = tmp_path / "runs.sqlite"
    with Store.open(store_path) as store:
        base = add_run(store, goldset, "base-model", {t: scored("billing") for t in TASKS})
        cand = add_run(store, goldset, "cand-model", {t: scored("bug") for t in TASKS})
    config = tmp_path / "config" / "compare-tui" / "config.toml"
    config.parent.mkdir(parents=True)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))

    def cli(command, server, *args):
        models = write_judge(tmp_path / "models.toml", entry("judge-model", server.url))
        return main([command, *args, "--judge", "judge-model", "--models", str(models), "--store", str(store_path)])

    config.write_text("[budget]\nusd_per_day = 0.001\n")
    with FakeServer(consistent_judge) as judge:
        assert cli("judge", judge, base, cand) == 2
        assert judge.requests == []
    err = capsys.readouterr().err
    assert "refused: the judging's estimated spend ≤ $0.00" in err and "12 requests" in err
    assert "would exceed the daily eval budget ($0.001 left of $0.001 today; resets at 00:00 UTC" in err
    assert "nothing was sent" in err
    config.write_text('[budget.workloads]\n"engine-test" = 0.001\n')
    with FakeServer(rule_grader) as grader:
        assert cli("grade", grader, base, cand) == 2
        assert grader.requests == []  # neither run's grading: both weighed before either is sent
    err = capsys.readouterr().err
    assert "refused: 2 judgings' estimated spend" in err and "would exceed engine-test's daily eval budget" in err

    # Room for it: the judging runs, and its calls are today's spend (audit rows of no run).
    config.write_text("[budget]\nusd_per_day = 1.0\n")
    with FakeServer(consistent_judge) as judge:
        assert cli("judge", judge, base, cand) == 0
        assert len(judge.requests) == 12
    catalogue = load_catalogue(tmp_path / "models.toml")
    with Store.open(store_path) as store:
        assert spent_today(store, catalogue, datetime.now(UTC)) > 0.001
    # Over the limit now, but the same judging again has nothing left to send: not refused.
    config.write_text("[budget]\nusd_per_day = 0.001\n")
    with FakeServer(consistent_judge) as judge:
        assert cli("judge", judge, base, cand) == 0
        assert judge.requests == []

"""The report's figures, rule, paired statistics, caveats and gate, on hand-built rows.

Builders (`make_run`, `attempts`, `inputs`) are shared with test_report_render.py.
"""

from __future__ import annotations

from fractions import Fraction

import pytest

from compare_tui.report import (
    AttemptFacts,
    ReportInputs,
    RunInput,
    build_report,
    check_gate,
    parse_pass_rate,
    render_json,
)
from compare_tui.report.power import plan_tasks, tasks_needed
from compare_tui.report.rule import Standing, recommend
from compare_tui.store import RunRecord
from compare_tui.vocabulary import ErrorClass

HARDWARE = {"basis": "hardware", "usd_per_hour": 2.0, "gpu_count": 1}
TOKEN_PRICE = {
    "basis": "token_price",
    "usd_per_mtok_input": 1.0,
    "usd_per_mtok_output": 4.0,
    "captured": "2026-11-30",
    "source": "provider price page",
}
NO_GPU = {"measured": False, "reason": "NVML library not found"}


def make_run(run_id: str = "run-a", model: str = "model-a", **overrides) -> RunRecord:
    fields = dict(
        id=run_id,
        status="completed",
        goldset_id="support-triage",
        goldset_name="Support triage",
        goldset_version="1.0.0",
        goldset_digest="sha256:abc",
        model_name=model,
        model_entry={"kind": "local", "serving": {"stack": "llama.cpp", "quantisation": "Q4_1"}},
        provenance="verified",
        cost_basis=HARDWARE,
        started_at="2026-01-01T00:00:00Z",
        finished_at="2026-01-01T00:30:00Z",
        task_count=10,
        gpu=NO_GPU,
    )
    fields.update(overrides)
    return RunRecord(**fields)


def attempts(outcomes: str, prefix: str = "t", **fields) -> tuple[AttemptFacts, ...]:
    """One attempt per task from a string of outcome letters: p(ass) f(ail) r(eview) e(rror)."""
    names = {"p": "pass", "f": "fail", "r": "review", "e": "error"}
    base = dict(ttft_ms=100.0, e2e_ms=400.0, prompt_tokens=50, completion_tokens=10)
    base.update(fields)
    return tuple(AttemptFacts(f"{prefix}{i:02d}", 1, names[c], **base) for i, c in enumerate(outcomes))


def inputs(*runs: RunInput, **fields) -> ReportInputs:
    return ReportInputs(runs=tuple(runs), **fields)


def one(outcomes: str, run_id: str = "run-a", model: str = "model-a", verdicts=None, **run_fields) -> RunInput:
    return RunInput(make_run(run_id, model, **run_fields), attempts(outcomes), verdicts or {})


# ------------------------------------------------------------------ pass rate and blocks


def test_pass_rate_counts_errors_as_not_passed_and_shows_them_apart():
    report = build_report(inputs(one("ppppppfee")))
    row = report.models[0]
    assert (row.pass_rate.passed, row.pass_rate.scored, row.pass_rate.errored) == (6, 9, 2)
    assert row.pass_rate.rate == pytest.approx(6 / 9)
    assert row.pass_rate.interval.contains(6 / 9)
    assert (row.counts.passed, row.counts.failed, row.counts.errored) == (6, 1, 2)
    assert [b.status for b in row.blocks] == ["pass"] * 6 + ["fail", "error", "error"]


def test_a_blocks_detail_comes_from_the_attempt_that_decided_it():
    facts = (
        AttemptFacts("t1", 1, "fail", detail="first"),
        AttemptFacts("t1", 2, "pass", detail="matched"),
        AttemptFacts("t2", 1, "fail", detail="wrong label"),
        AttemptFacts("t2", 2, "error", detail="timeout"),
    )
    row = build_report(inputs(RunInput(make_run(), facts))).models[0]
    assert [(b.status, b.detail) for b in row.blocks] == [("pass", "matched"), ("fail", "wrong label")]


def test_a_task_passes_when_any_attempt_passes_and_latency_is_the_passing_attempts():
    facts = (
        AttemptFacts("t1", 1, "fail", ttft_ms=900.0, e2e_ms=9000.0, prompt_tokens=10, completion_tokens=5),
        AttemptFacts("t1", 2, "pass", ttft_ms=100.0, e2e_ms=200.0, prompt_tokens=10, completion_tokens=5),
    )
    row = build_report(inputs(RunInput(make_run(), facts))).models[0]
    assert row.blocks[0].status == "pass" and row.completed == 1
    assert row.latency.ttft_ms.p50 == 100.0 and row.latency.e2e_ms.p99 == 200.0
    # Tokens count every attempt, the failed one too.
    assert (row.tokens.prompt_per_task, row.tokens.completion_per_task) == (20, 10)


def test_latency_uses_one_value_per_completed_task():
    facts = tuple(AttemptFacts(f"t{i}", 1, "pass", ttft_ms=float(i), e2e_ms=float(10 * i)) for i in range(1, 11))
    facts += (AttemptFacts("x", 1, "fail", ttft_ms=10_000.0, e2e_ms=99_999.0),)
    row = build_report(inputs(RunInput(make_run(), facts))).models[0]
    assert row.latency.e2e_ms.n == 10
    assert row.latency.e2e_ms.p99 == pytest.approx(99.1)  # the failed attempt is not in it
    assert row.latency.includes_network is False


def test_empty_run_has_no_figures_and_no_recommendation():
    report = build_report(inputs(RunInput(make_run(task_count=0))))
    row = report.models[0]
    assert row.pass_rate.rate is None and row.pass_rate.interval is None
    assert row.completed == 0 and row.blocks == ()
    assert row.tokens.prompt_per_task is None and row.cost.per_task is None
    assert report.recommendation.winner is None and report.recommendation.confidence is None
    assert "no model completed a task" in report.recommendation.summary
    assert row.missing == ()  # nothing completed: nothing per completed task is owed


def test_no_runs_at_all_still_builds():
    report = build_report(ReportInputs(runs=()))
    assert report.models == () and report.recommendation.confidence is None and report.caveats == ()


def test_all_error_run_scores_zero_and_completes_nothing():
    report = build_report(inputs(one("eeee")))
    row = report.models[0]
    assert (row.pass_rate.passed, row.pass_rate.scored, row.pass_rate.rate) == (0, 4, 0.0)
    assert row.counts.errored == 4 and row.completed == 0
    assert row.latency.e2e_ms.n == 0
    assert row.cost.total == pytest.approx(1.0) and row.cost.per_task is None
    assert report.recommendation.confidence is None
    assert any(c.code == "errors" and "4 tasks ended in error" in c.text for c in report.caveats)


def test_error_classes_are_tallied_for_the_caveat():
    facts = (
        AttemptFacts("a", 1, "error", error_class="stream_error"),
        AttemptFacts("b", 1, "error", error_class="stream_error"),
        AttemptFacts("c", 1, "error", error_class="http_4xx"),
        AttemptFacts("d", 1, "pass"),
    )
    row = build_report(inputs(RunInput(make_run(), facts))).models[0]
    assert row.error_classes == (("stream_error", 2), ("http_4xx", 1))
    assert row.not_measured == ()


def test_attempts_that_measured_nothing_leave_their_tasks_not_done_and_out_of_every_figure():
    run_a, run_b = make_run("ra", "a", task_count=4), make_run("rb", "b", task_count=4, status="incomplete")
    passes = tuple(AttemptFacts(t, 1, "pass", e2e_ms=100.0, prompt_tokens=10, completion_tokens=2) for t in "abcd")
    b_facts = passes[:2] + (
        AttemptFacts("c", 1, "error", error_class="connect", detail="could not connect"),
        AttemptFacts("d", 1, "error", error_class="http_5xx", detail="HTTP 503"),
    )
    report = build_report(
        ReportInputs(
            runs=(RunInput(run_a, passes), RunInput(run_b, b_facts)),
            task_kinds=dict.fromkeys("abcd", "exact"),
            task_ids=tuple("abcd"),
        )
    )
    a, b = report.models
    # The outage is not a failure of b's: its pass rate is over the two tasks it was measured on.
    assert (b.pass_rate.passed, b.pass_rate.scored, b.pass_rate.errored) == (2, 2, 0)
    assert (b.counts.errored, b.counts.missing, b.counts.attempts) == (0, 2, 2)
    assert b.not_measured == (("connect", 1), ("http_5xx", 1)) and b.error_classes == ()
    assert b.tokens.attempts == 2
    [pair] = report.paired
    assert pair.tasks == 2 and pair.left_out == (("not done by b (nothing measured)", 2),)
    assert "Left out: 2 not done by b (nothing measured)." in pair.sentence
    [caveat] = [c for c in report.caveats if c.code == "incomplete"]
    assert "b has 2 tasks of the set not done" in caveat.text and "connect ×1, http_5xx ×1" in caveat.text
    assert "compare-tui run --resume rb" in caveat.text


def test_tasks_the_set_has_but_the_run_never_recorded_show_as_not_run():
    report = build_report(inputs(one("pp"), task_ids=("t00", "t01", "t02")))
    row = report.models[0]
    assert [b.status for b in row.blocks] == ["pass", "pass", "missing"]
    assert row.counts.missing == 1 and row.pass_rate.scored == 2
    assert any(c.code == "incomplete" for c in report.caveats)


def test_grid_columns_are_the_sets_order_then_unknown_recorded_tasks():
    report = build_report(inputs(one("pp"), task_ids=("t01", "zz")))
    assert report.task_ids == ("t01", "zz", "t00")
    assert [b.task_id for b in report.models[0].blocks] == ["t01", "zz", "t00"]


# ------------------------------------------------------------------ human tasks and reviews


def test_human_tasks_are_excluded_from_the_pass_rate_and_keep_confidence_low_until_decided():
    facts = attempts("ppppppp") + (AttemptFacts("h1", 1, "review"),)
    kinds = {"h1": "human"}
    pending = build_report(inputs(RunInput(make_run(), facts), task_kinds=kinds))
    row = pending.models[0]
    assert row.pass_rate.scored == 7 and row.counts.review == 1 and row.awaiting_review == ("h1",)
    assert any("need" in r and "human review" in r for r in pending.recommendation.reasons)
    assert any(c.code == "review" for c in pending.caveats)

    decided = build_report(inputs(RunInput(make_run(), facts, {"h1": "fail"}), task_kinds=kinds))
    row = decided.models[0]
    block = next(b for b in row.blocks if b.task_id == "h1")
    assert (block.status, block.human, block.verdict) == ("fail", True, "fail")
    assert row.pass_rate.scored == 7 and row.awaiting_review == ()
    assert not any("human review" in r for r in decided.recommendation.reasons)
    assert not any(c.code == "review" for c in decided.caveats)


def test_a_skip_verdict_leaves_the_task_waiting():
    facts = (AttemptFacts("h1", 1, "review"), AttemptFacts("t1", 1, "pass"))
    row = build_report(inputs(RunInput(make_run(), facts, {"h1": "skip"}), task_kinds={"h1": "human"})).models[0]
    assert row.awaiting_review == ("h1",)


def test_a_persons_pass_completes_the_task_but_stays_out_of_the_pass_rate():
    facts = (AttemptFacts("h1", 1, "review", e2e_ms=5.0), AttemptFacts("t1", 1, "fail"))
    row = build_report(inputs(RunInput(make_run(), facts, {"h1": "pass"}), task_kinds={"h1": "human"})).models[0]
    assert row.completed == 1 and row.pass_rate.passed == 0 and row.pass_rate.scored == 1
    assert row.latency.e2e_ms.p50 == 5.0


def test_a_persons_verdict_on_a_flagged_scored_task_replaces_the_scorers_outcome_everywhere():
    # Issue 22: flag a scored ✗ task, mark it pass in review: block, counts and rate all move.
    from compare_tui.report import columns

    facts = attempts("ppff") + (AttemptFacts("h1", 1, "review"),)
    kinds = {"h1": "human"}
    before = build_report(inputs(RunInput(make_run(), facts), task_kinds=kinds)).models[0]
    report = build_report(inputs(RunInput(make_run(), facts, {"t02": "pass", "h1": "pass"}), task_kinds=kinds))
    row = report.models[0]
    block = next(b for b in row.blocks if b.task_id == "t02")
    assert (block.task_id, block.status, block.scorer_status, block.overridden) == ("t02", "pass", "fail", True)
    assert (before.pass_rate.passed, before.pass_rate.scored) == (2, 4)
    assert (row.pass_rate.passed, row.pass_rate.scored) == (3, 4)  # the override counts; h1 stays apart
    assert row.counts.overridden == 1 and (row.counts.human_passed, row.counts.human_failed) == (1, 0)
    cells = {c.header: c.cells[0] for c in columns.pass_rate_columns(report)}
    assert cells["pass rate"] == "75.0% (3/4)"
    assert (cells["✓ pass"], cells["✗ fail"], cells["! error"]) == ("3", "1", "0")  # they add up to the 4 scored
    assert cells["human ✓/✗/?"] == "1/0/0"
    override = next(c for c in report.caveats if c.code == "override")
    assert "t02 fail → pass" in override.text
    # A person's fail on a passing task is an override too; a skip changes nothing.
    row = build_report(inputs(RunInput(make_run(), facts, {"t00": "fail", "t03": "skip"}), task_kinds=kinds)).models[0]
    status = {b.task_id: b for b in row.blocks}
    assert [status[t].status for t in ("t00", "t01", "t02", "t03")] == ["fail", "pass", "fail", "fail"]
    assert row.pass_rate.passed == 1 and status["t03"].scorer_status is None and status["t00"].overridden


def test_the_pass_tables_counts_add_up_to_the_rates_denominator():
    facts = attempts("ppfe") + (AttemptFacts("h1", 1, "review"), AttemptFacts("h2", 1, "review"))
    from compare_tui.report import columns

    report = build_report(
        inputs(RunInput(make_run(), facts, {"h1": "fail"}), task_kinds={"h1": "human", "h2": "human"})
    )
    cells = {c.header: c.cells[0] for c in columns.pass_rate_columns(report)}
    assert cells["pass rate"] == "50.0% (2/4)"
    assert sum(int(cells[h]) for h in ("✓ pass", "✗ fail", "! error")) == 4
    assert cells["human ✓/✗/?"] == "0/1/1"


def test_without_the_set_a_task_whose_every_attempt_asks_for_review_counts_as_human():
    facts = (AttemptFacts("h1", 1, "review"), AttemptFacts("t1", 1, "pass"))
    row = build_report(inputs(RunInput(make_run(), facts))).models[0]
    assert next(b for b in row.blocks if b.task_id == "h1").human is True
    assert row.pass_rate.scored == 1 and row.counts.human == 1


def test_the_sets_scorer_kind_wins_over_the_fallback():
    facts = (AttemptFacts("t1", 1, "pass"),)
    row = build_report(inputs(RunInput(make_run(), facts), task_kinds={"t1": "human"})).models[0]
    assert row.blocks[0].human is True and row.pass_rate.scored == 0


# ------------------------------------------------------------------ tokens


def test_missing_usage_is_noted_and_not_counted_as_zero_guesses():
    facts = attempts("pppp") + attempts("p", prefix="u", prompt_tokens=None, completion_tokens=None, usage_missing=True)
    row = build_report(inputs(RunInput(make_run(), facts))).models[0]
    assert row.tokens.attempts_without_usage == 1
    assert row.tokens.prompt_per_task == pytest.approx(200 / 5)
    assert "1 of 5 attempts reported no token usage" in row.tokens.note
    assert row.missing == ()


def test_a_request_the_server_refused_is_not_missing_usage_nor_left_uncharged():
    # vLLM answers 400 for a prompt past its context: nothing was generated, no tokens are missing.
    refused = attempts("e", prefix="r", prompt_tokens=None, completion_tokens=None, error_class=ErrorClass.HTTP_4XX)
    facts = attempts("pppp") + refused
    row = build_report(inputs(RunInput(make_run(cost_basis=TOKEN_PRICE), facts))).models[0]
    assert row.tokens.attempts_without_usage == 0 and row.tokens.note is None
    assert "no token usage" not in (row.cost.note or "")
    broken = attempts("e", prefix="x", prompt_tokens=None, completion_tokens=None, error_class=ErrorClass.STREAM_ERROR)
    row = build_report(inputs(RunInput(make_run(cost_basis=TOKEN_PRICE), facts + broken))).models[0]
    assert row.tokens.attempts_without_usage == 1  # an answer broken off may have cost tokens never reported


def test_the_token_and_cost_notes_count_the_same_attempts_without_usage():
    # A prompt count without a completion count: the tokens' note and the cost's must say the
    # same "N of M" (they were counted by two rules and disagreed).
    partial = attempts("p", prefix="h", completion_tokens=None)
    none = attempts("p", prefix="n", prompt_tokens=None, completion_tokens=None, usage_missing=True)
    row = build_report(inputs(RunInput(make_run(cost_basis=TOKEN_PRICE), attempts("ppp") + partial + none))).models[0]
    assert "2 of 5 attempts reported no token usage" in (row.tokens.note or "")
    assert "2 of 5 attempts reported no token usage" in (row.cost.note or "")


def test_no_usage_at_all_is_a_missing_figure_and_makes_confidence_low():
    facts = attempts("ppppp", prompt_tokens=None, completion_tokens=None, usage_missing=True)
    report = build_report(inputs(RunInput(make_run(cost_basis=TOKEN_PRICE), facts), one("fffff", "run-b", "model-b")))
    row = report.figures_for("model-a")
    assert any(m.startswith("tokens:") for m in row.missing)
    assert any(m.startswith("cost:") for m in row.missing)
    assert row.cost.total is None
    assert report.recommendation.confidence == "low"
    assert any("required figure is missing for model-a" in r for r in report.recommendation.reasons)


# ------------------------------------------------------------------ cost


def test_hardware_cost_charges_the_run_duration_and_shows_utilisation():
    row = build_report(inputs(one("pppppppppp"))).models[0]  # 10 completed in 30 minutes at $2/h
    cost = row.cost
    assert (cost.basis, cost.duration_s, cost.total) == ("hardware", 1800.0, pytest.approx(1.0))
    assert cost.per_task == pytest.approx(0.1)
    by_level = {p.utilisation: p.per_task for p in cost.utilisation}
    assert list(by_level) == [0.10, 0.25, 0.50, 0.75, 1.00]
    assert by_level[1.0] == pytest.approx(0.1) and by_level[0.5] == pytest.approx(0.2)
    assert by_level[0.1] == pytest.approx(1.0)


def test_hardware_rate_is_the_whole_machine_whatever_the_gpu_count():
    row = build_report(inputs(one("pppppppppp", cost_basis=HARDWARE | {"gpu_count": 2}))).models[0]
    assert row.cost.usd_per_hour == 2.0 and row.cost.per_task == pytest.approx(0.1) and row.cost.gpu_count == 2


def test_hardware_cost_without_a_finish_time_is_a_missing_figure():
    report = build_report(inputs(one("ppppp", finished_at=None, status="running")))
    row = report.models[0]
    assert row.cost.per_task is None and "duration" in row.cost.note
    assert any(m.startswith("cost:") for m in row.missing)


def test_token_price_charges_every_attempt_and_carries_the_capture_date():
    facts = attempts("pf", prompt_tokens=1_000, completion_tokens=500)  # each: 0.001 + 0.002
    row = build_report(inputs(RunInput(make_run(cost_basis=TOKEN_PRICE), facts))).models[0]
    assert row.cost.total == pytest.approx(0.006)
    assert row.cost.per_task == pytest.approx(0.006)  # one completed task carries both attempts
    assert (row.cost.captured, row.cost.source) == ("2026-11-30", "provider price page")
    assert row.cost.note is None


def test_token_price_with_a_cached_price_says_the_discount_is_not_applied():
    basis = TOKEN_PRICE | {"usd_per_mtok_cached": 0.1}
    row = build_report(inputs(RunInput(make_run(cost_basis=basis), attempts("p")))).models[0]
    assert "cached-prompt discount not applied" in row.cost.note


def test_both_cost_bases_in_one_report_are_called_not_equivalent():
    report = build_report(inputs(one("ppp"), one("ppf", "run-b", "model-b", cost_basis=TOKEN_PRICE)))
    caveat = next(c for c in report.caveats if c.code == "cost_bases")
    assert "not equivalent" in caveat.text and "model-a" in caveat.text and "model-b" in caveat.text


# ------------------------------------------------------------------ refusals


@pytest.mark.parametrize(
    ("field", "value", "words"),
    [
        ("cost_basis", None, "no cost basis"),
        ("cost_basis", {"basis": "barter"}, "unknown cost basis"),
        ("provenance", None, "no provenance label"),
    ],
)
def test_rows_without_cost_basis_or_provenance_are_refused_with_a_reason(field, value, words):
    report = build_report(inputs(one("ppppppp"), one("ppppppp", "run-b", "model-b", **{field: value})))
    assert [r.label for r in report.refused] == ["model-b"]
    assert words in report.refused[0].reason
    assert [r.label for r in report.models] == ["model-a"]
    assert report.recommendation.confidence == "low"
    assert any("row of model-b was refused" in r for r in report.recommendation.reasons)


# ------------------------------------------------------------------ GPU memory


def test_gpu_peak_is_summed_over_devices():
    gpu = {
        "measured": True,
        "reason": None,
        "devices": [
            {"index": 0, "peak_bytes": 3 * 2**30, "baseline_bytes": 2**30},
            {"index": 1, "peak_bytes": 2**30, "baseline_bytes": 0},
        ],
        "notes": ["v1 note"],
    }
    report = build_report(inputs(one("p", gpu=gpu)))
    row = report.models[0]
    assert (row.gpu.measured, row.gpu.peak_bytes, row.gpu.baseline_bytes, row.gpu.devices) == (
        True,
        4 * 2**30,
        2**30,
        2,
    )
    assert any(c.code == "gpu_scope" and "v1 note" in c.text for c in report.caveats)


def test_gpu_not_measured_shows_its_reason_and_a_local_run_without_one_is_missing_a_figure():
    stated = build_report(inputs(one("p")))
    assert stated.models[0].gpu.reason == "NVML library not found"
    assert any(c.code == "gpu" and "NVML library not found" in c.text for c in stated.caveats)
    silent = build_report(inputs(one("p", gpu=None))).models[0]
    assert any(m.startswith("GPU memory") for m in silent.missing)


def test_hosted_models_have_no_gpu_figure_and_latency_includes_the_network():
    hosted = {"kind": "hosted", "serving": {}}
    report = build_report(inputs(one("p", model_entry=hosted, gpu=None)))
    row = report.models[0]
    assert row.gpu.applicable is False and row.missing == ()
    assert row.latency.includes_network is True
    assert any(c.code == "network" for c in report.caveats)
    assert not any(c.code in ("gpu", "hardware") for c in report.caveats)


# ------------------------------------------------------------------ the rule, every branch


def S(model, passed, scored, completed=None, **kw):  # noqa: N802 - reads like the rule's table
    return Standing(model, passed, scored, passed if completed is None else completed, **kw)


def test_rule_no_model_completed_a_task():
    rec = recommend([S("a", 0, 10), S("b", 0, 10)])
    assert (rec.winner, rec.confidence) == (None, None)


def test_rule_completed_tasks_but_no_pass_rate():
    rec = recommend([S("a", 0, 0, completed=2)])
    assert (rec.winner, rec.confidence) == (None, None) and "no model has a pass rate" in rec.summary


def test_rule_high_when_lead_is_ten_points_exactly():
    rec = recommend([S("a", 60, 100), S("b", 50, 100)])
    assert (rec.winner, rec.runner_up, rec.confidence) == ("a", "b", "high")
    assert rec.lead_points == pytest.approx(10.0)


def test_rule_medium_between_five_and_ten_points():
    rec = recommend([S("a", 59, 100), S("b", 50, 100)])
    assert rec.confidence == "medium"
    assert recommend([S("a", 55, 100), S("b", 50, 100)]).confidence == "medium"  # exactly five: not under


def test_rule_low_when_lead_is_under_five_points():
    rec = recommend([S("a", 54, 100), S("b", 50, 100)])
    assert rec.confidence == "low" and rec.winner == "a"
    assert any("under five" in r for r in rec.reasons)


def test_rule_low_when_fewer_than_two_models_completed_tasks():
    rec = recommend([S("a", 90, 100), S("b", 0, 100)])
    assert rec.confidence == "low" and rec.winner == "a"
    assert "fewer than two models completed tasks" in rec.reasons


def test_rule_low_with_one_model_only():
    rec = recommend([S("a", 90, 100)])
    assert rec.winner == "a" and rec.confidence == "low" and rec.lead_points is None
    assert "fewer than two models completed tasks" in rec.reasons
    assert any("no second pass rate" in r for r in rec.reasons)


def test_rule_low_when_a_required_figure_is_missing():
    rec = recommend([S("a", 90, 100, missing=("latency: none",)), S("b", 10, 100)])
    assert rec.confidence == "low" and any("required figure is missing for a" in r for r in rec.reasons)


def test_rule_low_when_a_row_was_refused():
    rec = recommend([S("a", 90, 100), S("b", 10, 100)], refused=["c"])
    assert rec.confidence == "low" and any("row of c was refused" in r for r in rec.reasons)


def test_rule_low_when_a_task_still_needs_review():
    rec = recommend([S("a", 90, 100, awaiting_review=2), S("b", 10, 100)])
    assert rec.confidence == "low" and "2 tasks of a still need human review" in rec.reasons
    # The same tasks waiting in two models are answers, counted per model, not tasks twice over.
    both = recommend([S("a", 90, 100, awaiting_review=2), S("b", 10, 100, awaiting_review=2)])
    assert both.confidence == "low" and "4 answers still need human review (2 of a, 2 of b)" in both.reasons


def test_rule_low_when_the_winner_completed_fewer_than_five_tasks():
    rec = recommend([S("a", 4, 4), S("b", 1, 4)])
    assert rec.winner == "a" and rec.confidence == "low"
    assert any("completed only 4 tasks" in r for r in rec.reasons)
    assert recommend([S("a", 5, 5), S("b", 1, 5)]).confidence == "high"


def test_rule_low_when_another_model_completed_tasks_but_has_no_pass_rate():
    rec = recommend([S("a", 50, 100), S("b", 0, 0, completed=3)])
    assert rec.winner == "a" and rec.confidence == "low"
    assert any("no second pass rate" in r for r in rec.reasons)


def test_rule_tie_has_no_single_winner():
    rec = recommend([S("a", 8, 10), S("b", 80, 100), S("c", 5, 10)])
    assert rec.winner is None and rec.tied == ("a", "b")
    assert rec.confidence == "low" and rec.lead_points == 0.0
    assert "tie" in rec.summary


def test_rule_compares_rates_exactly_not_in_floating_point():
    # 0.7 - 0.6 is 0.0999… in floating point; as fractions it is exactly ten points.
    assert recommend([S("a", 7, 10), S("b", 6, 10)]).confidence == "high"


def test_ties_in_a_built_report():
    report = build_report(inputs(one("ppppppff"), one("ffpppppp", "run-b", "model-b")))
    assert report.recommendation.winner is None
    assert report.recommendation.tied == ("model-a", "model-b")
    assert report.paired[0].model_a == "model-a"


# ------------------------------------------------------------------ paired statistics


def test_paired_flips_and_noise_sentence():
    a = one("pppppppppp" + "pf")
    b = one("pppppppppp" + "fp", "run-b", "model-b")
    report = build_report(inputs(a, b))
    p = report.paired[0]
    assert (p.tasks, p.both, p.only_a, p.only_b, p.neither) == (12, 10, 1, 1, 0)
    assert p.mcnemar_p == 1.0 and p.within_noise is True and p.difference == 0.0
    assert "within noise" in p.sentence and "no lead to resolve" in p.sentence


def test_paired_lead_within_noise_estimates_more_tasks():
    report = build_report(inputs(one("pppppppf" + "pp"), one("pppppppf" + "ff", "run-b", "model-b")))
    p = report.paired[0]
    assert (p.model_a, p.only_a, p.only_b) == ("model-a", 2, 0)
    assert p.within_noise is True and p.more_tasks > 0
    # The exact McNemar test's power, planned for the observed lead and as many flips as 2 of 10
    # allow (the plug-in rates 0.2 / 0 gave 39: a pilot's luck would have been the plan).
    need = plan_tasks(2, 0, 10, margin=None)
    assert need.tasks > tasks_needed(0.2, 0.0, margin=None).tasks
    assert p.tasks_needed == need.tasks and p.more_tasks == need.tasks - 10 and need.power >= 0.80
    assert f"about {need.tasks} tasks in all ({need.tasks - 10} more) for 80 % power" in p.sentence
    assert "(2 of 10 did here)" in p.sentence


def test_paired_lead_larger_than_noise():
    report = build_report(inputs(one("p" * 40), one("f" * 40, "run-b", "model-b")))
    p = report.paired[0]
    assert p.within_noise is False and p.more_tasks is None
    assert "larger than noise" in p.sentence and p.interval.low > 0


def test_paired_leader_is_the_winner_even_when_listed_second():
    report = build_report(inputs(one("fffff"), one("ppppp", "run-b", "model-b")))
    assert (report.paired[0].model_a, report.paired[0].model_b) == ("model-b", "model-a")


def test_paired_uses_only_tasks_both_scored():
    a = RunInput(make_run(), attempts("pp") + (AttemptFacts("h", 1, "review"),))
    b = RunInput(make_run("run-b", "model-b"), attempts("p"))
    p = build_report(inputs(a, b, task_kinds={"h": "human"})).paired[0]
    assert p.tasks == 1


def test_paired_with_no_common_task():
    a = RunInput(make_run(), attempts("pp", prefix="a"))
    b = RunInput(make_run("run-b", "model-b"), attempts("pp", prefix="b"))
    p = build_report(inputs(a, b)).paired[0]
    assert p.tasks == 0 and p.interval is None and "no task in common" in p.sentence


def test_paired_with_three_models_compares_the_leader_with_each():
    report = build_report(inputs(one("ppf"), one("ppp", "run-b", "model-b"), one("fff", "run-c", "model-c")))
    assert [(p.model_a, p.model_b) for p in report.paired] == [("model-b", "model-a"), ("model-b", "model-c")]


def test_one_model_has_no_paired_comparison():
    assert build_report(inputs(one("ppp"))).paired == ()


# ------------------------------------------------------------------ determinism and labels


def test_report_is_deterministic():
    build = lambda: build_report(inputs(one("ppfpeppfpp"), one("pffpppfepp", "run-b", "model-b")))  # noqa: E731
    assert build() == build()
    assert render_json(build()) == render_json(build())


def test_one_model_run_twice_gets_distinct_labels():
    report = build_report(inputs(one("ppppp", "aaaaaaaa11"), one("ppfff", "bbbbbbbb22")))
    assert [r.label for r in report.models] == ["model-a@aaaaaaaa", "model-a@bbbbbbbb"]
    assert report.recommendation.winner == "model-a@aaaaaaaa"


# ------------------------------------------------------------------ caveats


def test_caveats_name_what_was_not_established():
    isolation = {
        "network_namespace": False,
        "network_namespace_note": "unshare failed: EPERM",
        "nproc_limit": False,
        "nproc_note": "not enforced: runs as root",
    }
    facts = attempts("pppp", isolation=isolation)
    report = build_report(
        inputs(
            RunInput(make_run(goldset_digest="sha256:1"), facts),
            one("pppp", "run-b", "model-b", goldset_digest="sha256:2"),
            manifest_caveats=("Labels are from October.",),
            notes=("The golden set at /x could not be read.",),
        )
    )
    codes = [c.code for c in report.caveats]
    texts = " ".join(c.text for c in report.caveats)
    assert codes[:2] == ["set", "manifest"]
    assert "From the golden set: Labels are from October." in texts
    for code in (
        "different_sets",
        "baseline",
        "margin",
        "sandbox",
        "sandbox_network",
        "sandbox_nproc",
        "hardware",
        "gpu",
    ):
        assert code in codes, code
    assert "process sandbox, not a kernel sandbox" in texts
    assert "without a network namespace" in texts and "unshare failed: EPERM" in texts
    assert "not ground truth" in texts
    assert "llama.cpp, Q4_1" in texts


def test_sandbox_caveat_only_lists_isolations_not_in_force():
    isolation = {"network_namespace": True, "nproc_limit": True}
    report = build_report(inputs(RunInput(make_run(), attempts("p", isolation=isolation))))
    codes = [c.code for c in report.caveats]
    assert "sandbox" in codes and "sandbox_network" not in codes and "sandbox_nproc" not in codes


def test_no_margin_caveat_for_a_large_set():
    report = build_report(inputs(one("p" * 900 + "f" * 100)))
    assert "margin" not in [c.code for c in report.caveats]


# ------------------------------------------------------------------ gate


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("0.8", Fraction(4, 5)),
        ("80", Fraction(4, 5)),
        ("80%", Fraction(4, 5)),
        (" 80 % ", Fraction(4, 5)),
        ("1", Fraction(1)),
        ("0", Fraction(0)),
        ("100", Fraction(1)),
        ("0.5%", Fraction(1, 200)),
    ],
)
def test_parse_pass_rate(text, expected):
    assert parse_pass_rate(text) == expected


@pytest.mark.parametrize("text", ["abc", "", "150", "-1", "1/0"])
def test_parse_pass_rate_refuses_nonsense(text):
    with pytest.raises(ValueError, match="--fail-under"):
        parse_pass_rate(text)


def test_gate_fail_under_is_exact_and_uses_the_best_pass_rate():
    report = build_report(inputs(one("ppppppppff"), one("pppfffffff", "run-b", "model-b")))
    assert check_gate(report, fail_under="0.8").passed
    assert check_gate(report, fail_under=Fraction(4, 5)).exit_code == 0
    failed = check_gate(report, fail_under="81%")
    assert failed.exit_code == 3 and "model-a's 8/10 (80.0 %)" in failed.reasons[0]


def test_gate_fail_under_without_any_pass_rate_fails():
    report = build_report(inputs(RunInput(make_run())))
    assert not check_gate(report, fail_under="0").passed


def test_gate_confidence_and_winner():
    report = build_report(inputs(one("p" * 10), one("p" + "f" * 9, "run-b", "model-b")))
    assert report.recommendation.confidence == "high"
    assert check_gate(report, require_confidence="high", require_winner="model-a").passed
    wrong = check_gate(report, require_winner="model-b")
    assert wrong.reasons == ("the recommended model is model-a, not model-b",)
    unknown = check_gate(report, require_winner="nope")
    assert "not a model in this report" in unknown.reasons[0]
    low = build_report(inputs(one("ppp")))
    result = check_gate(low, require_confidence="medium", fail_under="50%")
    assert result.exit_code == 3 and result.reasons == ("confidence is low, below the required medium",)
    with pytest.raises(ValueError):
        check_gate(low, require_confidence="certain")


def test_gate_winner_on_a_tie_and_with_no_recommendation():
    tie = build_report(inputs(one("pf"), one("fp", "run-b", "model-b")))
    assert "recommends no single model" in check_gate(tie, require_winner="model-a").reasons[0]
    nothing = build_report(inputs(one("ff")))
    assert "none (no recommendation)" in check_gate(nothing, require_confidence="medium").reasons[0]


def test_gate_with_no_conditions_passes():
    assert check_gate(build_report(inputs(one("f")))).exit_code == 0

"""The decision: each candidate against the baseline (verdict, margin, savings, summary), on
every surface, the gate, the command, and the workload's promoted baseline."""

from __future__ import annotations

import contextlib
import json
import shutil
import xml.etree.ElementTree as ET
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from rich.console import Console

from compare_tui.cli import main
from compare_tui.goldset.digest import _manifest_form
from compare_tui.report import (
    build_report,
    check_gate,
    load_report_inputs,
    render_json,
    render_junit,
    render_md,
)
from compare_tui.report.decision import DEFAULT_MARGIN_PP, Verdict, decide, verdict_for
from compare_tui.report.model import BaselineError
from compare_tui.report.render_text import render_text
from compare_tui.report.stats import mcnemar_exact, paired_interval
from compare_tui.store import DecisionRecord, Store
from tests.core.test_report import TOKEN_PRICE, attempts, inputs, one
from tests.core.test_report_load import compare, record

SCHEMA_DOC = Path(__file__).resolve().parents[2] / "compare_tui" / "report" / "SCHEMA.md"


def text_of(report, width: int = 120) -> str:
    console = Console(width=width, record=True, no_color=True, force_terminal=False)
    console.print(render_text(report))
    return console.export_text()


# ------------------------------------------------------------------ the rule


@pytest.mark.parametrize(
    ("low", "high", "margin", "expected"),
    [
        (0.5, 9.0, 5.0, Verdict.BETTER),  # L > 0
        (0.0, 9.0, 5.0, Verdict.NO_WORSE),  # L = 0 is not better
        (-4.9, 3.0, 5.0, Verdict.NO_WORSE),  # L > −M
        (-4.9, -0.5, 5.0, Verdict.NO_WORSE),  # worse, but within the margin: no worse wins
        (-5.0, 3.0, 5.0, Verdict.INCONCLUSIVE),  # L = −M is not > −M
        (-12.0, -0.1, 5.0, Verdict.WORSE),  # U < 0 and not no worse
        (-12.0, 0.0, 5.0, Verdict.INCONCLUSIVE),  # U = 0 is not < 0
        (-3.0, 2.0, 2.0, Verdict.INCONCLUSIVE),  # the margin decides: −3 ≤ −2
        (-3.0, 2.0, 4.0, Verdict.NO_WORSE),
    ],
)
def test_every_verdict_branch_and_the_margin(low, high, margin, expected):
    assert verdict_for(low, high, margin) is expected


def test_a_negative_margin_is_refused():
    with pytest.raises(ValueError, match="margin"):
        verdict_for(-1.0, 1.0, -1.0)


@given(st.integers(0, 60), st.integers(0, 60), st.integers(0, 300), st.floats(0, 20))
def test_the_verdict_never_contradicts_the_exact_test_beside_it(only_c, only_b, ties, margin):
    if only_c + only_b + ties == 0:
        return
    interval = paired_interval(only_c, only_b, ties)
    verdict = verdict_for(interval.low * 100, interval.high * 100, margin)
    p = mcnemar_exact(only_c, only_b)
    if verdict is Verdict.BETTER:
        assert p < 0.05 and only_c > only_b
    if verdict is Verdict.WORSE:
        assert p < 0.05 and only_b > only_c
    if p >= 0.05:
        assert verdict in (Verdict.NO_WORSE, Verdict.INCONCLUSIVE)


# ------------------------------------------------------------------ the report


def three(**fields):
    """Baseline A passes 30 of 40; B passes the same 30 (all ties); C fails 12 of A's passes."""
    a = one("p" * 30 + "f" * 10, "run-a", "model-a")
    b = one("p" * 30 + "f" * 10, "run-b", "model-b")
    c = one("p" * 18 + "f" * 22, "run-c", "model-c")
    return inputs(a, b, c, **fields)


def test_without_a_baseline_the_report_is_as_before():
    report = build_report(three())
    assert report.decision is None and report.decision_note is None
    assert json.loads(render_json(report))["decision"] is None
    assert "Decision" not in text_of(report)


def test_a_named_baseline_gives_a_verdict_per_candidate_and_a_leading_summary():
    report = build_report(three(baseline="model-a"))
    decision = report.decision
    assert decision.baseline == "model-a" and decision.margin_pp == DEFAULT_MARGIN_PP
    b, c = decision.versus
    assert (b.candidate, b.paired.only_a, b.paired.only_b, b.delta_pp) == ("model-b", 0, 0, 0.0)
    # 40 ties: the interval is about ±9 points, so B is not shown no worse within 5 points.
    assert b.verdict is Verdict.INCONCLUSIVE and b.tasks_needed is None  # no difference to power
    assert (c.paired.only_a, c.paired.only_b) == (0, 12)
    assert c.verdict is Verdict.WORSE and c.paired.mcnemar_p < 0.05 and c.interval_pp[1] < 0
    assert decision.summary == "Keep model-a: no candidate is shown no worse within 5 points."
    # The seed rule's recommendation stays as it was, beside the decision.
    assert report.recommendation == build_report(three()).recommendation
    shown = text_of(report)
    assert shown.index("Keep model-a") < shown.index(report.recommendation.summary[:30])


def test_no_worse_within_the_margin_switches_and_says_how_much_cheaper():
    base = one("p" * 180 + "f" * 20, "run-a", "model-a", cost_basis={"basis": "hardware", "usd_per_hour": 4.0})
    cand = one("p" * 178 + "f" * 22, "run-b", "model-b", cost_basis={"basis": "hardware", "usd_per_hour": 1.0})
    report = build_report(inputs(base, cand, baseline="model-a"))
    [v] = report.decision.versus
    assert v.verdict is Verdict.NO_WORSE and v.delta_pp == pytest.approx(-1.0)
    # Same half-hour runs: a quarter of the hourly rate over 178 instead of 180 completed tasks.
    assert v.cost.comparable and v.cost.savings == pytest.approx(1 - (1.0 / 178) / (4.0 / 180))
    assert v.cost.change_pct == pytest.approx(-v.cost.savings * 100)
    low, high = v.interval_pp
    span = f"{low:+.1f} to {high:+.1f}".replace("-", "−")
    assert report.decision.summary == (
        f"Switch to candidate model-b: no worse than model-a (−1.0 pts, 95% CI {span}), "
        "75% cheaper per completed task, p50 end-to-end latency +0.0% on the tasks both scored"
    )


def test_a_better_candidate_with_faster_answers():
    base = one("p" * 20 + "f" * 20, "run-a", "model-a")
    cand = replace(
        one("p" * 40, "run-b", "model-b"), attempts=attempts("p" * 40, ttft_ms=50.0, e2e_ms=200.0, completion_tokens=5)
    )
    report = build_report(inputs(base, cand, baseline="model-a"))
    [v] = report.decision.versus
    assert v.verdict is Verdict.BETTER and v.interval_pp[0] > 0
    assert (v.ttft_p50_pct, v.e2e_p50_pct, v.e2e_p95_pct) == (-50.0, -50.0, -50.0)
    # Tokens per completed task: every attempt's tokens over the tasks that passed.
    assert v.tokens_per_task_pct == pytest.approx((40 * 55 / 40 - 40 * 60 / 20) / (40 * 60 / 20) * 100)
    assert report.decision.summary.startswith("Switch to candidate model-b: better than model-a (+50.0 pts")


def test_different_cost_bases_show_both_figures_and_no_savings():
    base = one("p" * 20, "run-a", "model-a")
    cand = one("p" * 20, "run-b", "model-b", cost_basis=TOKEN_PRICE)
    report = build_report(inputs(base, cand, baseline="model-a"))
    [v] = report.decision.versus
    assert not v.cost.comparable and v.cost.savings is None and v.cost.change_pct is None
    assert v.cost.baseline_per_task is not None and v.cost.candidate_per_task is not None
    assert "not comparable" in v.cost.note and "no savings figure" in v.cost.note
    shown = text_of(report)
    assert "not comparable" in shown and "cheaper" not in shown
    doc = json.loads(render_json(report))["decision"]["versus"][0]["cost"]
    assert doc["comparable"] is False and doc["savings"] is None and doc["candidate_per_task"] is not None


def test_an_inconclusive_verdict_says_how_many_tasks_would_give_80_percent_power():
    base = one("p" * 8 + "f" * 2, "run-a", "model-a")
    cand = one("p" * 6 + "f" * 4, "run-b", "model-b")
    [v] = build_report(inputs(base, cand, baseline="model-a")).decision.versus
    assert v.verdict is Verdict.INCONCLUSIVE and v.tasks_needed == v.paired.tasks_needed == 37
    assert "about 37 tasks like these in all would give 80 % power" in text_of(
        build_report(inputs(base, cand, baseline="model-a"))
    )


def test_a_candidate_with_nothing_measured_is_named_as_not_compared_never_as_not_good_enough():
    base = one("p" * 8 + "f" * 2, "run-a", "model-a")
    empty = one("", "run-b", "model-b")  # interrupted before its first task
    summary = build_report(inputs(base, empty, baseline="model-a")).decision.summary
    assert summary == (
        "Keep model-a for now: model-b not compared with it (no task scored by both); "
        "finish the run (`compare-tui run --resume RUN`) to decide."
    )
    worse = one("f" * 10, "run-c", "model-c")
    mixed = build_report(inputs(base, empty, worse, baseline="model-a")).decision.summary
    assert mixed == (
        "Keep model-a: no candidate is shown no worse within 5 points (model-b not compared: no task scored by both)."
    )


def test_the_margin_comes_from_the_inputs_and_changes_the_verdict():
    base = one("p" * 95 + "f" * 5, "run-a", "model-a")
    cand = one("p" * 93 + "f" * 7, "run-b", "model-b")
    wide = build_report(inputs(base, cand, baseline="model-a", margin_pp=10.0)).decision
    narrow = build_report(inputs(base, cand, baseline="model-a", margin_pp=1.0)).decision
    assert wide.versus[0].verdict is Verdict.NO_WORSE and narrow.versus[0].verdict is Verdict.INCONCLUSIVE
    assert wide.margin_pp == 10.0 and "within 1 points" in narrow.summary


def test_a_baseline_not_in_the_report_is_refused_with_the_models_named():
    with pytest.raises(BaselineError, match="'model-z' is not a model of this report.*model-a, model-b"):
        build_report(three(baseline="model-z"))


def test_a_refused_baseline_row_gives_a_note_not_a_verdict():
    bare = one("p" * 10, "run-a", "model-a", cost_basis=None)
    report = build_report(inputs(bare, one("p" * 10, "run-b", "model-b"), baseline="model-a"))
    assert report.decision is None and "its row is not shown" in report.decision_note
    assert json.loads(render_json(report))["decision"]["note"] == report.decision_note


def test_decide_finds_the_baseline_by_model_name_when_labels_differ():
    rows = build_report(three()).models
    assert decide(rows, "model-b").baseline == "model-b"
    with pytest.raises(LookupError):
        decide(rows, "nope")


# ------------------------------------------------------------------ every surface


def test_markdown_json_and_junit_carry_the_decision():
    report = build_report(three(baseline="model-a"))
    md = render_md(report)
    assert md.index("## Decision") < md.index("## Recommendation")
    assert "| model-c | worse |" in md and "**Keep model-a" in md
    doc = json.loads(render_json(report))["decision"]
    assert doc["baseline"] == "model-a" and doc["margin_pp"] == 5.0
    assert [v["verdict"] for v in doc["versus"]] == ["inconclusive", "worse"]
    documented = SCHEMA_DOC.read_text(encoding="utf-8")
    names = set(doc) | set(doc["versus"][0]) | set(doc["versus"][0]["cost"])
    assert not sorted(n for n in names if f"`{n}`" not in documented)
    root = ET.fromstring(render_junit(report))
    suite = root.find("testsuite[@name='versus model-a']")
    assert suite.get("tests") == "2" and suite.get("failures") == "1" and suite.get("skipped") == "1"
    assert suite.find("testcase[@name='model-c vs model-a']/failure").get("message").startswith("worse:")
    assert root.get("failures") == str(sum(int(s.get("failures")) for s in root.findall("testsuite")))


def test_the_text_report_reads_at_80_columns_with_no_number_cut():
    report = build_report(three(baseline="model-a"))
    shown = text_of(report, 80)
    assert all(len(line) <= 80 for line in shown.splitlines())
    v = report.decision.versus[1]
    low, high = v.interval_pp
    assert f"{low:+.1f} to {high:+.1f} pts".replace("-", "−") in shown


# ------------------------------------------------------------------ the gate


def test_require_verdict_gate():
    report = build_report(three(baseline="model-a"))
    assert check_gate(report, require_verdict="no-worse").reasons == (
        "no candidate is no worse against model-a (model-b inconclusive, model-c worse)",
    )
    assert (
        "model-c's verdict against model-a is worse, not better"
        in check_gate(report, require_verdict="better", candidate="model-c").reasons[0]
    )
    assert "not a candidate" in check_gate(report, require_verdict="better", candidate="nope").reasons[0]
    assert "no baseline" in check_gate(build_report(three()), require_verdict="better").reasons[0]
    base = one("p" * 20 + "f" * 20, "run-a", "model-a")
    good = build_report(inputs(base, one("p" * 40, "run-b", "model-b"), baseline="model-a"))
    assert check_gate(good, require_verdict="no-worse").passed and check_gate(good, require_verdict="better").passed
    with pytest.raises(ValueError):
        check_gate(good, require_verdict="great")


# ------------------------------------------------------------------ the command and the store


@pytest.fixture
def store(tmp_path: Path):
    with Store.open(tmp_path / "runs.sqlite") as s:
        yield s


def run_cli(store: Store, *args: str) -> int:
    return main(["report", *args, "--store", str(store.path)])


@pytest.fixture
def filled(store):
    record(store, "run-a", "model-a", "pppppppppp")
    record(store, "run-b", "model-b", "ppfffffffe")
    compare(store, "cmp-1", "run-a", "run-b")
    return store


def test_report_baseline_reframes_a_stored_comparison_and_gates(filled, capsys):
    assert run_cli(filled, "cmp-1", "--format", "json") == 0
    assert json.loads(capsys.readouterr().out)["decision"] is None
    code = run_cli(
        filled,
        "cmp-1",
        "--format",
        "json",
        "--baseline",
        "model-a",
        "--margin",
        "5",
        "--require-verdict",
        "no-worse",
        "--candidate",
        "model-b",
    )
    captured = capsys.readouterr()
    doc = json.loads(captured.out)["decision"]
    assert code == 3 and doc["versus"][0]["verdict"] == "worse"
    assert "gate failed: model-b's verdict against model-a is worse, not no worse" in captured.err
    assert run_cli(filled, "cmp-1", "--baseline", "model-b", "--require-verdict", "better") == 0
    assert "Switch to candidate model-a: better than model-b" in capsys.readouterr().out


@pytest.mark.parametrize(
    "args", [("--baseline", "nope"), ("--margin", "-3"), ("--margin", "lots"), ("--candidate", "model-b")]
)
def test_report_decision_options_bad_input_exits_2(filled, capsys, args):
    # argparse rejects a bad --margin itself (exit 2, its usage line); the rest are ours.
    with pytest.raises(SystemExit) if args[0] == "--margin" else contextlib.nullcontext():
        assert run_cli(filled, "cmp-1", *args) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and ("compare-tui: " in err or "--margin" in err)


def test_the_comparisons_baseline_and_the_workloads_promoted_one_are_loaded(store):
    record(store, "run-a", "model-a", "pppppppppp")
    record(store, "run-b", "model-b", "ppfffffffe")
    compare(store, "cmp-1", "run-a", "run-b")
    assert load_report_inputs(store, "cmp-1").baseline is None
    store.record_decision(DecisionRecord(workload_id="support-triage", model="model-b", kind="initial"))
    loaded = load_report_inputs(store, "cmp-1")
    assert (loaded.baseline, loaded.baseline_source) == ("model-b", "workload")
    assert build_report(loaded).decision.versus[0].candidate == "model-a"
    store.set_comparison_baseline("cmp-1", "model-a")
    assert (load_report_inputs(store, "cmp-1").baseline, load_report_inputs(store, "cmp-1").baseline_source) == (
        "model-a",
        "named",
    )
    # A single run has nothing to be judged against.
    assert load_report_inputs(store, "run-a").baseline is None


def test_a_manifest_margin_is_read_and_an_absent_table_keeps_the_sets_digest(tmp_path):
    from compare_tui.goldset import load_golden_set

    source = Path(__file__).resolve().parents[2] / "sample_sets" / "support-triage"
    before = load_golden_set(source)
    assert before.manifest.decision is None
    copy = tmp_path / "set"
    shutil.copytree(source, copy)
    manifest = copy / "golden.toml"
    manifest.write_text(manifest.read_text(encoding="utf-8") + "\n[decision]\nmargin_pp = 2.5\n", encoding="utf-8")
    after = load_golden_set(copy)
    assert after.manifest.decision.margin_pp == 2.5 and after.digest != before.digest
    # Without the table the digested form is what it was before the table existed.
    assert "decision" not in _manifest_form(before.manifest)
    assert "decision" in _manifest_form(after.manifest)


def test_a_bad_manifest_margin_names_the_field(tmp_path):
    from compare_tui.goldset import GoldenSetError, load_golden_set

    copy = tmp_path / "set"
    shutil.copytree(Path(__file__).resolve().parents[2] / "sample_sets" / "support-triage", copy)
    manifest = copy / "golden.toml"
    manifest.write_text(manifest.read_text(encoding="utf-8") + "\n[decision]\nmargin_pp = -1\n", encoding="utf-8")
    with pytest.raises(GoldenSetError, match="margin_pp"):
        load_golden_set(copy)


def test_latency_deltas_are_over_the_same_tasks_not_each_models_completed_ones():
    from compare_tui.report import AttemptFacts, RunInput

    def facts(passes: set[int], e2e) -> tuple[AttemptFacts, ...]:
        return tuple(
            AttemptFacts(
                f"t{i:02d}",
                1,
                "pass" if i in passes else "fail",
                ttft_ms=e2e(i) / 10,
                e2e_ms=e2e(i),
                prompt_tokens=10,
                completion_tokens=2,
            )
            for i in range(10)
        )

    # The baseline completes only the five quick tasks; the candidate completes all ten, slowly.
    base = RunInput(one("p", "run-a", "model-a").run, facts(set(range(5)), lambda i: 100.0 if i < 5 else 1000.0))
    cand = RunInput(one("p", "run-b", "model-b").run, facts(set(range(10)), lambda i: 1000.0))
    report = build_report(inputs(base, cand, baseline="model-a"))
    [v] = report.decision.versus
    # Per completed task the baseline's p50 is 100 ms (+900 %); on the same ten tasks it is 550 ms.
    assert report.figures_for("model-a").latency.e2e_ms.p50 == 100.0
    assert v.e2e_p50_pct == pytest.approx((1000 - 550) / 550 * 100)
    assert v.ttft_p50_pct == pytest.approx((100 - 55) / 55 * 100)

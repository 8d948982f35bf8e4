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
from compare_tui.report import formatting as fmt
from compare_tui.report.decision import DEFAULT_MARGIN_PP, DecisionAction, Verdict, decide, verdict_for
from compare_tui.report.model import BaselineError
from compare_tui.report.power import plan_tasks
from compare_tui.report.render_text import render_text
from compare_tui.report.stats import mcnemar_exact, paired_interval
from compare_tui.store import ComparisonRecord, DecisionRecord, Store
from tests.core.report.test_report import TOKEN_PRICE, attempts, inputs, one
from tests.core.report.test_report_load import compare, record

SCHEMA_DOC = Path(__file__).resolve().parents[3] / "compare_tui" / "report" / "SCHEMA.md"


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
    # 40 ties: the interval is about ±10 points, so B is not shown no worse within 5 points. No
    # task has separated them yet: the plan is for as many flips as 40 ties allow (never better:
    # it does not lead), not the 96 "for 100 % power" that zero flips would give.
    plan = plan_tasks(0, 0, 40, margin=0.05, level=0.975)
    assert b.verdict is Verdict.INCONCLUSIVE and b.tasks_needed == plan.tasks and b.needed[0] == plan
    assert plan.tasks > 96 and 0.80 <= plan.power < 0.85 and not plan.separated
    assert b.needed[1].goal == "better" and b.needed[1].tasks is None and "not higher" in b.needed[1].reason
    # Two candidates: each interval at 97.5 % (Bonferroni), labelled so.
    assert decision.level == b.level == 0.975 and "Bonferroni" in decision.multiplicity
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


def test_an_inconclusive_verdict_says_how_many_tasks_would_show_no_worse_and_better():
    # One flip each way out of 10: Δ = 0, so "no worse" is reachable and "better" is not.
    base = one("p" * 8 + "f" * 2, "run-a", "model-a")
    cand = one("p" * 7 + "fp" + "f", "run-b", "model-b")
    report = build_report(inputs(base, cand, baseline="model-a"))
    [v] = report.decision.versus
    assert v.verdict is Verdict.INCONCLUSIVE and (v.paired.only_a, v.paired.only_b) == (1, 1)
    expected = plan_tasks(1, 1, 10, margin=0.05)
    assert v.tasks_needed == expected.tasks and v.needed[0] == expected and 0.80 <= expected.power < 0.82
    shown = " ".join(text_of(report, width=400).split())
    assert f"to show it no worse (within 5 points): about {expected.tasks:,} tasks in all" in shown
    assert "(2 of 10 did here)" in shown and "100 %" not in shown
    assert "to show it better: out of reach (its pass rate on these tasks is not higher" in shown
    # Trailing by more than the margin: neither is reachable, and the page says so.
    worse = one("p" * 6 + "f" * 4, "run-c", "model-c")
    [w] = build_report(inputs(base, worse, baseline="model-a")).decision.versus
    assert w.verdict is Verdict.INCONCLUSIVE and w.tasks_needed is None
    assert [n.tasks for n in w.needed] == [None, None] and "trails by the margin" in w.needed[0].reason


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

    source = Path(__file__).resolve().parents[3] / "sample_sets" / "support-triage"
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
    shutil.copytree(Path(__file__).resolve().parents[3] / "sample_sets" / "support-triage", copy)
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


# ------------------------------------------------------------------ one headline (issue: contradicting headlines)


def _item6():
    """A new user's own 10 tasks: my-qwen-2k passes 3 more than smollm2-135m and none fewer,
    so the rule rates it "high" (a 30-point lead) while the paired test finds p = 0.25."""
    base = one("pppffffpff", "run-s", "smollm2-135m")
    cand = one("pppppffppf", "run-q", "my-qwen-2k")
    return build_report(inputs(base, cand, baseline="smollm2-135m"))


def _surfaces(report) -> dict[str, str]:
    from compare_tui.publish.comparison_page import comparison_page
    from compare_tui.publish.details import Masker
    from compare_tui.report import report_document
    from compare_tui.tui.widgets.report_tables import recommendation_text

    return {
        "text": " ".join(text_of(report, width=200).split()),
        "json": render_json(report),
        "md": render_md(report),
        "junit": render_junit(report),
        "page": comparison_page(report, report_document(report), (), None, Masker(())),
        "tui": recommendation_text(report).plain,
    }


def test_keep_and_a_high_rating_never_stand_together_without_the_sentence_between_them():
    report = _item6()
    [v] = report.decision.versus
    assert report.decision.summary == "Keep smollm2-135m: no candidate is shown no worse within 5 points."
    assert report.decision.action is DecisionAction.KEEP and report.decision.chosen is None
    assert v.verdict is Verdict.INCONCLUSIVE and fmt.points_interval(v.interval_pp) == "−6.1 to +60.3 pts"
    assert v.paired.mcnemar_p == pytest.approx(0.25)
    rec = report.recommendation
    assert (rec.winner, rec.confidence) == ("my-qwen-2k", "high")  # the seed's rule, kept exactly
    note = report.rating_note
    assert note == (
        "Confidence “high” is the rule's rating of the lead's size alone (10 points or more): the paired test "
        "on the same tasks finds my-qwen-2k's lead over smollm2-135m within noise (McNemar p = 0.25), so it is "
        "not evidence that my-qwen-2k is better; the decision above keeps smollm2-135m, and it is the one that "
        "answers whether to switch."
    )
    assert report.caveats[0].code == "rating" and report.caveats[0].text == note
    for name, shown in _surfaces(report).items():
        flat = " ".join(shown.split()).replace("&#x27;", "'").replace("&#8220;", "“")
        assert "lead's size alone" in flat, name
        if name not in ("tui", "json", "junit"):  # the TUI's decision is a widget of its own; data in key order
            assert flat.index("Keep smollm2-135m") < flat.index("lead's size alone"), name
        # The sentence comes before the rule's recommendation in every surface that shows both.
        if "Recommended: my-qwen-2k" in flat and name not in ("json", "junit"):
            assert flat.index("lead's size alone") < flat.index("Recommended: my-qwen-2k"), name
    doc = json.loads(render_json(report))
    assert doc["recommendation"]["rating_note"] == note and doc["decision"]["action"] == "keep"


def test_no_note_when_the_rating_and_the_paired_test_agree():
    base = one("p" * 10 + "f" * 40, "run-a", "model-a")
    cand = one("p" * 40 + "f" * 10, "run-b", "model-b")
    report = build_report(inputs(base, cand, baseline="model-a"))
    assert report.recommendation.confidence == "high" and report.decision.action is DecisionAction.SWITCH
    assert report.decision.chosen == "model-b" and report.rating_note is None
    assert all(c.code != "rating" for c in report.caveats)


def test_a_winner_the_decision_does_not_pick_gets_the_sentence_at_any_confidence():
    base = one("p" * 30 + "f" * 20, "run-a", "model-a")
    cand = one("f" * 7 + "p" * 33 + "f" * 10, "run-b", "model-b")  # 10 flips its way, 7 the other: +6 points
    report = build_report(inputs(base, cand, baseline="model-a"))
    assert report.recommendation.confidence == "medium" and report.decision.action is DecisionAction.KEEP
    assert report.rating_note == (
        "Confidence “medium” is the rule's rating of the lead's size alone (5 points or more, under 10): the "
        "paired test on the same tasks finds model-b's lead over model-a within noise (McNemar p = 0.63), so it "
        "is not evidence that model-b is better; the decision above keeps model-a, and it is the one that "
        "answers whether to switch."
    )


# ------------------------------------------------------------------ wording


def test_no_worse_beside_a_significant_deficit_says_it_is_lower():
    # n = 300, flips 0 vs 6: Δ −2.0 pts, the interval wholly below 0, but above −5.
    base = one("p" * 250 + "f" * 50, "run-a", "model-a")
    cand = one("p" * 244 + "f" * 56, "run-b", "model-b")
    report = build_report(inputs(base, cand, baseline="model-a"))
    [v] = report.decision.versus
    assert v.verdict is Verdict.NO_WORSE and v.lower_though_no_worse and v.interval_pp[1] < 0
    assert v.paired.mcnemar_p == pytest.approx(0.03125)
    words = v.verdict_words(5.0)
    assert words == "no worse (within 5 points), though lower: p = 0.031 against model-b"
    assert report.decision.summary.startswith(
        "Switch to candidate model-b: no worse than model-a within 5 points, though lower (−2.0 pts, 95% CI "
    )
    assert "McNemar p = 0.031 against model-b" in report.decision.summary
    shown = " ".join(text_of(report, width=200).split())
    assert "no worse (lower)" in shown and f"model-b: {words}." in shown
    assert json.loads(render_json(report))["decision"]["versus"][0]["verdict_words"] == words


@pytest.mark.parametrize(
    ("value", "expected"),
    [(0.0, "0.0"), (0.031, "+0.031"), (-0.004, "−0.0040"), (-0.0, "0.0"), (1.25, "+1.2"), (-68.7, "−68.7")],
)
def test_bounds_near_zero_keep_the_digits_that_show_their_side(value, expected):
    assert fmt.bound(value) == expected


def test_an_upper_bound_of_exactly_zero_says_why_it_is_not_worse():
    # 0 vs 5 flips over 5 tasks: the exact test cannot reject (p = 0.0625), so U is widened to 0.
    base = one("ppppp", "run-a", "model-a")
    cand = one("fffff", "run-b", "model-b")
    report = build_report(inputs(base, cand, baseline="model-a"))
    [v] = report.decision.versus
    assert v.verdict is Verdict.INCONCLUSIVE and v.interval_pp[1] == 0.0
    shown = " ".join(text_of(report, width=200).split())
    assert "to 0.0 pts" in shown and "+0.0" not in shown
    assert "its interval ends at exactly 0 because the exact test does not reject (McNemar p = 0.062" in shown
    assert "so it is not shown worse" in shown


# ------------------------------------------------------------------ several candidates


def test_several_candidates_share_a_five_percent_family_wise_error():
    base = one("p" * 150 + "f" * 50, "run-a", "model-a")
    cands = [one("p" * 150 + "f" * 50, f"run-{i}", f"model-{i}") for i in range(4)]
    report = build_report(inputs(base, *cands, baseline="model-a"))
    decision = report.decision
    assert decision.level == pytest.approx(1 - 0.05 / 4) and all(v.level == decision.level for v in decision.versus)
    assert decision.multiplicity == (
        "4 candidates: each interval at 98.8% (Bonferroni, 5 % ÷ 4), so the chance that any switch is wrong "
        "stays at most 5 %"
    )
    v = decision.versus[0]
    wide, plain = v.paired.interval, v.interval95
    assert wide.low < plain.low and wide.high > plain.high  # the verdict's interval is the wider one
    shown = " ".join(text_of(report, width=200).split())
    assert "98.8% CI" in shown and "Bonferroni" in shown
    assert "| 98.8% CI |" in render_md(report)
    doc = json.loads(render_json(report))["decision"]
    assert doc["level"] == pytest.approx(0.9875) and doc["versus"][0]["ci95_pp"]["low"] == pytest.approx(
        plain.low * 100
    )
    assert "98.8% CI" in render_junit(report)


# ------------------------------------------------------------------ the margin is fixed before the data


def test_a_margin_other_than_the_recorded_one_is_labelled_as_chosen_after_the_data():
    base = one("p" * 180 + "f" * 20, "run-a", "model-a")
    cand = one("p" * 178 + "f" * 22, "run-b", "model-b")
    same = build_report(inputs(base, cand, baseline="model-a", recorded_margin_pp=5.0)).decision
    assert same.margin_pp == 5.0 and not same.margin_after_data and same.margin_words == "margin M = 5 points"
    later = build_report(inputs(base, cand, baseline="model-a", margin_pp=3.0, recorded_margin_pp=5.0))
    assert later.decision.margin_after_data
    assert later.decision.margin_words == (
        "margin M = 3 points, chosen after the data (5 was recorded when the comparison ran)"
    )
    assert "chosen after the data" in " ".join(text_of(later, width=200).split())
    assert later.decision.summary.endswith("(margin 3 points, chosen after the data; 5 was recorded before it).")
    assert "chosen after" not in same.summary
    doc = json.loads(render_json(later))["decision"]
    assert doc["margin_after_data"] is True and doc["recorded_margin_pp"] == 5.0
    # With nothing recorded (older comparisons) the margin is not labelled either way.
    assert not build_report(inputs(base, cand, baseline="model-a", margin_pp=3.0)).decision.margin_after_data


def test_report_margin_on_a_comparison_with_a_recorded_margin_is_labelled_after_the_data(store, capsys):
    record(store, "run-a", "model-a", "pppppppppp")
    record(store, "run-b", "model-b", "pppppppppf")
    store.create_comparison(
        ComparisonRecord(id="cmp-m", name="m", run_ids=["run-a", "run-b"], baseline="model-a", margin_pp=5.0)
    )
    assert load_report_inputs(store, "cmp-m").recorded_margin_pp == 5.0
    run_cli(store, "cmp-m", "--format", "json")
    doc = json.loads(capsys.readouterr().out)["decision"]
    assert doc["margin_pp"] == 5.0 and doc["margin_after_data"] is False
    run_cli(store, "cmp-m", "--margin", "20")
    out = " ".join(capsys.readouterr().out.split())
    assert "margin M = 20 points, chosen after the data (5 was recorded when the comparison ran)" in out


# ------------------------------------------------------------------ the basis of every figure (issue 48, item 8)


def test_delta_tokens_are_paired_on_the_tasks_both_scored_and_every_figure_says_its_basis():
    # The baseline passes 10 of 40; the candidate 40 of 40, with 5 completion tokens more per
    # attempt. Per completed task the candidate looks 75 % cheaper in tokens; on the 40 tasks
    # both scored it spends 8 % more, which is the table's Δ tokens.
    base = one("p" * 10 + "f" * 30, "run-a", "model-a")
    cand = replace(one("p" * 40, "run-b", "model-b"), attempts=attempts("p" * 40, completion_tokens=15))
    report = build_report(inputs(base, cand, baseline="model-a"))
    [v] = report.decision.versus
    assert v.tokens_per_task_pct == pytest.approx((65 - 240) / 240 * 100)
    assert v.tokens_paired_pct == pytest.approx((65 - 60) / 60 * 100) and v.tokens_tasks == 40
    assert v.latency_tasks == 40
    shown = " ".join(text_of(report, 200).split())
    assert "+8%" in shown and "−73%" not in shown
    assert "Δ over the 40 tasks both scored (latency: the 40 timed on both sides" in shown
    assert "tokens: the 40 with usage on both, every attempt" in shown
    # One of Δ cost and savings: the table has no savings column beside Δ cost/task.
    assert "savings" not in shown.split("Versus the baseline")[1].split("Baseline:")[0]
    doc = json.loads(render_json(report))["decision"]["versus"][0]
    assert doc["tokens_paired_pct"] == pytest.approx(v.tokens_paired_pct) and doc["tokens_tasks"] == 40
    # n beside the percentiles: the latency table's n is its values' count.
    assert "| n |" in render_md(report) and "| 10 |" in render_md(report)


@pytest.mark.parametrize(("value", "expected"), [(-5.04, "−5.04"), (-4.96, "−4.96"), (-5.0, "−5.0"), (-4.2, "−4.2")])
def test_a_bound_near_the_margin_keeps_the_digits_that_show_its_side(value, expected):
    # A bound printed −5.0 sat beside either "no worse" or "inconclusive" at a 5-point margin.
    assert fmt.points_interval((value, 3.0), marks=(-5.0,)) == f"{expected} to +3.0 pts"


def test_a_baseline_chosen_with_report_baseline_is_labelled_as_chosen_after_the_data(store, capsys):
    record(store, "run-a", "model-a", "pppppppppp")
    record(store, "run-b", "model-b", "pppppppppf")
    store.create_comparison(
        ComparisonRecord(id="cmp-b", name="b", run_ids=["run-a", "run-b"], baseline="model-a", margin_pp=5.0)
    )
    run_cli(store, "cmp-b", "--format", "json")
    assert json.loads(capsys.readouterr().out)["decision"]["baseline_source"] == "named"
    run_cli(store, "cmp-b", "--baseline", "model-a", "--format", "json")  # the recorded one: not after the data
    assert json.loads(capsys.readouterr().out)["decision"]["baseline_source"] == "named"
    run_cli(store, "cmp-b", "--baseline", "model-b", "--format", "json")
    doc = json.loads(capsys.readouterr().out)["decision"]
    assert doc["baseline_source"] == "after_data" and "chosen after the data" in doc["summary"]
    run_cli(store, "cmp-b", "--baseline", "model-b")
    out = " ".join(capsys.readouterr().out.split())
    assert "Baseline: model-b (chosen after the data, with report --baseline" in out

"""One question, one number: one interval per pair on the page, every disagreement between the
rule's rating and the paired test said, gates that never pass what the test rejects silently,
and sample sizes that do not overpromise."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compare_tui.cli import main
from compare_tui.report import build_report, check_gate, render_junit, render_md
from compare_tui.report.columns import paired_title
from compare_tui.report.decision import Verdict
from compare_tui.report.power import plan_tasks, tasks_needed, verdict_power
from compare_tui.report.stats import mcnemar_exact
from compare_tui.store import Store
from tests.core.report.test_decision import _item6, text_of, three
from tests.core.report.test_report import inputs, one
from tests.core.report.test_report_load import compare, record

# ------------------------------------------------------------------ synthetic comparisons


@st.composite
def comparisons(draw, baseline: bool | None = None):
    """2–4 models over 1–40 tasks, each task's outcome per model drawn freely (pass, fail, error)."""
    models = draw(st.integers(2, 4))
    tasks = draw(st.integers(1, 40))
    letters = st.text(alphabet="ppffe", min_size=tasks, max_size=tasks)
    runs = [one(draw(letters), f"run-{m}", f"model-{m}") for m in range(models)]
    named = draw(st.booleans()) if baseline is None else baseline
    return inputs(*runs, baseline="model-0" if named else None)


def _pair_intervals(report) -> dict[frozenset[str], set[tuple[str, str, float, float, float]]]:
    """Every interval the report carries for each pair of models, oriented as shown."""
    found: dict[frozenset[str], set[tuple[str, str, float, float, float]]] = {}
    for p in report.paired:
        if p.interval is not None:
            key = frozenset((p.model_a, p.model_b))
            found.setdefault(key, set()).add((p.model_a, p.model_b, p.interval.low, p.interval.high, p.level))
    if report.decision is not None:
        for v in report.decision.versus:
            if v.paired.interval is not None:
                key = frozenset((v.candidate, report.decision.baseline))
                interval = v.paired.interval
                found.setdefault(key, set()).add(
                    (v.candidate, report.decision.baseline, interval.low, interval.high, v.level)
                )
    return found


# ------------------------------------------------------------------ 1. one interval per pair


def test_the_paired_section_shows_the_decisions_own_intervals_and_no_second_tasks_needed():
    report = build_report(three(baseline="model-a"))  # two candidates: 97.5 % each
    decision = report.decision
    assert [(p.model_a, p.model_b) for p in report.paired] == [("model-b", "model-a"), ("model-c", "model-a")]
    for p, v in zip(report.paired, decision.versus, strict=True):
        assert p is v.paired and p.level == decision.level == 0.975 and p.interval == v.paired.interval
        assert p.tasks_needed is None and "tasks in all" not in p.sentence and "the decision's" in p.sentence
    title = paired_title(report)
    assert "The decision's intervals" in title and "candidate − baseline, 97.5%" in title
    shown = " ".join(text_of(report, width=200).split())
    assert "97.5% CI of A − B" in shown and "95% CI of A − B" not in shown
    # One "tasks needed" per verdict question: the decision's line, once.
    assert shown.count("to show it no worse (within 5 points): about") == 1
    assert "would give 80 % power" not in shown
    md = render_md(report)
    assert "## Is the difference larger than noise?" in md and "97.5%" in md.split("larger than noise?")[1]


def test_without_a_baseline_several_pairs_are_labelled_unadjusted_for_one_pair_alone():
    report = build_report(three())
    assert len(report.paired) == 2 and all(p.level == 0.95 for p in report.paired)
    assert "95%, unadjusted, for one pair alone" in paired_title(report)
    assert "unadjusted, for one pair alone" in render_md(report)
    single = build_report(inputs(one("pppf"), one("ppff", "run-b", "model-b")))
    assert "unadjusted" not in paired_title(single)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(comparisons())
def test_no_page_shows_two_intervals_for_one_pair_without_the_label(case):
    report = build_report(case)
    for key, intervals in _pair_intervals(report).items():
        assert len(intervals) == 1, (key, intervals)
    if report.decision is not None:
        assert all(p.level == report.decision.level for p in report.paired)
        assert {(p.model_a, p.model_b) for p in report.paired} == {
            (v.candidate, report.decision.baseline) for v in report.decision.versus
        }
    elif len(report.paired) > 1:
        assert "unadjusted, for one pair alone" in paired_title(report)
        assert "unadjusted, for one pair alone" in render_md(report)


# ------------------------------------------------------------------ 2. every disagreement said


def test_low_beside_a_worse_verdict_gets_its_sentence():
    # The baseline passes 13 tasks the candidate errors on: "worse" (p = 0.000244) while the
    # rule says low because fewer than two models completed tasks.
    report = build_report(
        inputs(one("p" * 13, "run-a", "model-a"), one("e" * 13, "run-b", "model-b"), baseline="model-a")
    )
    [v] = report.decision.versus
    assert v.verdict is Verdict.WORSE and v.paired.mcnemar_p == pytest.approx(0.000244, abs=1e-6)
    assert report.recommendation.confidence == "low"
    assert "fewer than two models completed tasks" in report.recommendation.reasons
    assert report.rating_note == (
        "Confidence “low” comes from the rule's conditions (fewer than two models completed tasks), not from a "
        "test: the paired test on the same tasks finds model-a's lead over model-b larger than noise (McNemar "
        "p = 0.00024), so “low” does not mean the difference could be noise."
    )
    assert report.caveats[0].text == report.rating_note


def test_low_for_a_small_lead_beside_a_significant_test_gets_its_sentence():
    base = one("p" * 600 + "f" * 400, "run-a", "model-a")
    cand = one("p" * 560 + "f" * 440, "run-b", "model-b")  # 40 flips one way: 4 points, p ≈ 2e-12
    report = build_report(inputs(base, cand))
    assert report.recommendation.confidence == "low" and report.paired[0].within_noise is False
    assert "the lead is 4.0 points, under five" in report.rating_note and "larger than noise" in report.rating_note


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(comparisons())
def test_every_disagreement_between_the_rating_and_the_test_has_its_sentence(case):
    report = build_report(case)
    rec = report.recommendation
    if rec.winner is None or rec.runner_up is None:
        return
    winner = report.figures_for(rec.winner)
    runner = report.figures_for(rec.runner_up)
    both = [(a.status, b.status) for a, b in zip(winner.blocks, runner.blocks, strict=True)]
    scored = [(a, b) for a, b in both if a in ("pass", "fail", "error") and b in ("pass", "fail", "error")]
    only_w = sum(a == "pass" and b != "pass" for a, b in scored)
    only_r = sum(b == "pass" and a != "pass" for a, b in scored)
    if not scored:
        return
    on_page = next((p for p in report.paired if {p.model_a, p.model_b} == {rec.winner, rec.runner_up}), None)
    alpha = 1 - (on_page.level if on_page is not None else 0.95)
    significant = mcnemar_exact(only_w, only_r) < alpha
    if (rec.confidence != "low") != significant:  # medium/high within noise, or low beyond it
        assert report.rating_note is not None and rec.confidence in report.rating_note
    if report.decision is not None and report.decision.chosen not in (None, rec.winner):
        assert report.rating_note is not None and report.decision.chosen in report.rating_note


# ------------------------------------------------------------------ 3. gates


def test_rule_based_gates_warn_when_the_test_disagrees_and_fail_when_asked():
    report = _item6()  # "high" beside p = 0.25, and the decision keeps the baseline
    gate = check_gate(report, require_confidence="high", require_winner="my-qwen-2k")
    assert gate.passed and len(gate.warnings) == 3
    assert "within noise (McNemar p = 0.25)" in gate.warnings[0] and "--require-verdict" in gate.warnings[0]
    assert "the decision against the baseline keeps smollm2-135m" in gate.warnings[1]
    strict = check_gate(report, require_confidence="high", require_winner="my-qwen-2k", strict=True)
    assert not strict.passed and strict.exit_code == 3 and not strict.warnings
    assert all(r.endswith("(--fail-on-disagreement)") for r in strict.reasons)
    root = ET.fromstring(render_junit(report, gate))
    suite = root.find("testsuite[@name='gate']")
    case = suite.find("testcase[@name='--require-confidence high']")
    assert case.find("properties/property[@name='warning']") is not None and case.find("failure") is None
    assert "warning:" in case.find("system-err").text
    failed = ET.fromstring(render_junit(report, strict)).find("testsuite[@name='gate']")
    assert failed.get("failures") == "2"
    # Where the test agrees there is nothing to say.
    agree = build_report(inputs(one("p" * 10 + "f" * 40), one("p" * 40 + "f" * 10, "run-b", "model-b")))
    assert check_gate(agree, require_confidence="high", require_winner="model-b").warnings == ()


@pytest.fixture
def disputed(tmp_path: Path):
    with Store.open(tmp_path / "runs.sqlite") as store:
        record(store, "run-s", "smollm2-135m", "pppffffpff")
        record(store, "run-q", "my-qwen-2k", "pppppffppf")
        compare(store, "cmp-1", "run-s", "run-q")
        yield store


def test_the_command_warns_on_stderr_and_in_json_and_fails_behind_the_option(disputed, capsys):
    args = ["report", "cmp-1", "--store", str(disputed.path), "--format", "json", "--require-confidence", "high"]
    assert main(args) == 0
    captured = capsys.readouterr()
    assert "compare-tui: gate warning: --require-confidence high is met by the rule's rating" in captured.err
    gate = json.loads(captured.out)["gate"]
    assert gate["passed"] is True and gate["checks"][0]["option"] == "--require-confidence high"
    assert "within noise" in gate["checks"][0]["warnings"][0]
    assert main([*args, "--fail-on-disagreement"]) == 3
    captured = capsys.readouterr()
    assert "gate failed: --require-confidence high is met" in captured.err
    assert json.loads(captured.out)["gate"]["checks"][0]["reasons"]
    assert main(["report", "cmp-1", "--store", str(disputed.path), "--fail-on-disagreement"]) == 2
    assert "give one of them too" in capsys.readouterr().err
    # Without a gate the JSON is the published report.json, byte for byte: no `gate`.
    assert main(["report", "cmp-1", "--store", str(disputed.path), "--format", "json"]) == 0
    assert "gate" not in json.loads(capsys.readouterr().out)


def test_help_leads_with_the_verdict_gate(capsys):
    with pytest.raises(SystemExit):
        main(["report", "--help"])
    shown = capsys.readouterr().out
    assert shown.index("--require-verdict") < shown.index("--require-confidence") < shown.index("--require-winner")
    assert "--require-verdict no-worse" in shown.split("examples:")[1].split("\n\n")[0]
    assert "prefer --require-verdict" in re.sub(r"-\s+", "-", " ".join(shown.split()))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(comparisons(baseline=True), st.sampled_from(["better", "no-worse"]))
def test_the_verdict_gate_never_passes_a_worse_or_inconclusive_candidate(case, required):
    report = build_report(case)
    allowed = {"better"} if required == "better" else {"better", "no worse"}
    for v in report.decision.versus:
        if check_gate(report, require_verdict=required, candidate=v.candidate).passed:
            assert str(v.verdict) in allowed
    if check_gate(report, require_verdict=required).passed:
        assert any(str(v.verdict) in allowed for v in report.decision.versus)
    # The rule-based gates never pass silently where the test disagrees.
    check = report.rule_check
    for kwargs in ({"require_confidence": "medium"}, {"require_winner": report.recommendation.winner or "model-0"}):
        gate = check_gate(report, **kwargs)
        if gate.passed and check.lead is not None and check.lead.within_noise:
            assert gate.warnings
            assert not check_gate(report, strict=True, **kwargs).passed


# ------------------------------------------------------------------ 4. sample sizes


def test_no_flip_at_all_never_promises_100_percent_power():
    report = build_report(
        inputs(one("p" * 3, "run-a", "model-a"), one("p" * 3, "run-b", "model-b"), baseline="model-a")
    )
    [v] = report.decision.versus
    [no_worse, better] = v.needed
    assert no_worse.power < 0.9 and not no_worse.separated
    shown = " ".join(text_of(report, width=400).split())
    assert "80 % power" in shown and not re.search(r"(9\d|100) ?% power", shown)
    assert "no task has separated them yet" in shown
    # The plug-in rates (no flip: zero variance) said 73 tasks "for 100 % power".
    assert tasks_needed(0.0, 0.0, margin=0.05).power == 1.0 and no_worse.tasks > 73


def test_the_plan_holds_its_power_where_the_pilots_rates_understate_the_flips():
    # Forty ties: if flips are truly 1–2 % each way, the plug-in plan (73 tasks) has power
    # 0.39–0.54; the stated plan keeps at least 80 % there.
    plan = plan_tasks(0, 0, 40, margin=0.05)
    for rate in (0.01, 0.015, 0.02):
        assert verdict_power(plan.tasks, rate, rate, margin=0.05) >= 0.80
        assert verdict_power(73, rate, rate, margin=0.05) < 0.6

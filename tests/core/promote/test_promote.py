"""Promote: refused on a verdict that does not allow it, accepted with --force --reason,
--initial, baseline show/history, exports without keys, and models remove guarding a baseline."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from compare_tui.cli import main
from compare_tui.promote.export import alias_json, litellm_config
from compare_tui.store import Store
from tests.core.report.test_report_load import compare, record

WORKLOAD = "support-triage"


@pytest.fixture
def store(tmp_path: Path):
    with Store.open(tmp_path / "runs.sqlite") as s:
        yield s


def cli(store: Store, *args: str) -> int:
    return main([*args, "--store", str(store.path)])


@pytest.fixture
def comparisons(store):
    """cmp-1: a (10/10) and b (2/10), no baseline named. cmp-2: a vs c (9/10), baseline a: c
    is inconclusive (one task lost of ten)."""
    record(store, "run-a", "model-a", "pppppppppp")
    record(store, "run-b", "model-b", "ppfffffffe")
    compare(store, "cmp-1", "run-a", "run-b")
    record(store, "run-a2", "model-a", "pppppppppp")
    record(store, "run-c", "model-c", "pppppppppf")
    compare(store, "cmp-2", "run-a2", "run-c")
    store.set_comparison_baseline("cmp-2", "model-a")
    return store


def test_promote_without_any_baseline_needs_initial(comparisons, capsys):
    assert cli(comparisons, "promote", "cmp-1", "--model", "model-a") == 2
    assert "has no baseline" in capsys.readouterr().err
    assert cli(comparisons, "promote", "cmp-1", "--model", "model-a", "--initial", "--reason", "what we run") == 0
    out = capsys.readouterr().out
    assert "model-a becomes workload support-triage's first baseline (initial" in out
    decision = comparisons.current_baseline(WORKLOAD)
    assert (decision.model, decision.kind, decision.comparison_id, decision.reason) == (
        "model-a",
        "initial",
        "cmp-1",
        "what we run",
    )
    assert decision.pins["model-a"]["run_id"] == "run-a" and "key_env" not in decision.pins["model-a"]


def test_refused_on_inconclusive_and_on_worse_then_forced_with_a_reason(comparisons, capsys):
    cli(comparisons, "promote", "cmp-1", "--model", "model-a", "--initial")
    capsys.readouterr()
    # cmp-2 names model-a: c lost one task of ten: inconclusive.
    assert cli(comparisons, "promote", "cmp-2", "--model", "model-c") == 3
    err = capsys.readouterr().err
    assert "refused: model-c is inconclusive against model-a" in err and "--force" in err
    # cmp-1 has no baseline of its own: the workload's (model-a) is used; b is worse.
    assert cli(comparisons, "promote", "cmp-1", "--model", "model-b") == 3
    assert "refused: model-b is worse against model-a" in capsys.readouterr().err
    assert len(comparisons.baseline_history(WORKLOAD)) == 1  # nothing written
    assert cli(comparisons, "promote", "cmp-2", "--model", "model-c", "--force") == 2
    assert "--force needs --reason" in capsys.readouterr().err
    assert cli(comparisons, "promote", "cmp-2", "--model", "model-c", "--force", "--reason", "accepted: one task") == 0
    assert "(forced)" in capsys.readouterr().out
    history = comparisons.baseline_history(WORKLOAD)
    assert [(d.model, d.kind, d.previous_model) for d in history] == [
        ("model-c", "forced", "model-a"),
        ("model-a", "initial", None),
    ]
    assert history[0].figures["versus"]["verdict"] == "inconclusive"
    assert history[0].figures["versus"]["ci95_pp"]["low"] < 0 < history[0].figures["versus"]["ci95_pp"]["high"]
    assert cli(comparisons, "baseline", "history", WORKLOAD) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "model-c (forced, verdict inconclusive) replacing model-a on comparison cmp-2" in lines[0]
    assert lines[1].strip() == "reason: accepted: one task"
    assert "model-a (initial) on comparison cmp-1" in lines[2]
    assert cli(comparisons, "baseline", "show", WORKLOAD, "--json") == 0
    assert json.loads(capsys.readouterr().out)[WORKLOAD]["model"] == "model-c"


def test_promote_accepts_a_no_worse_candidate_and_exports_a_canary_without_keys(store, tmp_path, capsys):
    # 100 tasks passed by both: the interval is about ±3.7 points, inside the 5-point margin.
    record(store, "run-a", "model-a", "p" * 100)
    record(store, "run-d", "model-d", "p" * 100)
    compare(store, "cmp-9", "run-a", "run-d")
    assert cli(store, "promote", "cmp-9", "--model", "model-a", "--initial") == 0
    out = tmp_path / "routes.yaml"
    assert (
        cli(store, "promote", "cmp-9", "--model", "model-d", "--canary", "10", "--export", "litellm", "--out", str(out))
        == 0
    )
    printed = capsys.readouterr().out
    assert "model-d replaces model-a as workload support-triage's baseline (promoted): model-d is no worse" in printed
    assert "Canary: 10% of traffic to model-d, 90% stays on model-a." in printed
    text = out.read_text(encoding="utf-8")
    assert text.count('- model_name: "support-triage"') == 2 and "weight: 10" in text and "weight: 90" in text
    assert "api_key" not in text.replace("add api_key", "")
    decision = store.current_baseline(WORKLOAD)
    assert decision.canary_percent == 10 and decision.kind == "promoted"
    alias = json.loads(alias_json(decision))
    assert [(r["model"], r["percent"]) for r in alias["routes"]] == [("model-d", 10.0), ("model-a", 90.0)]
    assert litellm_config(decision) == text


def test_promote_bad_input(comparisons, capsys):
    assert cli(comparisons, "promote", "nope", "--model", "model-a") == 2
    assert cli(comparisons, "promote", "run-a", "--model", "model-a") == 2
    assert "single run" in capsys.readouterr().err
    assert cli(comparisons, "promote", "cmp-1", "--model", "zzz", "--initial") == 2
    assert "not a shown model" in capsys.readouterr().err
    assert cli(comparisons, "promote", "cmp-1", "--model", "model-a", "--export", "json") == 2
    assert "--export needs --out" in capsys.readouterr().err
    assert cli(comparisons, "baseline", "history", "nothing-here") == 1
    assert comparisons.baseline_history(WORKLOAD) == []


def test_a_workloads_baseline_cannot_be_removed_from_the_catalogue_without_force(comparisons, tmp_path, capsys):
    catalogue = tmp_path / "models.toml"
    entry = (
        '[[model]]\nname = "{0}"\nkind = "hosted"\nendpoint = "http://127.0.0.1:9/v1"\n'
        'model = "{0}"\n[model.cost]\nbasis = "hardware"\nusd_per_hour = 1.0\n'
    )
    catalogue.write_text(entry.format("model-a") + entry.format("model-b"), encoding="utf-8")
    cli(comparisons, "promote", "cmp-1", "--model", "model-a", "--initial")
    capsys.readouterr()
    assert cli(comparisons, "models", "remove", "model-a", "--models", str(catalogue)) == 2
    assert "model-a is the baseline of workload support-triage" in capsys.readouterr().err
    assert "model-a" in catalogue.read_text(encoding="utf-8")
    assert cli(comparisons, "models", "remove", "model-a", "--models", str(catalogue), "--force") == 0
    assert "model-a" not in catalogue.read_text(encoding="utf-8")


def test_promoting_the_comparisons_own_baseline_is_judged_against_the_workloads(comparisons, capsys):
    # --initial never bypasses a verdict: cmp-2 names model-a, so model-c is judged, and refused.
    assert cli(comparisons, "promote", "cmp-2", "--model", "model-c", "--initial") == 3
    assert comparisons.current_baseline(WORKLOAD) is None
    capsys.readouterr()
    # With model-c as the workload's baseline, promoting cmp-2's own baseline model-a is judged
    # against model-c (one task apart of ten: inconclusive).
    comparisons.set_comparison_baseline("cmp-2", None)
    assert cli(comparisons, "promote", "cmp-2", "--model", "model-c", "--initial") == 0
    comparisons.set_comparison_baseline("cmp-2", "model-a")
    capsys.readouterr()
    assert cli(comparisons, "promote", "cmp-2", "--model", "model-a") == 3
    assert "refused: model-a is inconclusive against model-c" in capsys.readouterr().err


def test_a_workload_baseline_outside_the_comparison_gives_no_verdict(comparisons, capsys):
    cli(comparisons, "promote", "cmp-2", "--model", "model-c", "--force", "--reason", "set up")
    capsys.readouterr()
    assert comparisons.current_baseline(WORKLOAD).model == "model-c"
    # cmp-1 (a, b) names no baseline and does not hold model-c.
    assert cli(comparisons, "promote", "cmp-1", "--model", "model-a") == 3
    err = capsys.readouterr().err
    assert "the workload's baseline model-c is not in this comparison" in err
    assert cli(comparisons, "promote", "cmp-1", "--model", "model-a", "--force", "--reason", "known good") == 0
    assert comparisons.current_baseline(WORKLOAD).kind == "forced"


def test_the_summary_names_the_workload_baseline_replaced_not_the_comparison_baseline(comparisons, capsys):
    # The workload's baseline is c (forced), the comparison's is a: promoting a no-worse d
    # judged against a replaces c, and says so.
    assert cli(comparisons, "promote", "cmp-2", "--model", "model-c", "--force", "--reason", "test") == 0
    record(comparisons, "run-a3", "model-a", "p" * 100)
    record(comparisons, "run-d", "model-d", "p" * 100)
    compare(comparisons, "cmp-3", "run-a3", "run-d")
    comparisons.set_comparison_baseline("cmp-3", "model-a")
    capsys.readouterr()
    assert cli(comparisons, "promote", "cmp-3", "--model", "model-d") == 0
    printed = capsys.readouterr().out
    assert (
        "model-d replaces model-c as workload support-triage's baseline (promoted): model-d is no worse against "
        "model-a" in printed
    )
    assert comparisons.current_baseline(WORKLOAD).previous_model == "model-c"


def test_the_promote_keys_offer_follows_the_verdicts_and_never_offers_the_current_baseline(comparisons):
    from compare_tui.promote import promotion_offer
    from compare_tui.promote.offer import NOT_A_COMPARISON
    from compare_tui.report import build_report, load_report_inputs

    def offer(ref: str, current: str | None):
        return promotion_offer(build_report(load_report_inputs(comparisons, ref)), current)

    # No baseline anywhere: the recommended model, as the workload's first.
    assert offer("cmp-1", None).model == "model-a" and offer("cmp-1", None).initial
    assert (
        offer("cmp-1", "model-a").note
        == "model-a is already the baseline of support-triage; no other candidate to promote."
    )
    # cmp-2 names model-a: c (inconclusive) is still offered; plan_promotion then refuses it.
    assert offer("cmp-2", None).model == "model-c" and not offer("cmp-2", None).initial
    assert promotion_offer(build_report(load_report_inputs(comparisons, "run-a")), None).note == NOT_A_COMPARISON


def test_a_verdict_refusal_is_its_own_error_type(comparisons):
    from compare_tui.promote import PromotionRefused, VerdictRefused, plan_promotion
    from compare_tui.report import load_report_inputs

    inputs = load_report_inputs(comparisons, "cmp-2")
    with pytest.raises(VerdictRefused):
        plan_promotion(inputs, "model-c", current_baseline=None)
    with pytest.raises(PromotionRefused) as refused:
        plan_promotion(inputs, "model-c", current_baseline=None, force=True)
    assert not isinstance(refused.value, VerdictRefused)  # --force without --reason: bad input (2)

"""The reproduce check: tolerances, the pure comparison of two runs' reports, and
`compare-tui reproduce` against a fake server (exit codes 0 / 1 / 2)."""

from __future__ import annotations

import json

import pytest

from compare_tui.diff import NotComparable, ToleranceError, reproduce_check, resolve_tolerances
from compare_tui.report import AttemptFacts, ReportInputs, RunInput
from compare_tui.store import RunRecord
from tests.core.experiment.test_experiment_helpers import catalogue, cli, entry, three_task_set
from tests.support.fake_openai import FakeServer, text

DIGEST = "sha256:" + "2" * 64
SETTINGS = {"attempts": 1, "temperature": 0.0, "max_tokens": 16, "concurrency": 4, "timeout_s": 120.0}
KINDS = {"t1": "exact", "t2": "exact", "t3": "exact", "h": "human"}
DEFAULTS = resolve_tolerances()


# ------------------------------------------------------------------ tolerances


def test_defaults_then_the_manifest_then_the_command_line():
    assert {n: (t.limit, t.source) for n, t in DEFAULTS.items()} == {
        "pass_rate": (0.02, "default"),
        "agreement": (0.95, "default"),
        "latency_p50": (0.2, "default"),
        "tokens": (0.05, "default"),
    }
    chosen = resolve_tolerances({"latency_p50": "30%", "tokens": "0.1"}, ["latency_p50=10%", "pass_rate=0pp"])
    assert (chosen["latency_p50"].limit, chosen["latency_p50"].source) == (0.1, "command line")
    assert (chosen["tokens"].limit, chosen["tokens"].source) == (0.1, "manifest")
    assert chosen["pass_rate"].limit == 0.0 and resolve_tolerances(given=["pass_rate=5"])["pass_rate"].limit == 0.05


@pytest.mark.parametrize(
    "item, message",
    [
        ("speed=2%", "unknown tolerance"),
        ("pass_rate=2%", "percentage points"),
        ("latency_p50=20", "ambiguous|percentage"),
        ("tokens=-1%", "zero or more"),
        ("agreement=150%", "cannot exceed"),
        ("tokens", "NAME=VALUE"),
        ("agreement=lots", "not a number"),
    ],
)
def test_bad_tolerances_say_what_was_expected(item, message):
    with pytest.raises(ToleranceError, match=message):
        resolve_tolerances(given=[item])


# ------------------------------------------------------------------ the pure check


def model(**changes):
    return entry("http://127.0.0.1:9001/v1", "alpha", **changes).pins()


def inputs(
    run_id, outcomes, *, e2e=100.0, tokens=10, settings=SETTINGS, pins=None, digest=DIGEST, build="b1", cost=True
) -> ReportInputs:
    pins = pins or model()
    record = RunRecord(
        id=run_id,
        status="completed",
        goldset_id="w",
        goldset_digest=digest,
        model_name="alpha",
        model_entry=pins,
        settings=settings,
        provenance="verified",
        cost_basis=pins["cost"] if cost else None,
        environment={"server": {"props": {"build_info": build, "chat_template_sha256": "t"}}},
        started_at="2026-01-01T00:00:00Z",
        finished_at="2026-01-01T00:01:00Z",
    )
    facts = tuple(
        AttemptFacts(task, 1, outcome, ttft_ms=e2e / 2, e2e_ms=e2e, prompt_tokens=tokens, completion_tokens=tokens)
        for task, outcome in outcomes.items()
    )
    return ReportInputs(runs=(RunInput(record, facts),), task_kinds=KINDS, task_ids=tuple(KINDS))


SAME = {"t1": "pass", "t2": "pass", "t3": "fail", "h": "review"}


def test_two_identical_runs_reproduce_within_default_tolerances():
    check = reproduce_check(inputs("a", SAME), inputs("b", SAME, e2e=110.0), DEFAULTS)
    assert check.reproduced and check.changed == () and check.differences == ()
    assert check.compared_tasks == 3 and check.human_tasks == 1
    by_name = {f.name: f for f in check.figures}
    assert by_name["latency_p50"].delta == pytest.approx(0.1) and by_name["agreement"].delta == 1.0


def test_a_flipped_task_is_outside_and_listed_and_a_tight_tolerance_fails_on_latency_drift():
    flipped = {**SAME, "t2": "fail"}
    check = reproduce_check(inputs("a", SAME), inputs("b", flipped), DEFAULTS)
    assert not check.reproduced
    assert {f.name for f in check.outside} == {"pass_rate", "agreement"}
    assert [(t.task_id, t.status_a, t.status_b) for t in check.changed] == [("t2", "pass", "fail")]
    assert {f.name: f.delta for f in check.figures}["pass_rate"] == pytest.approx(-1 / 3)
    tight = resolve_tolerances(given=["latency_p50=5%"])
    drift = reproduce_check(inputs("a", SAME), inputs("b", SAME, e2e=110.0), tight)
    assert [f.name for f in drift.outside] == ["latency_p50"]
    boundary = reproduce_check(inputs("a", SAME), inputs("b", SAME, e2e=105.0), tight)
    assert boundary.reproduced  # a delta equal to its tolerance is within it


def test_token_drift_and_zero_tokens():
    check = reproduce_check(inputs("a", SAME, tokens=100), inputs("b", SAME, tokens=110), DEFAULTS)
    assert [f.name for f in check.outside] == ["tokens"]
    zero = reproduce_check(inputs("a", SAME, tokens=0), inputs("b", SAME, tokens=1), DEFAULTS)
    tokens = {f.name: f for f in zero.figures}["tokens"]
    assert not tokens.within and "zero" in tokens.note


def test_different_settings_and_server_build_are_flagged_before_comparing():
    warm = {**SETTINGS, "temperature": 0.7, "max_tokens": 32}
    check = reproduce_check(inputs("a", SAME), inputs("b", SAME, settings=warm, build="b2"), DEFAULTS)
    assert [(d.what, d.a, d.b) for d in check.differences] == [
        ("temperature", "0.0", "0.7"),
        ("max_tokens", "16", "32"),
        ("server build", "b1", "b2"),
    ]
    assert check.reproduced  # still compared; flags do not change the verdict


def test_runs_of_other_sets_or_other_pins_or_refused_runs_are_not_comparable():
    with pytest.raises(NotComparable, match="different golden sets"):
        reproduce_check(inputs("a", SAME), inputs("b", SAME, digest="sha256:" + "3" * 64), DEFAULTS)
    with pytest.raises(NotComparable, match="weights_digest"):
        reproduce_check(inputs("a", SAME), inputs("b", SAME, pins=model(weights_digest="sha256:" + "4" * 64)), DEFAULTS)
    with pytest.raises(NotComparable, match="cost basis"):
        reproduce_check(inputs("a", SAME), inputs("b", SAME, cost=False), DEFAULTS)


# ------------------------------------------------------------------ the command


@pytest.fixture
def two_runs(tmp_path):
    """Two plain runs of one set on one fake server; t2 fails in the second run only."""
    script = {"t1": text("ok"), "t2": [text("ok"), text("no")], "t3": text("ok")}
    with FakeServer(script) as server:
        models = catalogue(tmp_path / "models.toml", entry(server.url, "alpha"))
        goldset = three_task_set(tmp_path / "set")
        store = str(tmp_path / "runs.sqlite")
        ids = []
        for _ in range(2):
            out = cli("run", str(goldset), "--model", "alpha", "--models", str(models), "--store", store, "--json")
            ids.append(json.loads(out.out)["runs"][0]["id"])
        yield {"ids": ids, "store": store, "set": goldset, "models": models, "server": server}


def test_the_command_exits_1_with_a_clear_report_when_a_tolerance_is_exceeded(two_runs):
    a, b = two_runs["ids"]
    result = cli("reproduce", a, b, "--store", two_runs["store"], "--tolerance", "latency_p50=1000%")
    assert result.code == 1, result.err
    assert "t2: pass → fail" in result.out and "NOT REPRODUCED" in result.out
    assert "pass_rate" in result.out.split("verdict: NOT REPRODUCED")[1]
    doc = json.loads(
        cli(
            "reproduce",
            a[:6],
            b[:6],
            "--json",
            "--store",
            two_runs["store"],
            "--tolerance",
            "latency_p50=1000%",
            "--tolerance",
            "pass_rate=40pp",
            "--tolerance",
            "agreement=60%",
        ).out
    )
    assert doc["reproduced"] and doc["changed_tasks"] == [{"task_id": "t2", "a": "pass", "b": "fail"}]


def test_the_command_exits_0_when_within_and_takes_the_manifest_tolerances(two_runs, tmp_path):
    with FakeServer({"t1": text("ok"), "t2": text("ok"), "t3": text("ok")}) as server:
        models = catalogue(tmp_path / "m2.toml", entry(server.url, "alpha"))
        goldset = three_task_set(tmp_path / "set2")
        manifest = goldset / "golden.toml"
        manifest.write_text('tolerances = { latency_p50 = "1000%" }\n' + manifest.read_text())
        ids = [
            json.loads(
                cli(
                    "run",
                    str(goldset),
                    "--model",
                    "alpha",
                    "--models",
                    str(models),
                    "--store",
                    two_runs["store"],
                    "--json",
                ).out
            )["runs"][0]["id"]
            for _ in range(2)
        ]
    result = cli("reproduce", *ids, "--store", two_runs["store"])
    assert result.code == 0, result.out + result.err
    assert "REPRODUCED" in result.out and "(manifest)" in result.out
    assert "same settings, server build" in result.out
    # Runs of different sets (digests) cannot reproduce each other.
    other = cli("reproduce", ids[0], two_runs["ids"][0], "--store", two_runs["store"])
    assert other.code == 2 and "different golden sets" in other.err


def test_bad_input_exits_2(two_runs):
    a, b = two_runs["ids"]
    store = two_runs["store"]
    assert cli("reproduce", a, a, "--store", store).code == 2
    assert cli("reproduce", a, "ffffffff", "--store", store).code == 2
    bad = cli("reproduce", a, b, "--store", store, "--tolerance", "pass_rate=2%")
    assert bad.code == 2 and "percentage points" in bad.err


def test_flagged_differences_fail_only_when_asked(two_runs):
    _, b = two_runs["ids"]
    third = cli(
        "run",
        str(two_runs["set"]),
        "--model",
        "alpha",
        "--max-tokens",
        "8",
        "--models",
        str(two_runs["models"]),
        "--store",
        two_runs["store"],
        "--json",
    )
    c = json.loads(third.out)["runs"][0]["id"]
    loose = ("--store", two_runs["store"], "--tolerance", "latency_p50=1000%")
    flagged = cli("reproduce", b, c, *loose)
    assert flagged.code == 0 and "max_tokens: A 16 · B 8" in flagged.out
    assert cli("reproduce", b, c, *loose, "--fail-on-difference").code == 1

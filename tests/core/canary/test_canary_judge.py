"""Canary traffic that matches no golden-set task, graded by the pairwise judge (`canary/judged.py`):
both orders asked of a scripted judge on the fake server; a judge that picks by position gives
ties and no evidence either way, a consistent judge preferring A rolls B back; every judge request
is an audit row whose cost counts toward the day's cap; `canary status` splits the evidence by
grader, and says how to add a judge when there is none."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from compare_tui import canary
from compare_tui.canary.judged import judge_task_id
from compare_tui.catalogue import Catalogue
from compare_tui.report.decision import Verdict
from compare_tui.store import Store
from compare_tui.vocabulary import CanaryChange, CanaryState, PairGrader, PairSkip
from tests.support.builders import hosted_catalogue, hosted_entry, write_set
from tests.support.fake_openai import FakeServer, text

ALIAS = "greetings"
A_SAYS = "billing"
_SHOWN_FIRST = re.compile(r"<<<ANSWER A\n(.*?)\nANSWER A>>>", re.DOTALL)


class Judge:
    """The judge's behaviour, switched per test: `first` always picks the answer shown first
    (position bias), `prefers_a` picks A's answer (the baseline's) in whichever order it is shown."""

    mode = "first"

    def __call__(self, body: dict[str, Any], count: int) -> Any:
        system = str(body["messages"][0].get("content", ""))
        if "grade one answer" in system:  # the similarity grade: 5 when B's answer is A's, else 1
            graded = re.search(r"<<<ANSWER\n(.*?)\nANSWER>>>", body["messages"][-1]["content"], re.DOTALL)
            return text(f"GRADE: {5 if graded and graded.group(1) == A_SAYS else 1}\nREASON: compared.")
        if "impartial judge" not in system:
            return text(A_SAYS)  # the baseline's off-path replay
        if self.mode == "first":
            verdict = "A"
        else:
            shown_first = _SHOWN_FIRST.search(body["messages"][-1]["content"])
            verdict = "A" if shown_first is not None and shown_first.group(1) == A_SAYS else "B"
        if "response_format" in body:  # a structured reply: the JSON verdict alone
            return text(json.dumps({"verdict": verdict, "reason": "as asked"}))
        return text(f"VERDICT: {verdict}\nREASON: my choice.")


@pytest.fixture
def world(tmp_path: Path):
    judge = Judge()
    with FakeServer(judge) as server:
        catalogue = Catalogue(
            models=(
                hosted_entry(server.url, name="model-a"),
                hosted_entry(server.url + "/b", name="model-b"),
                hosted_entry(server.url, name="judge-m"),
            )
        )
        config = tmp_path / "litellm.yaml"
        route = {"model_name": ALIAS, "litellm_params": {"model": "openai/fake-model", "api_base": server.url}}
        config.write_text(json.dumps({"model_list": [route]}))
        log = tmp_path / "traffic.jsonl"
        log.write_text("")
        store = Store.open(tmp_path / "runs.sqlite")
        yield {
            "judge": judge, "server": server, "catalogue": catalogue, "config": config, "log": log, "store": store,
            "set": write_set(tmp_path / "set", {f"t{i}": A_SAYS for i in range(10)}),
        }  # fmt: skip
        store.close()


def _start(world: dict, judge: str | None = "judge-m", structured: bool = False, **options: Any) -> Any:
    return canary.start(
        world["store"], world["catalogue"], workload_id=ALIAS, alias=ALIAS, baseline="model-a", candidate="model-b",
        set_path=world["set"], steps=(50.0, 100.0), shadow=False, margin_pp=10.0, min_pairs=5, auto_advance=False,
        max_usd_per_day=None, config_path=world["config"], traffic_log=str(world["log"]), restart=lambda: None,
        decided_by="ana", judge=judge, judge_structured=structured, **options,
    )  # fmt: skip


def _log(world: dict, prompts_and_answers: list[tuple[str, str]], first: int = 0) -> None:
    with world["log"].open("a") as log:
        for i, (prompt, answer) in enumerate(prompts_and_answers, start=first):
            line = {
                "litellm_call_id": f"call-{i}", "model_group": ALIAS, "model_id": "model-b", "status": "success",
                "messages": [{"role": "user", "content": prompt}],
                "response": {"choices": [{"message": {"role": "assistant", "content": answer}}]},
                "model_parameters": {"max_tokens": 16},
            }  # fmt: skip
            log.write(json.dumps(line) + "\n")


def _watch(world: dict) -> canary.WatchPass:
    current = world["store"].latest_canary(ALIAS)
    return canary.watch_once(
        world["store"], world["catalogue"], current, restart=lambda: None, by="test", environ={}, replays_per_s=1000
    )


def test_a_judge_that_picks_by_position_gives_ties_and_no_evidence_either_way(world: dict) -> None:
    _start(world)
    _log(world, [(f"hello {i}", "good morning") for i in range(12)])  # no task has these messages
    done = _watch(world)
    pairs = world["store"].canary_pairs(done.canary.id)
    assert len(pairs) == 12 and {(p.grader, p.judge, p.judge_result) for p in pairs} == {
        (PairGrader.JUDGE, "judge-m", "inconsistent")
    }
    assert all(p.paired is None and p.skipped is PairSkip.JUDGE_INCONSISTENT for p in pairs)
    assert {p.judge_detail for p in pairs} == {"ab: A; ba: A"}  # the answer shown first, each time
    assert done.assessment.look.verdict is Verdict.INCONCLUSIVE and done.assessment.move is canary.Move.HOLD
    assert done.canary.weight == 50 and done.change is None  # neither rolled back nor ready
    # Every judge request is an audit row named by its pair and order, priced into the day's cap.
    audit = {row["id"]: row["task_id"] for row in world["store"].query("SELECT id, task_id FROM audit")}
    assert len(audit) == 12 * 3  # a replay and two judge calls per request
    for pair in pairs:
        assert [audit[i] for i in pair.judge_audit_ids] == [
            judge_task_id(done.canary.id, pair.call_id, "ab"),
            judge_task_id(done.canary.id, pair.call_id, "ba"),
        ]
        assert pair.judge_usd > 0
    spent = world["store"].replay_usd_since(done.canary.id, "2000-01-01")
    assert spent == pytest.approx(sum(p.replay_usd + p.judge_usd for p in pairs))
    # The daily eval budget reads the audit ledger: the judge's requests are in today's spend too.
    from datetime import UTC, datetime

    from compare_tui.engine.budget import spent_today

    assert spent_today(world["store"], world["catalogue"], datetime.now(UTC)) == pytest.approx(spent)
    assert done.assessment.graders["judges"] == [
        {
            "model": "judge-m",
            "grader": "judge",
            "pairs": 0,
            "candidate": 0,
            "baseline": 0,
            "tie": 0,
            "inconsistent": 12,
            "failed": 0,
        }
    ]


@pytest.mark.parametrize("structured", [False, True], ids=["written", "structured"])
def test_a_consistent_judge_preferring_a_rolls_b_back(world: dict, structured: bool) -> None:
    world["judge"].mode = "prefers_a"
    _start(world, structured=structured)
    _log(world, [(f"hello {i}", "good morning") for i in range(25)])
    done = _watch(world)
    assert done.change is CanaryChange.ROLLED_BACK and done.canary.state is CanaryState.ROLLED_BACK
    pairs = world["store"].canary_pairs(done.canary.id)
    assert 5 <= len(pairs) < 25 and all(p.paired == -1 and p.judge_result == "baseline" for p in pairs)
    # Both orders were asked: A's answer shown first in one, second in the other.
    judged = [r.body for r in world["server"].requests if "impartial judge" in r.body["messages"][0]["content"]]
    firsts = [_SHOWN_FIRST.search(body["messages"][-1]["content"]).group(1) for body in judged]  # type: ignore[union-attr]
    assert firsts.count(A_SAYS) == firsts.count("good morning") == len(pairs)
    assert all(("response_format" in body) is structured for body in judged)
    assert {p.judge_detail for p in pairs} == {"ab: A; ba: B"}
    change = world["store"].canary_changes(ALIAS)[0]
    assert change.evidence["graders"]["judges"][0]["baseline"] == len(pairs)


def test_a_similarity_judge_counts_b_as_close_or_departed_from_a_and_rolls_back_a_departing_b(world: dict) -> None:
    from compare_tui.canary.policy import graders_words
    from compare_tui.vocabulary import CanaryJudgeRubric

    _start(world, judge_rubric=CanaryJudgeRubric.SIMILARITY)
    _log(world, [(f"hi {i}", A_SAYS) for i in range(3)] + [(f"hello {i}", "good morning") for i in range(3, 30)])
    done = _watch(world)
    assert done.change is CanaryChange.ROLLED_BACK
    pairs = world["store"].canary_pairs(done.canary.id)
    assert [p.paired for p in pairs[:4]] == [0, 0, 0, -1] and {p.grader for p in pairs} == {PairGrader.SIMILARITY}
    assert [p.judge_detail for p in pairs[2:4]] == ["grade 5", "grade 1"]
    audit = {row["id"]: row["task_id"] for row in world["store"].query("SELECT id, task_id FROM audit")}
    assert all(
        [audit[i] for i in p.judge_audit_ids] == [judge_task_id(done.canary.id, p.call_id, "single")] for p in pairs
    )
    assert graders_words(done.assessment.graders) == (
        f"0 pairs by the golden set's checks, {len(pairs)} by judge judge-m (similarity to A's answer: as close 3, "
        f"departed {len(pairs) - 3})"
    )


def test_status_splits_the_evidence_by_grader(world: dict, capsys: pytest.CaptureFixture[str]) -> None:
    from compare_tui.cli import main

    world["judge"].mode = "prefers_a"
    _start(world)
    world["store"].update_canary(world["store"].latest_canary(ALIAS).model_copy(update={"min_pairs": 100}))
    # Three requests a check grades (B right, A right), two the judge grades (A preferred).
    _log(world, [("t0", A_SAYS), ("t1", A_SAYS), ("t2", A_SAYS), ("hi", "yo"), ("hey", "yo")])
    _watch(world)
    capsys.readouterr()
    store = str(world["store"].path)
    main(["canary", "status", ALIAS, "--store", store])
    out = capsys.readouterr().out
    assert (
        "evidence: 3 pairs by the golden set's checks, 2 by judge judge-m (both orders asked: "
        "B preferred 0, A preferred 2, tie 0)" in out
    )
    assert "note: judge judge-m has no calibration against your labels on greetings" in out
    main(["canary", "status", ALIAS, "--json", "--store", store])
    document = json.loads(capsys.readouterr().out)
    assert document["judge"] == "judge-m" and document["evidence"]["graders"]["check"] == 3


def test_without_a_judge_unchecked_traffic_is_counted_until_watch_is_given_one(
    world: dict, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from compare_tui.cli import main

    _start(world, judge=None)
    _log(world, [("hi", "yo"), ("t0", A_SAYS)])
    models = hosted_catalogue(tmp_path / "models.toml", world["server"].url, ("model-a", "model-b", "judge-m"))
    common = ["--models", str(models), "--store", str(world["store"].path)]
    assert main(["canary", "watch", ALIAS, "--once", *common]) == 3
    out = capsys.readouterr().out
    assert "1 of them matched no task of the golden set: not graded (add a judge with `--judge MODEL`" in out
    pairs = world["store"].canary_pairs(world["store"].latest_canary(ALIAS).id)
    assert [(p.skipped, p.replay_audit_id is None) for p in pairs] == [(PairSkip.NO_CHECK, True), (None, False)]
    main(["canary", "status", ALIAS, "--store", str(world["store"].path)])
    out = capsys.readouterr().out
    assert "evidence: 1 pair by the golden set's checks" in out
    assert (
        "note: 1 request matched no task of the golden set and was not graded: give the canary a judge "
        f"(`compare-tui canary watch {ALIAS} --judge MODEL`" in out
    )
    # A judge given to watch grades what comes next (the judge here picks by position).
    _log(world, [("hey", "yo"), ("hello", "yo"), ("t1", A_SAYS)], first=2)
    assert main(["canary", "watch", ALIAS, "--once", "--judge", "judge-m", *common]) == 3
    out = capsys.readouterr().out
    assert "judged by judge-m (pairwise, both orders asked) from now on" in out
    assert (
        "3 requests of model-b replayed to model-a: 1 paired (1 by the golden set's checks, 0 by judge judge-m)" in out
    )
    assert "no evidence from the judge on 2 inconsistent (its two orders disagreed)" in out
    assert world["store"].latest_canary(ALIAS).judge == "judge-m"


@pytest.mark.parametrize("labelled", [24, 4], ids=["calibrated", "few-labels"])
def test_the_judge_s_calibration_on_the_workload_is_shown_beside_the_judged_evidence(
    tmp_path: Path, labelled: int
) -> None:
    from compare_tui.canary.policy import assess
    from compare_tui.canary.status import judge_notes
    from compare_tui.store import CanaryRecord
    from tests.core.judge.test_judge_calibration import _stored

    store_path, runs, _ = _stored(tmp_path, labelled=labelled)
    with Store.open(store_path) as store:
        workload = store.get_run_exact(runs["base-model"]).goldset_id
        record = CanaryRecord(
            workload_id=workload, alias=workload, baseline="base-model", candidate="cand-model", set_path="set",
            steps=(50.0, 100.0), step=0, weight=50.0, routes_digest="x", state=CanaryState.STEPPING, margin_pp=10.0,
            min_pairs=5, gateway_config="c", traffic_log="t", judge="judge",
        )  # fmt: skip
        notes = judge_notes(store, record, assess(record, []))
    expected = {
        24: "judge agrees with your labels: passes 18/26 right answers, fails 22/22 wrong ones; the canary's",
        4: "judge agrees with your labels: passes 0/8 right answers, no wrong answer labelled yet; not enough labels "
        "to correct; the canary's",
    }[labelled]
    assert notes == [
        f"judge judge's calibration on {workload} (its single-answer grades against your labels): {expected} "
        "judged evidence is raw, not corrected by it"
    ]


def test_a_judge_of_a_compared_model_s_family_is_named_beside_its_evidence(world: dict) -> None:
    from compare_tui.canary.policy import assess
    from compare_tui.canary.status import judge_notes

    record = _start(world).model_copy(update={"judge": "model-b"})
    notes = judge_notes(world["store"], record, assess(record, []))
    assert notes[0].startswith("The judge appears to be from the same model family as the baseline (model-a")
    assert notes[1].startswith("The judge is the candidate model itself (model-b): models tend to prefer their own")

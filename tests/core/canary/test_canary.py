"""The canary's core (`compare_tui/canary`): routes written and compared, paired evidence from a
traffic log with audited off-path replays to a real loopback server, the roll back at once, the
person's advance, the refusal of a hand edit, the exact resume, the spend cap and no traffic.
The proxy's restart is a counter here; tests/integration/test_canary_gateway.py runs the real one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from compare_tui import canary
from compare_tui.canary import routes
from compare_tui.catalogue import Catalogue
from compare_tui.store import Store
from compare_tui.vocabulary import CanaryChange, CanaryState, PairSkip
from tests.support.builders import hosted_entry, write_set
from tests.support.fake_openai import FakeServer, text

ALIAS = "engine-test"


class Restarts:
    def __init__(self) -> None:
        self.count = 0

    def __call__(self) -> None:
        self.count += 1


@pytest.fixture
def server():
    with FakeServer(default=text("billing")) as srv:
        yield srv


@pytest.fixture
def world(tmp_path: Path, server: FakeServer):
    """A gateway-shaped config routing the alias to A, a catalogue of A (the fake server: it
    answers "billing") and B, a golden set, an empty traffic log and a store."""
    catalogue = Catalogue(
        models=(hosted_entry(server.url, name="model-a"), hosted_entry(server.url + "/b", name="model-b"))
    )
    config = tmp_path / "litellm.yaml"
    other = {"model_name": "other", "litellm_params": {"model": "openai/x", "api_base": "http://127.0.0.1:9/v1"}}
    a_route = {"model_name": ALIAS, "litellm_params": {"model": "openai/fake-model", "api_base": server.url}}
    config.write_text(json.dumps({"model_list": [other, a_route], "general_settings": {"master_key": "x"}}))
    tasks = {f"t{i}": "billing" for i in range(30)} | {f"r{i}": "refund" for i in range(30)}
    goldset = write_set(tmp_path / "set", tasks)
    log = tmp_path / "traffic.jsonl"
    log.write_text("")
    store = Store.open(tmp_path / "runs.sqlite")
    yield {"catalogue": catalogue, "config": config, "set": goldset, "log": log, "store": store, "before": [a_route]}
    store.close()


def _start(world: dict, restarts: Restarts, **options: object) -> object:
    values = dict(
        workload_id=ALIAS, alias=ALIAS, baseline="model-a", candidate="model-b", set_path=world["set"],
        steps=(50.0, 100.0), shadow=False, margin_pp=10.0, min_pairs=5, auto_advance=False, max_usd_per_day=None,
        config_path=world["config"], traffic_log=str(world["log"]), restart=restarts, decided_by="ana",
    )  # fmt: skip
    values.update(options)
    return canary.start(world["store"], world["catalogue"], **values)  # type: ignore[arg-type]


def _log(
    world: dict,
    prompts_and_answers: list[tuple[str, str]],
    *,
    by: str = "model-b",
    first: int = 0,
    max_tokens: int = 16,
) -> None:
    with world["log"].open("a") as log:
        for i, (prompt, answer) in enumerate(prompts_and_answers, start=first):
            line = {
                "litellm_call_id": f"call-{i}", "startTime": 1796655950 + i, "model": ALIAS, "model_group": ALIAS,
                "model_id": by, "is_silent_experiment": False, "status": "success",
                "messages": [{"role": "user", "content": prompt}],
                "response": {"choices": [{"message": {"role": "assistant", "content": answer}}]},
                "model_parameters": {"max_tokens": max_tokens},
            }  # fmt: skip
            log.write(json.dumps(line) + "\n")


def _watch(world: dict, restarts: Restarts | None = None, **options: object) -> canary.WatchPass:
    current = world["store"].latest_canary(ALIAS)
    return canary.watch_once(
        world["store"],
        world["catalogue"],
        current,
        restart=restarts or Restarts(),
        by="test",
        environ={},
        replays_per_s=1000,
        **options,
    )


def _alias_split(world: dict) -> routes.Split:
    return routes.split_of(routes.alias_entries(routes.load_config(world["config"]), ALIAS), ALIAS)


def test_start_routes_b_at_the_first_step_and_keeps_everything_else(world: dict) -> None:
    restarts = Restarts()
    started = _start(world, restarts)
    document = routes.load_config(world["config"])
    assert [e["model_name"] for e in document["model_list"]] == ["other", ALIAS, ALIAS]
    assert _alias_split(world).weights == {"model-a": 50.0, "model-b": 50.0}
    assert restarts.count == 1 and started.state is CanaryState.STEPPING  # type: ignore[attr-defined]
    with pytest.raises(canary.CanaryError, match="already has an active canary"):
        _start(world, restarts)


def test_worse_b_is_rolled_back_at_once_and_every_replay_is_audited(world: dict, server: FakeServer) -> None:
    restarts = Restarts()
    _start(world, restarts)
    _log(world, [(f"t{i}", "wrong") for i in range(25)])  # A answers "billing": right; B wrong
    done = _watch(world, restarts)
    assert done.change is CanaryChange.ROLLED_BACK and done.canary.state is CanaryState.ROLLED_BACK
    pairs = world["store"].canary_pairs(done.canary.id)
    assert 5 <= len(pairs) < 25 and all(p.paired == -1 for p in pairs)  # stopped at the verdict, not at the end
    assert routes.alias_entries(routes.load_config(world["config"]), ALIAS) == world["before"]
    assert restarts.count == 2
    audit = world["store"].query("SELECT task_id, state, status FROM audit ORDER BY id")
    assert [row["task_id"] for row in audit] == [canary.replay_task_id(done.canary.id, p.call_id) for p in pairs]
    assert {(row["state"], row["status"]) for row in audit} == {("done", 200)}
    replays = [r for r in server.requests if r.path.endswith("/chat/completions")]
    assert replays and all(r.body["stream_options"] == {"include_usage": True} for r in replays)  # priced
    assert [p.replay_audit_id for p in pairs] == [
        row["id"] for row in world["store"].query("SELECT id FROM audit ORDER BY id")
    ]
    history = world["store"].canary_changes(ALIAS)
    assert [c.change for c in history] == [CanaryChange.ROLLED_BACK, CanaryChange.STARTED]
    assert history[0].to_weight == 0 and history[0].evidence["verdict"] == "worse"


def test_better_b_waits_for_a_person_then_advances_and_ends_as_a_promotion(world: dict) -> None:
    restarts = Restarts()
    _start(world, restarts, min_pairs=5)
    _log(world, [(f"r{i}", "refund") for i in range(12)])  # A says "billing": wrong; B right
    done = _watch(world, restarts)
    assert done.assessment.move is canary.Move.READY and done.canary.weight == 50  # no auto-advance: it waits
    moved = canary.advance(world["store"], world["catalogue"], done.canary, restart=restarts, by="ana")
    assert moved.state is CanaryState.PROMOTED and _alias_split(world).weights == {"model-b": 100.0}
    decision = world["store"].current_baseline(ALIAS)
    assert decision.model == "model-b" and decision.previous_model == "model-a"
    assert decision.figures["canary"]["verdict"] == "better"


def test_thin_data_never_advances(world: dict) -> None:
    restarts = Restarts()
    _start(world, restarts, min_pairs=30)
    _log(world, [(f"r{i}", "refund") for i in range(12)])
    done = _watch(world, restarts)
    assert done.assessment.move is canary.Move.HOLD and "only 12 new pairs" in done.assessment.reason
    with pytest.raises(canary.CanaryError, match="not advancing"):
        canary.advance(world["store"], world["catalogue"], done.canary, restart=restarts, by="ana")
    assert restarts.count == 1


def test_a_hand_edit_is_never_overwritten_the_automatic_step_refuses_and_names_it(world: dict) -> None:
    restarts = Restarts()
    _start(world, restarts)
    document = routes.load_config(world["config"])
    for entry in document["model_list"]:
        if entry.get("model_info", {}).get("id") == "model-b":
            entry["litellm_params"]["weight"] = 30
    edited = json.dumps(document)
    world["config"].write_text(edited)
    _log(world, [(f"t{i}", "wrong") for i in range(25)])
    with pytest.raises(
        canary.HandEditRefused, match=r"changed by hand: .* model-b 37.5% \(weight 30\).* last wrote model-b 50%"
    ):
        _watch(world, restarts)
    assert world["config"].read_text() == edited and restarts.count == 1
    assert world["store"].canary_changes(ALIAS)[0].change is CanaryChange.REFUSED


def test_a_killed_watch_resumes_its_evidence_exactly(world: dict) -> None:
    restarts = Restarts()
    _start(world, restarts, min_pairs=100)
    answers = (
        [(f"t{i}", "billing") for i in range(6)] + [("not a task", "hello")] + [(f"r{i}", "refund") for i in range(5)]
    )
    _log(world, answers)
    _log(world, [("t0", "billing")], by="model-a", first=100)  # A's own traffic: not B's, never paired
    _watch(world, restarts, max_pairs=4)  # stopped after 4 pairs, as a kill between two lines leaves it
    _watch(world, restarts)
    pairs = world["store"].canary_pairs(world["store"].latest_canary(ALIAS).id)
    assert [p.call_id for p in pairs] == [f"call-{i}" for i in range(12)]
    assert [p.seq for p in pairs] == list(range(12))
    assert [p.paired for p in pairs] == [0] * 6 + [None] + [1] * 5
    assert pairs[6].skipped is PairSkip.NO_CHECK and pairs[6].replay_audit_id is None
    assert len(world["store"].query("SELECT id FROM audit")) == 11  # no replay made twice


def test_the_daily_cap_stops_replays_and_no_traffic_says_so(world: dict) -> None:
    restarts = Restarts()
    _start(world, restarts, max_usd_per_day=0.0)
    empty = _watch(world, restarts)
    assert empty.lines == 0 and empty.assessment.reason == "no paired evidence yet: holding"
    _log(world, [(f"t{i}", "billing") for i in range(3)])
    done = _watch(world, restarts)
    assert [p.skipped for p in done.new_pairs] == [PairSkip.OVER_BUDGET] * 3
    assert world["store"].query("SELECT id FROM audit") == []


def test_replays_stop_at_the_daily_eval_budget_and_say_why(world: dict) -> None:
    """$0.001 left today (the ledger already holds a request of no run at A's price): two replays
    at ≤16 tokens fit (≤ $0.00005 each); one at ≤1000 tokens (≤ $0.002) would not, so it and every
    later one, however small, are not replayed, and the pass says why."""
    from compare_tui.engine.budget import DailyBudget
    from compare_tui.store import AuditRow, utc_now

    restarts = Restarts()
    _start(world, restarts, min_pairs=100)
    world["store"].record_audit(  # a judge call earlier today: $0.0002 at A's price
        AuditRow(at=utc_now(), endpoint="http://x/v1", model="model-a", prompt_tokens=200)
    )
    _log(world, [("t0", "billing"), ("t1", "billing")])
    _log(world, [("t2", "billing")], first=2, max_tokens=1000)
    _log(world, [("t3", "billing")], first=3)
    done = _watch(world, restarts, budget=DailyBudget(0.0012))
    assert [p.skipped for p in done.new_pairs] == [None, None] + [PairSkip.OVER_DAILY_BUDGET] * 2
    assert len(world["store"].query("SELECT id FROM audit")) == 1 + 2  # the judge call and two replays
    assert (done.budget_stop or "").startswith("replays stopped: the next replay's estimated spend ≤ $0.002")
    # $0.001 less the two replays, priced from the token counts their answers carried.
    assert "would exceed the daily eval budget ($0.000976 left of $0.0012 today; resets at 00:00 UTC" in (
        done.budget_stop or ""
    )
    # A workload's own limit binds the same way.
    _log(world, [("t9", "billing")], first=4)
    again = _watch(world, restarts, budget=DailyBudget(None, {ALIAS: 0.0}))
    assert [p.skipped for p in again.new_pairs] == [PairSkip.OVER_DAILY_BUDGET]
    assert f"would exceed {ALIAS}'s daily eval budget" in (again.budget_stop or "")


def test_shadow_routes_mirror_b_behind_the_baseline(world: dict) -> None:
    restarts = Restarts()
    _start(world, restarts, shadow=True)
    entries = routes.alias_entries(routes.load_config(world["config"]), ALIAS)
    assert entries[0]["litellm_params"]["silent_model"] == routes.shadow_route(ALIAS)
    assert "weight" not in entries[0]["litellm_params"]
    assert (entries[1]["model_name"], entries[1]["model_info"]["id"]) == (routes.shadow_route(ALIAS), "model-b")
    assert _alias_split(world).weights == {"model-a": 100.0} and _alias_split(world).shadow == "model-b"


@pytest.mark.parametrize("text", ["1,5,5,100", "5,1,100", "1,5,50", "0,100", "a,b"])
def test_steps_must_rise_and_end_at_100(text: str) -> None:
    with pytest.raises(canary.CanaryError):
        canary.parse_steps(text)
    assert canary.parse_steps("1,5,25,50,100") == canary.DEFAULT_STEPS


def test_status_and_history_show_the_roll_back_with_its_evidence(
    world: dict, capsys: pytest.CaptureFixture[str]
) -> None:
    from compare_tui.cli import main

    _start(world, Restarts())
    store = str(world["store"].path)
    assert main(["canary", "status", ALIAS, "--store", store]) == 3  # hold: no evidence yet
    _log(world, [(f"t{i}", "wrong") for i in range(25)])
    _watch(world)
    capsys.readouterr()
    assert main(["canary", "status", ALIAS, "--json", "--store", store]) == 4
    document = json.loads(capsys.readouterr().out)
    assert (document["state"], document["weight"], document["verdict"]) == ("rolled back", 0.0, "worse")
    assert document["last_change"]["change"] == "rolled back" and document["exit_code"] == 4
    assert main(["baseline", "history", ALIAS, "--store", store]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "rolled back 50% → 0% by test; verdict worse on 9 pairs, B − A in [−100.0, −7.4] points" in lines[0]
    assert "started 0% → 50% by ana" in lines[2]


def test_b_s_answer_is_graded_as_the_user_got_it_cut_short_or_a_tool_call() -> None:
    from compare_tui.canary.evidence import logged_answer

    cut = {"choices": [{"finish_reason": "length", "message": {"role": "assistant", "content": "Say good morning.<|"}}]}
    assert logged_answer({"response": cut}).text == "Say good morning.<|"  # type: ignore[union-attr]
    call = {"id": "c1", "type": "function", "function": {"name": "send", "arguments": '{"to": 1}'}}
    called = {"choices": [{"message": {"role": "assistant", "content": None, "tool_calls": [call]}}]}
    answer = logged_answer({"response": called})
    assert answer is not None and answer.tool_calls[0].name == "send" and answer.text == ""
    assert logged_answer({"response": {"error": "x"}}) is None


def test_a_rollback_of_an_alias_the_canary_made_routes_the_baseline_alone(world: dict) -> None:
    document = routes.load_config(world["config"])
    document["model_list"] = [e for e in document["model_list"] if e["model_name"] != ALIAS]
    world["config"].write_text(json.dumps(document))
    restarts = Restarts()
    _start(world, restarts)
    _log(world, [(f"t{i}", "wrong") for i in range(25)])
    assert _watch(world, restarts).change is CanaryChange.ROLLED_BACK
    alias = routes.alias_entries(routes.load_config(world["config"]), ALIAS)
    assert [(e["model_info"]["id"], "weight" in e["litellm_params"]) for e in alias] == [("model-a", False)]


def test_a_person_s_advance_names_a_hand_edit_before_anything_else(world: dict) -> None:
    restarts = Restarts()
    _start(world, restarts, min_pairs=50)
    document = routes.load_config(world["config"])
    document["model_list"][1]["litellm_params"]["weight"] = 90
    world["config"].write_text(json.dumps(document))
    current = world["store"].latest_canary(ALIAS)
    for _ in range(2):
        with pytest.raises(canary.HandEditRefused, match="changed by hand"):
            canary.advance(world["store"], world["catalogue"], current, restart=restarts, by="ana")
    refusals = [c for c in world["store"].canary_changes(ALIAS) if c.change is CanaryChange.REFUSED]
    assert len(refusals) == 1 and restarts.count == 1  # recorded once per edit; nothing restarted


def test_auto_advance_takes_the_step_the_evidence_allows_and_stop_restores_the_alias(world: dict) -> None:
    restarts = Restarts()
    _start(world, restarts, steps=(25.0, 50.0, 100.0), auto_advance=True)
    _log(world, [(f"r{i}", "refund") for i in range(12)])
    done = _watch(world, restarts)
    assert done.change is CanaryChange.ADVANCED and done.canary.weight == 50 and restarts.count == 2
    assert "advanced automatically (--auto-advance)" in world["store"].canary_changes(ALIAS)[0].reason
    again = _watch(world, restarts)  # no new pairs at the new step: it holds
    assert again.change is None and again.assessment.move is canary.Move.HOLD
    stopped = canary.stop(world["store"], world["catalogue"], again.canary, restart=restarts, by="ana", reason="")
    assert stopped.state is CanaryState.STOPPED and restarts.count == 3
    assert routes.alias_entries(routes.load_config(world["config"]), ALIAS) == world["before"]


def test_status_json_of_a_workload_with_no_canary_is_json_too(tmp_path, capsys):
    from compare_tui.cli import main

    store = str(tmp_path / "runs.sqlite")
    Store.open(store).close()
    assert main(["canary", "status", "greetings", "--json", "--store", store]) == 2
    captured = capsys.readouterr()
    document = json.loads(captured.out)  # a rollout controller parses stdout whatever the answer
    assert (document["canary_id"], document["exit_code"]) == (None, 2)
    assert "has no canary" in document["reason"] and "has no canary" in captured.err

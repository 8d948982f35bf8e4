"""The pairwise judge against scripted loopback judges: one that always prefers the first
position (every pair must come out inconsistent), one that is consistent (wins counted), one
that fails some calls (they stay in the table, and only they are retried), resuming without
re-judging, what the judge is shown, and the engine's own runs judged end to end."""

from __future__ import annotations

import asyncio
import json

import pytest

from compare_tui.engine import RunExecutor, RunOverrides, prepare_run
from compare_tui.goldset import load_golden_set
from compare_tui.judge import (
    JudgingRefused,
    execute_judging,
    load_pair_report,
    load_rubric,
    prepare_pair_judging,
    render_pair_text,
)
from compare_tui.store import AttemptRecord, Store
from tests.core.judge.test_judge_support import (
    FAST_RETRY,
    TASKS,
    add_run,
    consistent_judge,
    entry,
    fenced,
    first_position_judge,
    golden,
    scored,
)
from tests.support.builders import write_set
from tests.support.fake_openai import FakeServer, ToolCall, http_error, text, tool_calls

REFERENCE = load_rubric(None, "reference")


@pytest.fixture
def store(tmp_path):
    with Store.open(tmp_path / "runs.sqlite") as s:
        yield s


def _two_runs(store, goldset, *, baseline_bad=("t1", "t2", "t3")):
    base = add_run(store, goldset, "base-model", {t: scored("bug" if t in baseline_bad else "billing") for t in TASKS})
    cand = add_run(store, goldset, "cand-model", {t: scored("billing") for t in TASKS})
    return store.get_run(base), store.get_run(cand)


def _judge(store, base, cand, url, name="judge-model", rubric=REFERENCE, **kw):
    plan = prepare_pair_judging(store, base, cand, entry(name, url), rubric, environ={})
    tally = asyncio.run(execute_judging(store, plan, retry=FAST_RETRY, **kw))
    return plan, tally, load_pair_report(store, plan.judging.id)


def test_a_judge_that_always_prefers_the_first_position_gets_only_ties(tmp_path, store):
    base, cand = _two_runs(store, golden(tmp_path))
    with FakeServer(first_position_judge) as judge:
        plan, tally, report = _judge(store, base, cand, judge.url)
    assert tally.requested == len(judge.requests) == 12  # 6 tasks × 2 orderings
    f = report.figures
    assert (f.wins, f.losses, f.ties, f.inconsistent, f.failed) == (0, 0, 0, 6, 0)
    assert {row.result for row in report.rows} == {"inconsistent"}
    # Every pair an inconsistent tie: no win rate, no interval (issue 48, item 9).
    assert f.win_rate is None and f.interval is None and f.conclusion == "the judge gave no usable verdict"
    assert any("swapped in 6 of 6" in c for c in report.caveats)
    assert any("shown first in 100%" in c for c in report.caveats)
    shown = render_pair_text(report)
    assert "No win rate: the judge gave no usable verdict. 6 of 6 pairs were inconsistent" in shown
    assert "Candidate win rate" not in shown


def test_a_consistent_judge_has_its_wins_counted(tmp_path, store):
    base, cand = _two_runs(store, golden(tmp_path))
    with FakeServer(consistent_judge) as judge:
        _, _, report = _judge(store, base, cand, judge.url)
    f = report.figures
    assert (f.wins, f.losses, f.ties, f.inconsistent, f.failed, f.judged) == (3, 0, 3, 0, 0, 6)
    assert f.win_rate == pytest.approx(4.5 / 6)
    results = {row.task_id: row.result for row in report.rows}
    assert results == {"t1": "candidate", "t2": "candidate", "t3": "candidate", "t4": "tie", "t5": "tie", "t6": "tie"}
    row = report.rows[0]
    assert (row.ab.verdict, row.ab.preferred, row.ba.verdict, row.ba.preferred) == ("B", "candidate", "A", "candidate")
    assert row.ab.rationale == "The better answer names the right label."
    assert report.usage.calls == 12 and report.usage.prompt_tokens > 0 and report.usage.cost > 0


def test_a_clear_winner_over_many_pairs_is_called(tmp_path, store):
    tasks = {f"t{i:02d}": "billing" for i in range(30)}
    goldset = golden(tmp_path, tasks)
    base = add_run(store, goldset, "base-model", {t: scored("bug") for t in tasks})
    cand = add_run(store, goldset, "cand-model", {t: scored("billing") for t in tasks})
    with FakeServer(consistent_judge) as judge:
        _, _, report = _judge(store, store.get_run(base), store.get_run(cand), judge.url)
    assert report.figures.wins == 30 and report.figures.conclusion == "candidate better"


def _failing_judge(body, count):
    parts = fenced(body)
    if "t2" in parts["REQUEST"]:
        return http_error(400, "context too long")  # not retryable: a failed call at once
    if "t3" in parts["REQUEST"] and parts["ANSWER A"] == "bug":
        return text("I cannot decide which is better.")  # no verdict line
    return consistent_judge(body, count)


def test_failed_calls_stay_in_the_table_and_only_they_are_judged_again(tmp_path, store):
    base, cand = _two_runs(store, golden(tmp_path))
    with FakeServer(_failing_judge) as judge:
        plan, tally, report = _judge(store, base, cand, judge.url)
    assert tally.failed == 3  # t2 twice, t3 once
    rows = {row.task_id: row for row in report.rows}
    assert rows["t2"].result == rows["t3"].result == "failed"
    assert "HTTP 400" in rows["t2"].reason and rows["t3"].ab.error_class == "unparseable"
    assert rows["t3"].ab.raw_text == "I cannot decide which is better."
    assert report.figures.failed == 2 and report.figures.judged == 4
    assert any("left out of the win rate because a judge call failed" in c for c in report.caveats)
    assert "judge call failed" in render_pair_text(report)
    with FakeServer(consistent_judge) as judge:
        _, tally, report = _judge(store, base, cand, judge.url)
    assert tally.requested == len(judge.requests) == 3 and tally.skipped == 9
    assert report.figures.failed == 0 and report.figures.wins == 3


def test_judging_again_makes_no_request(tmp_path, store):
    base, cand = _two_runs(store, golden(tmp_path))
    with FakeServer(consistent_judge) as judge:
        _judge(store, base, cand, judge.url)
        first = len(judge.requests)
        _, tally, _ = _judge(store, base, cand, judge.url)
        assert (first, len(judge.requests), tally.requested, tally.skipped) == (12, 12, 0, 12)


async def test_an_interrupted_judging_resumes_without_re_judging(tmp_path, store):
    base, cand = _two_runs(store, golden(tmp_path), baseline_bad=tuple(TASKS))  # every ordering tells apart

    def slow(body, count):
        return text(consistent_judge(body, count).text, chunk_chars=4, chunk_delay_s=0.05)

    def key(request) -> tuple[str, str]:
        parts = fenced(request.body)
        return parts["REQUEST"].removeprefix("[user] "), "ab" if parts["ANSWER A"] == "bug" else "ba"

    with FakeServer(slow) as judge:
        plan = prepare_pair_judging(store, base, cand, entry("judge-model", judge.url), REFERENCE, environ={})
        plan.settings = type(plan.settings)(concurrency=2)
        task = asyncio.ensure_future(execute_judging(store, plan, retry=FAST_RETRY))
        while len(store.judgements_for(plan.judging.id)) < 4:
            await asyncio.sleep(0.02)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        stored = {(j.task_id, j.ordering) for j in store.judgements_for(plan.judging.id)}
        assert 4 <= len(stored) < 12
        tally = await execute_judging(store, plan, retry=FAST_RETRY)
        asked = [key(r) for r in judge.requests]
    assert (tally.requested, tally.skipped) == (12 - len(stored), len(stored))
    # A stored verdict is never asked for again; only calls cut off in flight are asked twice.
    assert all(asked.count(k) == 1 for k in stored)
    assert set(asked) == {(t, o) for t in TASKS for o in ("ab", "ba")}
    assert len(store.judgements_for(plan.judging.id)) == 12


def test_the_judge_sees_no_reasoning_traces_and_canonical_tool_calls(tmp_path, store):
    tasks = {"label": "billing", "lookup": "x"}
    extra = {
        "lookup": {
            "expected": {"tool_call": {"name": "lookup_order", "arguments": {"order": "ORD-1", "n": 2}}},
            "scorer": {"kind": "tool_call"},
        }
    }
    goldset = load_golden_set(write_set(tmp_path / "set", tasks, extra=extra))
    call = [{"id": "c1", "name": "lookup_order", "arguments": '{"n": 2, "order": "ORD-1"}'}]
    base = add_run(
        store,
        goldset,
        "base-model",
        {
            "label": scored("<think>secret scratch work</think>billing"),
            "lookup": AttemptRecord(run_id="x", task_id="lookup", attempt=1, outcome="pass", tool_calls=call),
        },
    )
    cand = add_run(
        store,
        goldset,
        "cand-model",
        {
            "label": scored("billing"),
            "lookup": AttemptRecord(
                run_id="x",
                task_id="lookup",
                attempt=1,
                outcome="pass",
                answer_text="<think>hm</think>",
                tool_calls=[{"id": "c9", "name": "lookup_order", "arguments": '{"order":"ORD-1","n":2}'}],
            ),
        },
    )
    replies = iter(["<think>VERDICT: A</think>Same call.\nVERDICT: TIE"] * 4)
    with FakeServer(lambda body, count: text(next(replies))) as judge:
        _, _, report = _judge(store, store.get_run(base), store.get_run(cand), judge.url)
        bodies = [r.body for r in judge.requests]
    prompts = [fenced(b) for b in bodies]
    assert all("secret scratch work" not in json.dumps(b) and "<think>" not in json.dumps(b) for b in bodies)
    canonical = '[tool call] lookup_order({"n":2,"order":"ORD-1"})'
    lookups = [p for p in prompts if "tools offered" in p["REQUEST"] or canonical in p.get("ANSWER A", "")]
    assert len(lookups) == 2 and all(p["ANSWER A"] == p["ANSWER B"] == canonical for p in lookups)
    assert all(
        canonical in json.dumps(b["messages"], ensure_ascii=False).replace('\\"', '"')
        for b in bodies
        if "lookup" in json.dumps(b)
    )
    assert {row.result for row in report.rows} == {"tie"}  # the trace's VERDICT: A was not read


def test_refusals_send_nothing(tmp_path, store):
    base, cand = _two_runs(store, golden(tmp_path))
    other = golden(tmp_path / "other", {"t1": "billing"})
    stranger = store.get_run(add_run(store, other, "x-model", {"t1": scored("billing")}))
    with FakeServer(consistent_judge) as judge:
        with pytest.raises(JudgingRefused, match="different golden sets"):
            prepare_pair_judging(store, base, stranger, entry("j", judge.url), REFERENCE, environ={})
        with pytest.raises(JudgingRefused, match="same run"):
            prepare_pair_judging(store, base, base, entry("j", judge.url), REFERENCE, environ={})
        keyed = entry("j", judge.url).model_copy(update={"key_env": "JUDGE_KEY"})
        with pytest.raises(JudgingRefused, match="provider API key"):
            prepare_pair_judging(store, base, cand, keyed, REFERENCE, environ={"JUDGE_KEY": "sk-proj-" + "a" * 40})
        assert judge.requests == []


def test_a_judge_of_a_contestants_family_gets_a_caveat(tmp_path, store):
    base, cand = _two_runs(store, golden(tmp_path))
    with FakeServer(consistent_judge) as judge:
        _, _, report = _judge(store, base, cand, judge.url, name="cand-model-large")
    assert any("same model family as the candidate (cand-model" in c for c in report.caveats)
    assert not any("as the baseline" in c for c in report.caveats)


def test_the_engines_own_runs_judged_end_to_end(tmp_path, store):
    tool = {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}
    goldset = load_golden_set(
        write_set(
            tmp_path / "set",
            {"refund": "billing", "crash": "bug", "weather": ""},
            extra={
                "weather": {
                    "input": {"prompt": "weather", "tools": [tool]},
                    "scorer": {"kind": "tool_call"},
                    "expected": {"tool_call": {"name": "get_weather", "arguments": {"city": "Paris"}}},
                }
            },
        )
    )
    base_script = {
        "refund": text("billing"),
        "crash": text("billing"),
        "weather": tool_calls(ToolCall("get_weather", {"city": "Paris"})),
    }
    cand_script = {
        "refund": text("<think>refund means money</think>billing"),
        "crash": text("bug"),
        "weather": tool_calls(ToolCall("get_weather", {"city": "Paris"})),
    }
    run_ids = []
    for name, script in (("base-model", base_script), ("cand-model", cand_script)):
        with FakeServer(script) as server:
            prepared = prepare_run(store, goldset, entry(name, server.url), RunOverrides(), environ={})
            assert asyncio.run(RunExecutor(store, prepared).execute()) == "completed"
            run_ids.append(prepared.run.id)
    with FakeServer(consistent_judge) as judge:
        _, _, report = _judge(store, *(store.get_run(r) for r in run_ids), judge.url)
        bodies = json.dumps([r.body for r in judge.requests])
    assert "refund means money" not in bodies and '[tool call] get_weather({\\"city\\":\\"Paris\\"})' in bodies
    # The scripted judge prefers "billing" even where the expected label is "bug": the judge
    # and the executable scorer disagree on `crash`, which is what the triage queue is for.
    results = {row.task_id: row.result for row in report.rows}
    assert results == {"crash": "baseline", "refund": "tie", "weather": "tie"}
    outcomes = {row.task_id: (row.baseline.outcome, row.candidate.outcome) for row in report.rows}
    # The exact scorer fails the candidate's inlined trace; the judge, shown it without, calls a tie.
    assert outcomes == {"crash": ("fail", "pass"), "refund": ("pass", "fail"), "weather": ("pass", "pass")}


def test_a_structured_judge_is_constrained_by_a_json_schema(tmp_path, store):
    base, cand = _two_runs(store, golden(tmp_path))

    def json_first_position(body, count):  # a tiny judge: always "A", but always parseable
        schema = body["response_format"]["json_schema"]["schema"]
        assert schema["properties"]["verdict"]["enum"] == ["A", "B", "TIE"]
        return text('{"verdict": "A", "reason": "one sentence"}')

    structured = load_rubric(None, "reference", structured=True)
    with FakeServer(json_first_position) as judge:
        plan, tally, report = _judge(store, base, cand, judge.url, rubric=structured)
    assert plan.judging.reply_form == "structured" and tally.failed == 0
    assert report.figures.inconsistent == 6 and report.figures.win_rate is None
    assert "structured replies" in render_pair_text(report)

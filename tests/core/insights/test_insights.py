"""`compare-tui insights`: failures grouped by cause from real stored runs (the fake OpenAI
server answers through a real `run`), and the grouping's bookkeeping under Hypothesis."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compare_tui.cli import main
from compare_tui.insights import (
    Cause,
    FailedAttempt,
    InsightInputs,
    ModelAttempts,
    build_insights,
    classify,
    render_text,
)
from compare_tui.store import Store
from compare_tui.vocabulary import ErrorClass, FailureCause, Outcome, SuspectReason
from tests.support.builders import hosted_catalogue, write_set
from tests.support.fake_openai import FakeServer, text, tool_calls
from tests.support.fake_openai import ToolCall as WireCall

WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
}
PARIS = {"city": "Paris"}
WEATHER_CALL = tool_calls(WireCall("get_weather", PARIS))

# task id → (expected, fake-a's answer, fake-b's answer); fake-a is the baseline.
TASKS = {
    "cut": ("billing", text("billing"), text("billing and then some", finish_reason="length")),
    "label": ("bug", text("bug"), text("billing")),
    "refuse": ("billing", text("billing"), text("I'm sorry, but I can't help with that request.")),
    "empty": ("billing", text("billing"), text("")),
    "ok": ("billing", text("billing"), text("billing")),
    "wrong-key": ("bug", text("billing"), text("billing")),
    "de-1": ("bug", text("bug"), text("billing")),
    "json-cut": ("", text('{"label": "billing"}'), text('{"label": "bil', finish_reason="length")),
    "json-none": ("", text('{"label": "billing"}'), text("billing")),
    "tool-wrong": ("", WEATHER_CALL, tool_calls(WireCall("get_time", {}))),
    "tool-args": ("", WEATHER_CALL, tool_calls(WireCall("get_weather", {"city": "Lyon"}))),
    "tool-text": ("", WEATHER_CALL, text('```json\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n```')),
    "tool-none": ("", WEATHER_CALL, text("It is sunny.")),
}
TAGS = {"label": ["german"], "de-1": ["german"], "refuse": ["english"]}
TOOL_TASK = {
    "tools": [WEATHER],
    "expected": {"tool_call": {"name": "get_weather", "arguments": PARIS}},
    "scorer": {"kind": "tool_call", "match": "exact"},
}


def _extra(task: str) -> dict:
    extra: dict = {"tags": TAGS[task]} if task in TAGS else {}
    if task.startswith("json-"):
        extra["scorer"] = {"kind": "json"}
    if task.startswith("tool-"):
        extra |= {
            "input": {"prompt": task, "tools": TOOL_TASK["tools"], "tool_choice": "auto"},
            "expected": TOOL_TASK["expected"],
            "scorer": TOOL_TASK["scorer"],
        }
    return extra


def _script(body: dict, count: int):
    prompt = body["messages"][-1]["content"]
    _, a, b = TASKS[prompt]
    return a if body["model"] == "fake-a" else b


@pytest.fixture
def stored(tmp_path: Path) -> Path:
    with FakeServer(_script) as server:
        extra = {task: _extra(task) for task in TASKS}
        goldset = write_set(tmp_path / "set", {t: spec[0] for t, spec in TASKS.items()}, extra=extra)
        models = tmp_path / "models.toml"
        hosted_catalogue(models, server.url, ("fake-a", "fake-b"), model=None)
        store = tmp_path / "runs.sqlite"
        args = ["run", str(goldset), "--models", str(models), "--store", str(store), "--model", "fake-a"]
        assert main([*args, "--model", "fake-b", "--baseline", "fake-a"]) == 0
    return store


def _insights_json(store: Path, capsys, *extra: str) -> dict:
    capsys.readouterr()
    assert main(["insights", "latest", "--store", str(store), "--format", "json", *extra]) == 0
    return json.loads(capsys.readouterr().out)


def test_each_failure_lands_in_its_cause(stored: Path, capsys) -> None:
    doc = _insights_json(stored, capsys)
    by_cause = {(g["cause"], g["label"]): g for g in doc["groups"]}
    assert by_cause[("truncated", "")]["counts"] == {"fake-a": 0, "fake-b": 2}
    assert by_cause[("refusal", "")]["examples"] == ["refuse"]
    assert by_cause[("empty", "")]["examples"] == ["empty"]
    wrong = by_cause[("wrong_label", 'expected "bug", got "billing"')]
    assert wrong["counts"] == {"fake-a": 1, "fake-b": 3}
    assert wrong["examples"] == ["de-1", "label", "wrong-key"]
    assert wrong["shares"]["fake-a"] == 1.0 and wrong["shares"]["fake-b"] == 0.25
    assert by_cause[("truncated", "")]["examples"] == ["cut", "json-cut"]  # a JSON cut at max tokens too
    assert by_cause[("json_parse", "")]["examples"] == ["json-none"]
    assert by_cause[("tool_wrong_tool", "get_weather")]["examples"] == ["tool-wrong"]
    assert by_cause[("tool_bad_arguments", "get_weather")]["examples"] == ["tool-args"]
    assert by_cause[("tool_text_call", "get_weather")]["examples"] == ["tool-text"]
    assert by_cause[("tool_no_call", "get_weather")]["examples"] == ["tool-none"]
    assert sum(g["total"] for g in doc["groups"]) == 13
    assert {m["model"]: m["failed"] for m in doc["models"]} == {"fake-a": 1, "fake-b": 12}
    # Every model fails wrong-key the same way: the golden set's expected answer is suspect.
    assert {"task": "wrong-key", "reason": "same_failure", "detail": wrong["words"]} in doc["suspects"]
    german = next(s for s in doc["against_baseline"] if s["tag"] == "german")
    assert (german["candidate"], german["losses"], german["wins"], german["directional"]) == ("fake-b", 2, 0, True)
    assert german["lost_examples"] == ["de-1", "label"]
    assert wrong["open"] == f"compare-tui insights {doc['ref']} --group {wrong['number']}"


def test_text_fits_80_columns_and_a_group_opens(stored: Path, capsys) -> None:
    capsys.readouterr()
    assert main(["insights", "latest", "--store", str(stored)]) == 0
    out = capsys.readouterr().out
    assert max(len(line) for line in out.splitlines()) <= 80
    assert "truncated at the token limit" in out and "refusal" in out and "fake-b, german: worse on 2 of 2" in out
    number = _insights_json(stored, capsys)["groups"][0]["number"]
    assert main(["insights", "latest", "--store", str(stored), "--group", str(number)]) == 0
    opened = capsys.readouterr().out
    assert "wrong-key · fake-a · attempt 1" in opened and "answer: billing" in opened
    assert main(["insights", "latest", "--store", str(stored), "--group", "99"]) == 2
    assert "no group 99" in capsys.readouterr().err


def test_classify_reads_scorer_data() -> None:
    def fail(kind: str, detail: str = "", **data: object) -> FailureCause:
        return classify(FailedAttempt("t", 1, Outcome.FAIL, kind, "x", detail=detail, score_data=data)).kind

    assert fail("json", "no JSON found in 'x'") is FailureCause.JSON_PARSE
    assert fail("json", "schema: $.a: not a string", schema_errors=["$.a: not a string"]) is FailureCause.JSON_SCHEMA
    assert fail("json", "field 'a' missing") is FailureCause.JSON_FIELD
    assert fail("json", "field 'a': expected 1, got 2") is FailureCause.JSON_VALUE
    assert fail("tool_call", calls=[], expected_name="f") is FailureCause.TOOL_NO_CALL
    assert fail("tool_call", calls=["g()"], expected_name="f") is FailureCause.TOOL_WRONG_TOOL
    assert fail("tool_call", calls=["f(1)"], expected_name="f", mismatches=["x"]) is FailureCause.TOOL_BAD_ARGUMENTS
    assert fail("tool_call", calls=[], expected_name="f", written_as_text="f()") is FailureCause.TOOL_TEXT_CALL
    command = classify(
        FailedAttempt("t", 1, Outcome.FAIL, "command", "x", score_data={"stdout_tail": "\nFAIL: 3 != 4\nmore"})
    )
    assert command.words() == "command failed: FAIL: 3 != 4"
    errored = FailedAttempt("t", 1, Outcome.ERROR, "exact", "", error_class=ErrorClass.TIMEOUT, finish_reason="length")
    assert classify(errored).kind is FailureCause.REQUEST_ERROR


_failed = st.builds(
    FailedAttempt,
    task_id=st.sampled_from(["t1", "t2", "t3", "t4"]),
    attempt=st.integers(1, 3),
    outcome=st.sampled_from([Outcome.FAIL, Outcome.ERROR]),
    scorer_kind=st.sampled_from(["exact", "regex", "json", "tool_call", "command", "human", ""]),
    answer_head=st.sampled_from(["", "  ", "billing", "I'm sorry, I can't help", '{"a": 1}']),
    has_tool_calls=st.booleans(),
    finish_reason=st.sampled_from([None, "stop", "length"]),
    error_class=st.one_of(st.none(), st.sampled_from(list(ErrorClass))),
    detail=st.text(max_size=30),
    score_data=st.fixed_dictionaries(
        {},
        optional={
            "expected": st.text(max_size=5),
            "got": st.text(max_size=5),
            "calls": st.lists(st.text(max_size=4), max_size=2),
            "expected_name": st.text(max_size=4),
            "mismatches": st.just(["x"]),
            "stdout_tail": st.text(max_size=20),
            "schema_errors": st.lists(st.text(max_size=8), max_size=2),
        },
    ),
)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(_failed, max_size=12), min_size=1, max_size=3))
def test_every_failure_lands_in_exactly_one_group(per_model: list[list[FailedAttempt]]) -> None:
    models = tuple(
        ModelAttempts(
            model=f"m{i}",
            run_id=f"r{i}",
            outcomes={f.task_id: (f.outcome,) for f in failed},
            failed=tuple(failed),
        )
        for i, failed in enumerate(per_model)
    )
    insights = build_insights(InsightInputs(ref="c", models=models, baseline="m0"))
    placed = [(m.model, id(m.failed)) for g in insights.groups for m in g.members]
    expected = [(m.model, id(f)) for m in models for f in m.failed]
    assert sorted(placed) == sorted(expected)
    assert len({g.cause for g in insights.groups}) == len(insights.groups)
    for m in models:
        assert sum(g.counts[m.model] for g in insights.groups) == insights.failed[m.model] == len(m.failed)
        shares = [g.shares[m.model] for g in insights.groups]
        if m.failed:
            assert sum(s or 0 for s in shares) == pytest.approx(1.0)
        else:
            assert all(s is None for s in shares)
    assert [g.number for g in insights.groups] == list(range(1, len(insights.groups) + 1))
    shown = render_text(insights)
    assert all(len(line) <= 80 for line in shown.splitlines())
    assert (f"and {len(insights.groups) - 15} more groups" in shown) == (len(insights.groups) > 15)
    assert all(s.reason in SuspectReason for s in insights.suspects)


def test_the_markdown_report_ends_with_the_insights(stored: Path, capsys) -> None:
    capsys.readouterr()
    assert main(["report", "latest", "--store", str(stored), "--format", "md"]) == 0
    report = capsys.readouterr().out
    section = report.split("## Insights: why answers failed", 1)[1]
    assert '| wrong label: expected "bug", got "billing" | 1 (100%) | 3 (25%) | de-1, label, wrong-key |' in section
    assert "| fake-b | german (directional) | 2 | 0 | de-1, label |" in section
    assert "- `wrong-key`: every model fails it the same way" in section
    assert main(["report", "latest", "--store", str(stored), "--format", "md", "--baseline", "fake-b"]) == 0
    rebased = capsys.readouterr().out.split("## Insights: why answers failed", 1)[1]
    assert "Against the baseline fake-b" in rebased and "| fake-a | german (directional) | 0 | 2 |" in rebased


def test_the_text_and_json_reports_and_the_published_page_carry_the_insights(stored: Path, capsys, tmp_path) -> None:
    own = _insights_json(stored, capsys)
    assert main(["report", "latest", "--store", str(stored)]) == 0
    text = capsys.readouterr().out
    assert f"Insights of {own['ref']}" in text and "Check your golden set (suspect tasks)" in text
    assert "fake-b, german: worse on 2 of 2, better on 0 (directional)" in text
    assert main(["report", "latest", "--store", str(stored), "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["insights"] == own  # the same document as `insights --format json`
    assert main(["publish", "latest", "--store", str(stored), "--out", str(tmp_path / "bundle")]) == 0
    published = json.loads((tmp_path / "bundle" / "report.json").read_text())
    assert published["insights"] == own  # report.json stays `report --format json`'s document
    page = (tmp_path / "bundle" / "index.html").read_text()
    section = page.split('<section id="insights">', 1)[1].split("</section>", 1)[0]
    assert '<a href="#insights">Insights</a>' in page
    assert '<th scope="row">1</th><td>wrong label: expected &quot;bug&quot;, got &quot;billing&quot;</td>' in section
    assert '<td class="n">1 (100%)</td><td class="n">3 (25%)</td><td>de-1, label, wrong-key</td>' in section
    assert "<li>fake-b, german: worse on 2 of 2, better on 0 (directional); lost e.g. de-1, label</li>" in section
    assert "<li>wrong-key: every model fails it the same way: wrong label: expected" in section


def test_flaky_tasks_and_wins_by_tag() -> None:
    def failed(task: str, attempt: int = 1) -> FailedAttempt:
        return FailedAttempt(task, attempt, Outcome.FAIL, "exact", "x", score_data={"expected": "a", "got": "x"})

    base = ModelAttempts(
        "base", "r0", {"t1": (Outcome.PASS, Outcome.FAIL), "t2": (Outcome.FAIL,)}, (failed("t1", 2), failed("t2"))
    )
    cand = ModelAttempts("cand", "r1", {"t1": (Outcome.PASS,), "t2": (Outcome.PASS,)})
    insights = build_insights(InsightInputs(ref="c", models=(base, cand), baseline="base", task_tags={"t2": ("fr",)}))
    assert [(s.task_id, s.reason, s.detail) for s in insights.suspects] == [
        ("t1", SuspectReason.FLAKY, "base passed 1 of 2 attempts")
    ]
    (split,) = insights.tag_splits
    assert (split.candidate, split.tag, split.losses, split.wins, split.won_examples) == ("cand", "fr", 0, 1, ("t2",))
    assert insights.groups[0].shares == {"base": 1.0, "cand": None}
    assert "cand 0 (–)" in render_text(insights)


def test_a_single_run_has_no_baseline_split(stored: Path, capsys) -> None:
    with Store.open(stored) as store:
        run = next(r for r in store.list_runs() if r.model_name == "fake-b")
    capsys.readouterr()
    assert main(["insights", run.id[:10], "--store", str(stored), "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["ref"] == run.id and doc["baseline"] is None and doc["against_baseline"] == []
    assert [m["model"] for m in doc["models"]] == ["fake-b"] and doc["models"][0]["failed"] == 12
    assert main(["insights", "nosuchref", "--store", str(stored)]) == 2


def test_a_task_no_answer_resembles_is_suspect_and_a_near_answer_is_not() -> None:
    def failed(task: str, got: str) -> FailedAttempt:
        return FailedAttempt(task, 1, Outcome.FAIL, "exact", got, score_data={"expected": "5", "got": got})

    # Each model passes half its tasks (capable): a task all fail points at the expected text.
    fails = {"sum": (Outcome.FAIL,), "near": (Outcome.FAIL,), "easy": (Outcome.PASS,), "easier": (Outcome.PASS,)}
    a = ModelAttempts(
        "a",
        "r0",
        fails,
        (
            failed("sum", "4"),
            FailedAttempt(
                "near", 1, Outcome.FAIL, "exact", "x", score_data={"expected": "Paris", "got": "paris, France."}
            ),
        ),
    )
    b = ModelAttempts(
        "b",
        "r1",
        fails,
        (
            failed("sum", "The answer is 4."),
            FailedAttempt("near", 1, Outcome.FAIL, "exact", "x", score_data={"expected": "Paris", "got": "Lyon"}),
        ),
    )
    insights = build_insights(InsightInputs(ref="c", models=(a, b), baseline="a"))
    assert [(s.task_id, s.reason, s.detail) for s in insights.suspects] == [
        ("sum", SuspectReason.UNLIKE_EXPECTED, 'no answer resembles the expected "5"')
    ]
    assert "sum: every model fails it and no answer resembles the expected" in render_text(insights)


def _all_fail(model: str, tasks: tuple[str, ...], passed: tuple[str, ...] = ()) -> ModelAttempts:
    outcomes = {t: (Outcome.FAIL,) for t in tasks} | {t: (Outcome.PASS,) for t in passed}
    failed = tuple(
        FailedAttempt(t, 1, Outcome.FAIL, "exact", "x", score_data={"expected": "4", "got": "x"}) for t in tasks
    )
    return ModelAttempts(model, f"r-{model}", outcomes, failed)


def test_a_weak_field_marks_no_task_suspect_and_says_no_model_passes_them() -> None:
    # The baseline fails nearly everything, the candidate too: every task failed by all is the
    # models' failing, not a wrong expected outcome (it listed all eight as suspect).
    tasks = tuple(f"t{i}" for i in range(8))
    weak = (_all_fail("base", tasks, ("ok",)), _all_fail("cand", tasks[:7], ("ok", "t7")))
    insights = build_insights(InsightInputs(ref="c", models=weak, baseline="base"))
    assert insights.suspects == () and insights.unpassed == tasks[:7]
    text = render_text(insights)
    assert "no model passes 7 tasks (t0, t1, t2, t3, t4 and 2 more); no model passes 50% of its tasks" in " ".join(
        text.split()
    )
    assert "(the best, cand, passes 22%)" in " ".join(text.split()) and "every model fails it" not in text
    # One capable model (it passes 8 of 9) makes the same failures suspect again.
    capable = (weak[0], _all_fail("cand", ("t0",), tuple(f"p{i}" for i in range(8))))
    again = build_insights(InsightInputs(ref="c", models=capable, baseline="base"))
    assert [s.task_id for s in again.suspects] == ["t0"] and again.unpassed == ()


def test_regex_misses_group_by_cause_not_by_task_pattern(tmp_path) -> None:
    from compare_tui.insights.causes import REGEX_CASE, REGEX_EXTRA_TEXT, REGEX_NOTHING, REGEX_WRAPPED, regex_miss

    cases = [  # (pattern, mode, flags, answer): one cause each, whatever the task's pattern
        ("^SKU-[0-9]+$", "search", [], "sku-12", REGEX_CASE),
        ("ORD-[0-9]{4}", "search", [], "ord-0042", REGEX_CASE),
        ("[0-9]+ kg", "fullmatch", [], '"5 kg"', REGEX_WRAPPED),
        ("yes|no", "fullmatch", [], "`yes`\n", REGEX_WRAPPED),
        ("[0-9]+ kg", "fullmatch", [], "It weighs 5 kg.", REGEX_EXTRA_TEXT),
        ("^[A-Z]{3}$", "search", ["IGNORECASE"], "12", REGEX_NOTHING),
        ("ORD-[0-9]{4}", "search", [], "I cannot tell", REGEX_NOTHING),
    ]
    for pattern, mode, flags, answer, want in cases:
        assert regex_miss({"pattern": pattern, "mode": mode, "flags": flags}, answer) == want, (pattern, answer)
    assert regex_miss({}, "x") == ""
    failed = [
        FailedAttempt(f"task-{i}", 1, Outcome.FAIL, "regex", answer, score_data={"pattern": pattern}, regex_miss=want)
        for i, (pattern, _, _, answer, want) in enumerate(cases)
    ]
    causes = {classify(f) for f in failed}
    assert causes == {
        Cause(FailureCause.NO_MATCH, label) for label in (REGEX_CASE, REGEX_WRAPPED, REGEX_EXTRA_TEXT, REGEX_NOTHING)
    }
    assert Cause(FailureCause.NO_MATCH, REGEX_CASE).words() == "no match: matches only when letter case is ignored"

"""The judge's pure parts: trace stripping, verdict parsing, rendering, prompts, the pair rule,
the win rate and its interval, model families and the rubric digest."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from compare_tui.judge import RubricError, load_rubric
from compare_tui.judge.pair.figures import combine, pair_figures, pair_results, preferred_side
from compare_tui.judge.prompt.answers import render_answer
from compare_tui.judge.prompt.parse import parse_grade_reply, parse_pair_reply
from compare_tui.judge.prompt.rubric import Rubric
from compare_tui.judge.prompt.templates import pair_messages
from compare_tui.judge.prompt.traces import strip_reasoning
from compare_tui.judge.run.family import family, same_family_caveat
from compare_tui.report.stats import wilson_interval, win_rate_interval
from compare_tui.scoring.result import Answer, ToolCall
from compare_tui.store.judgements import JudgementRecord


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        ("<think>it is billing? yes</think>billing", "billing"),
        ("<THINKING>long</THINKING>\nbug", "bug"),
        ("the template opened it</think>account", "account"),
        ("[THINK]x[/THINK]other", "other"),
        ("<reasoning>a</reasoning>A <think>b</think>B", "A B"),
        ("cut off <think>still thinking", "cut off"),
        (
            "<|channel|>analysis<|message|>hmm<|end|><|start|>assistant<|channel|>final<|message|>billing<|return|>",
            "billing",
        ),
        ("no trace at all", "no trace at all"),
    ],
)
def test_reasoning_traces_are_stripped(raw, clean):
    assert strip_reasoning(raw).replace("  ", " ") == clean


@pytest.mark.parametrize(
    ("reply", "verdict"),
    [
        ("Both name the label.\nVERDICT: TIE", "TIE"),
        ("**VERDICT:** A", "A"),
        ("Verdict - Answer B", "B"),
        ("verdict: b.", "B"),
        ("VERDICT: A\nVERDICT: B", "B"),  # the final verdict line counts
        ("<think>VERDICT: A</think>On reflection B.\nVERDICT: B", "B"),
        ("Verdict: a tie", None),  # "a" is an article here, not answer A
        ("I prefer answer A.", None),
        ("", None),
    ],
)
def test_pair_verdicts_are_read_only_from_a_verdict_line(reply, verdict):
    parsed = parse_pair_reply(reply)
    assert parsed.verdict == verdict
    if verdict is None:
        assert parsed.problem and "VERDICT: A|B|TIE" in parsed.problem
    assert parse_pair_reply("Both name the label.\nVERDICT: TIE").rationale == "Both name the label."
    assert parse_pair_reply("VERDICT: B\nREASON: it is right.").rationale == "it is right."


def test_grade_verdicts_and_rationale():
    parsed = parse_grade_reply("The label matches.\nVERDICT: PASS")
    assert (parsed.verdict, parsed.rationale) == ("pass", "The label matches.")
    assert parse_grade_reply("VERDICT: maybe").verdict is None


def test_answers_render_tool_calls_canonically_without_traces():
    answer = Answer(text="<think>lookup needed</think>", tool_calls=(ToolCall("lookup_order", '{"b": 2, "a": 1}'),))
    assert render_answer(answer) == '[tool call] lookup_order({"a":1,"b":2})'
    assert render_answer(Answer(text="<think>only thoughts</think>")) == "(empty answer)"


def test_the_pair_prompt_fences_both_answers_and_the_reference():
    rubric = Rubric("Closer to the reference wins.", "reference")
    messages = pair_messages(rubric, "[user] where is ORD-1?", "[tool call] lookup({})", "first", "second")
    user = messages[1]["content"]
    assert "<<<ANSWER A\nfirst\nANSWER A>>>" in user and "<<<ANSWER B\nsecond\nANSWER B>>>" in user
    assert "<<<REFERENCE ANSWER\n[tool call] lookup({})\nREFERENCE ANSWER>>>" in user
    assert user.endswith("Reply in exactly this form:\nVERDICT: A, B or TIE\nREASON: one sentence")
    assert "order" in messages[0]["content"]
    assert parse_pair_reply("VERDICT: A, B or TIE\nREASON: one sentence").verdict is None  # an echoed template
    direct = pair_messages(Rubric("Be brief.", "direct"), "q", "ref", "x", "y")[1]["content"]
    assert "REFERENCE" not in direct  # direct quality never leaks the expected outcome


def _j(task, ordering, verdict=None, preferred=None):
    return JudgementRecord(
        judging_id="j",
        task_id=task,
        ordering=ordering,
        verdict=verdict,
        preferred=preferred,
        error_class=None if verdict else "http_5xx",
        error=None if verdict else "HTTP 500",
    )


def test_a_model_wins_only_when_it_wins_both_orderings():
    assert preferred_side("ab", "A") == "baseline" and preferred_side("ba", "A") == "candidate"
    assert preferred_side("ab", "B") == "candidate" and preferred_side("ba", "TIE") == "tie"
    win = combine(_j("t", "ab", "B", "candidate"), _j("t", "ba", "A", "candidate"))
    first_always = combine(_j("t", "ab", "A", "baseline"), _j("t", "ba", "A", "candidate"))
    half = combine(_j("t", "ab", "B", "candidate"), _j("t", "ba", "TIE", "tie"))
    assert (win, first_always, half) == ("candidate", "inconsistent", "inconsistent")
    assert combine(_j("t", "ab", "TIE", "tie"), _j("t", "ba", "TIE", "tie")) == "tie"
    assert combine(_j("t", "ab"), _j("t", "ba", "A", "candidate")) == "failed"
    assert combine(None, None) == "not judged"


def test_win_rate_counts_ties_as_half_with_an_interval_that_accounts_for_ties():
    judgements = [
        _j("w1", "ab", "B", "candidate"),
        _j("w1", "ba", "A", "candidate"),
        _j("w2", "ab", "B", "candidate"),
        _j("w2", "ba", "A", "candidate"),
        _j("l1", "ab", "A", "baseline"),
        _j("l1", "ba", "B", "baseline"),
        _j("i1", "ab", "A", "baseline"),
        _j("i1", "ba", "A", "candidate"),
        _j("f1", "ab"),
        _j("f1", "ba", "A", "candidate"),
    ]
    results = pair_results(["w1", "w2", "l1", "i1", "f1", "n1"], judgements)
    figures = pair_figures(results, judgements)
    assert (figures.wins, figures.losses, figures.ties, figures.inconsistent, figures.failed, figures.not_judged) == (
        2,
        1,
        0,
        1,
        1,
        1,
    )
    assert figures.judged == 4 and figures.win_rate == pytest.approx(2.5 / 4)
    assert figures.interval == win_rate_interval(2, 1, 1)
    # The tie carries less uncertainty than a coin flip: narrower than Wilson on 2.5 of 4.
    wilson = wilson_interval(2.5, 4)
    assert wilson.low < figures.interval.low <= figures.interval.high < wilson.high
    assert figures.conclusion == "inconclusive"
    assert (figures.first_position_picks, figures.decided_calls) == (6, 9)


def test_a_clear_lead_is_not_inconclusive():
    judgements = [
        j for i in range(30) for j in (_j(f"t{i}", "ab", "B", "candidate"), _j(f"t{i}", "ba", "A", "candidate"))
    ]
    figures = pair_figures(pair_results([f"t{i}" for i in range(30)], judgements), judgements)
    assert figures.win_rate == 1.0 and figures.conclusion == "candidate better"


@given(st.lists(st.sampled_from(["candidate", "baseline", "tie", "inconsistent", "failed"]), max_size=60))
def test_win_rate_interval_always_holds_the_win_rate(results):
    figures = pair_figures(dict(enumerate(results)), [])
    if figures.usable:
        assert figures.interval.low <= figures.win_rate <= figures.interval.high
        assert 0 <= figures.interval.low and figures.interval.high <= 1
    elif figures.judged:
        assert figures.win_rate is None and figures.interval is None
        assert figures.conclusion == "the judge gave no usable verdict"
    else:
        assert figures.win_rate is None and figures.conclusion == "no pair judged"


def test_a_judge_that_always_picks_the_first_answer_gives_no_usable_verdict():
    # Issue 48, item 9: every pair an inconsistent tie headlined "win rate 50.0% (95% CI 37.1%–62.9%)".
    judgements = [
        j for i in range(11) for j in (_j(f"t{i}", "ab", "A", "baseline"), _j(f"t{i}", "ba", "A", "candidate"))
    ]
    figures = pair_figures(pair_results([f"t{i}" for i in range(11)], judgements), judgements)
    assert figures.inconsistent == figures.judged == 11
    assert figures.win_rate is None and figures.interval is None
    assert figures.conclusion == "the judge gave no usable verdict"
    # One consistent pair among eleven is still "nearly every pair inconsistent".
    mixed = pair_figures({**{f"t{i}": "inconsistent" for i in range(10)}, "w": "candidate"}, [])
    assert mixed.conclusion == "the judge gave no usable verdict"
    # A judge that decides some pairs keeps its win rate.
    usable = pair_figures({**{f"t{i}": "inconsistent" for i in range(5)}, "w": "candidate", "l": "baseline"}, [])
    assert usable.win_rate == 0.5 and usable.interval is not None


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        ("smollm2-135m", "smollm2-360m", True),
        ("smollm2-135m", "HuggingFaceTB/SmolLM2-1.7B-Instruct", True),
        ("gemma3-270m", "gemma-2-9b", True),
        ("gemma3-270m", "smollm2-135m", False),
        ("qwen2.5-7b", "llama-3.1-8b", False),
    ],
)
def test_model_families(a, b, same):
    assert (family(a) == family(b)) is same


def test_same_family_caveat_names_the_role_and_the_identical_model():
    assert "same model family as the baseline" in same_family_caveat(
        ["smollm2-360m"], "smollm2-135m", ["smollm2-135m"], "baseline"
    )
    assert "is the candidate model itself" in same_family_caveat(
        ["gemma3-270m"], "gemma3-270m", ["gemma3-270m"], "candidate"
    )
    assert same_family_caveat(["gemma3-270m"], "smollm2-135m", ["smollm2-135m"], "baseline") is None


def test_rubric_digest_covers_text_and_mode(tmp_path):
    path = tmp_path / "rubric.txt"
    path.write_text("Shorter correct answers win.\n")
    rubric = load_rubric(path, "direct")
    assert rubric.digest == load_rubric(path, "direct").digest
    assert rubric.digest != load_rubric(path, "reference").digest
    assert rubric.digest != Rubric("Longer answers win.", "direct").digest
    with pytest.raises(RubricError, match="direct mode needs a rubric"):
        load_rubric(None, "direct")
    assert load_rubric(None, "reference").source == "built-in"
    (tmp_path / "empty.txt").write_text("  \n")
    with pytest.raises(RubricError, match="empty"):
        load_rubric(tmp_path / "empty.txt", "direct")
    with pytest.raises(RubricError, match="does not exist"):
        load_rubric(tmp_path / "nope.txt", "direct")
    assert json.dumps(rubric.digest).startswith('"sha256:')


def test_structured_replies_are_read_as_json_verdicts():
    parsed = parse_pair_reply('{"verdict": "B", "reason": "names the label"}')
    assert (parsed.verdict, parsed.rationale) == ("B", "names the label")
    assert parse_pair_reply('```json\n{"verdict": "tie", "reason": ""}\n```').verdict == "TIE"
    wrong = parse_pair_reply('{"verdict": "C", "reason": "?"}')
    assert wrong.verdict is None and "not one of A, B, TIE" in wrong.problem
    assert parse_grade_reply('{"verdict": "FAIL", "reason": "wrong label"}').verdict == "fail"
    structured = Rubric("Be right.", "direct", structured=True)
    assert structured.digest != Rubric("Be right.", "direct").digest and structured.reply_form == "structured"
    user = pair_messages(structured, "q", None, "x", "y")[1]["content"]
    assert user.endswith('Reply as JSON: {"verdict": "A" or "B" or "TIE", "reason": "one sentence"}')

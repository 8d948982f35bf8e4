"""Whole-run replay with text steps decided by stored grades (`report --steps-by-grade`), end
to end on loopback: sample agent runs whole (final text scored `human`), run a scripted
candidate, grade its answers with a scripted judge (5 for the recorded final text, 2 for
anything else), and read the report with and without the flag."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from compare_tui.store import Store
from tests.core.judge.test_judge_support import fenced
from tests.core.sampling.test_sampling_builders import END, agent_run, write_jsonl
from tests.support.fake_openai import FakeServer, ToolCall, text, tool_calls

ROOT = Path(__file__).resolve().parents[3]
RUNS = {"alpha": 3, "bravo": 4, "charlie": 2}
_REFERENCE = re.compile(r"<<<REFERENCE ANSWER\n(.*?)\nREFERENCE ANSWER>>>", re.DOTALL)
WRONG_ENDING = "bravo"
"""The run whose final answer the candidate words differently (every tool call is right)."""


def _candidate(body: dict, _count: int):
    """Acts as the recorded agent did (see `agent_run`), but ends `WRONG_ENDING` in other words."""
    user = next(m["content"] for m in body["messages"] if m["role"] == "user")
    cid = next(name for name in RUNS if f"({name})" in user)
    step = sum(1 for m in body["messages"] if m["role"] == "assistant") + 1
    if step == RUNS[cid]:
        return text("I could not finish this." if cid == WRONG_ENDING else f"Done: {cid} refunded.")
    if step == 1:
        return tool_calls(ToolCall("find_order", {"email": "[REDACTED:email]"}))
    return tool_calls(ToolCall("refund", {"order": f"{cid}-o{step - 1}", "amount": 10 * (step - 1)}))


def _judge(body: dict, _count: int):
    """5 when the answer is the recorded one (the expected outcome), 2 otherwise."""
    user = next(m["content"] for m in body["messages"] if m["role"] == "user")
    reference = _REFERENCE.search(user)
    same = reference is not None and fenced(body)["ANSWER"].strip() == reference.group(1).strip()
    return text("GRADE: 5\nREASON: the same result." if same else "GRADE: 2\nREASON: a different result.")


def _entry(name: str, url: str) -> str:
    return (
        f'[[model]]\nname = "{name}"\nkind = "hosted"\nendpoint = "{url}"\nmodel = "{name}-id"\nrevision = "r1"\n'
        f'weights_digest = "sha256:{"0" * 64}"\n[model.cost]\nbasis = "token_price"\nusd_per_mtok_input = 1.0\n'
        'usd_per_mtok_output = 2.0\ncaptured = "2026-12-01"\nsource = "test"\n'
    )


def _cli(env: dict, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "compare_tui", *args], env=env, capture_output=True, text=True, timeout=180
    )


def test_text_steps_decided_by_a_judges_grades_drive_or_lose_their_runs(tmp_path):
    records = [r for i, (cid, steps) in enumerate(RUNS.items()) for r in agent_run(cid, steps, END - i * 600)]
    log = write_jsonl(tmp_path / "agent.jsonl", records)
    env = {k: v for k, v in os.environ.items() if not k.startswith("COMPARE_TUI_")} | {
        "PYTHONPATH": str(ROOT),
        "COMPARE_TUI_STATE_DIR": str(tmp_path / "state"),
        "COLUMNS": "80",
    }
    store, catalogue = str(tmp_path / "runs.sqlite"), tmp_path / "models.toml"
    sampled = _cli(env, "sample", str(log), "--whole-runs", "--out", str(tmp_path / "set"))
    assert sampled.returncode == 0, sampled.stderr
    with FakeServer(_candidate) as candidate, FakeServer(_judge) as judge:
        catalogue.write_text(_entry("fake", candidate.url) + _entry("grader", judge.url))
        done = _cli(
            env, "run", str(tmp_path / "set"), "--model", "fake", "--models", str(catalogue), "--store", store, "--json"
        )
        assert done.returncode in (0, 1), done.stderr
        with Store.open(store) as opened:
            run_id = opened.list_runs(limit=1)[0].id
        before = json.loads(_cli(env, "report", "latest", "--store", store, "--format", "json").stdout)
        (fig,) = before["trajectories"]
        # Without grades every run ends in a step waiting for a person: none is decided.
        assert (fig["runs_driven"]["decided"], fig["runs_undecided"]) == (0, 3)
        missing = _cli(env, "report", "latest", "--store", store, "--steps-by-grade", "grader")
        assert missing.returncode == 2 and "compare-tui grade" in missing.stderr and "grader" in missing.stderr
        unknown = _cli(env, "report", "latest", "--store", store, "--steps-by-grade", "grader:no-such-rubric.txt")
        assert unknown.returncode == 2 and "--steps-by-grade grader:no-such-rubric.txt" in unknown.stderr
        alone = _cli(env, "report", "latest", "--store", store, "--pass-at", "3")
        assert alone.returncode == 2 and "--steps-by-grade" in alone.stderr
        graded = _cli(
            env,
            "grade",
            run_id,
            "--judge",
            "grader",
            "--rubric",
            "similarity",
            "--models",
            str(catalogue),
            "--store",
            store,
        )
        assert graded.returncode == 0, graded.stderr + graded.stdout
    report = _cli(
        env, "report", "latest", "--store", store, "--steps-by-grade", "grader:similarity", "--format", "json"
    )
    assert report.returncode == 0, report.stderr
    doc = json.loads(report.stdout)
    (fig,) = doc["trajectories"]
    grading = doc["step_grading"]
    assert {k: grading[k] for k in ("judge", "rubric", "pass_at", "labels", "verified")} == {
        "judge": "grader",
        "rubric": "similarity",
        "pass_at": 4,
        "labels": 0,
        "verified": False,
    }
    # No person labelled any answer: the judge's steps are said to be not verified.
    assert grading["calibration"].startswith("no answer judged here is labelled by a person yet; not enough labels")
    assert "the steps it decided are not verified (0 right and 0 wrong answers labelled" in grading["calibration"]
    assert (fig["runs_driven"]["driven"], fig["runs_lost"], fig["runs_undecided"]) == (2, 1, 0)
    lost = next(r for r in fig["runs"] if r["verdict"] == "lost")
    assert lost["first_lost_step"] == RUNS[WRONG_ENDING] and lost["by_grade_steps"] == [RUNS[WRONG_ENDING]]
    assert fig["steps"]["by_grade"] == 3
    assert any(c["code"] == "steps_by_grade" and "grader" in c["text"] for c in doc["caveats"])
    # The pass rate is the scorers' and people's: the text steps still wait for a person there.
    assert doc["models"][0]["counts"]["human_decided"] == 0
    # A bar at 1 keeps every graded step: every run is driven.
    every = json.loads(
        _cli(
            env,
            "report",
            "latest",
            "--store",
            store,
            "--steps-by-grade",
            "grader",
            "--pass-at",
            "1",
            "--format",
            "json",
        ).stdout
    )
    assert every["trajectories"][0]["runs_driven"]["driven"] == 3
    text_report = _cli(env, "report", "latest", "--store", store, "--steps-by-grade", "grader")
    assert "runs driven without losing a step: 2 of 3 runs" in text_report.stdout
    assert "grader's grades: no answer judged here is labelled by a person yet; not enough labels" in " ".join(
        text_report.stdout.split()
    )
    assert f"lost at step {RUNS[WRONG_ENDING]}, step {RUNS[WRONG_ENDING]} by a judge's grade" in text_report.stdout
    # The published page shows the strips and the stored grades, and its report.json is what
    # `report --format json` writes (grades included), read from the store: no judge is asked.
    bundle = tmp_path / "bundle"
    published = _cli(env, "publish", "latest", "--store", store, "--out", str(bundle))
    assert published.returncode == 0, published.stderr
    plain = _cli(env, "report", "latest", "--store", store, "--format", "json").stdout
    assert (bundle / "report.json").read_text(encoding="utf-8") == plain
    page = (bundle / "index.html").read_text(encoding="utf-8")
    replay = page[page.index('<section id="replay">') : page.index("</section>", page.index('<section id="replay">'))]
    assert replay.count('<td class="strip"') == 3 and replay.count("not decided (step") == 3
    assert "Runs driven without losing a step 0 of 0 runs" in replay
    assert '<span class="r" title="step 3 (' in replay and "step 3 needs a person" in replay
    (grades,) = json.loads(plain)["grades"]
    shown = page[page.index('<section id="grades">') :]
    assert "Rubric grades by grader" in shown and 'id="grades-1"' in shown
    figures = grades["runs"][0]["figures"]
    assert f'<td class="n">{figures["mean"]:.2f}</td>' in shown and f'<td class="n">{figures["graded"]}</td>' in shown
    assert '<a href="#replay">Agent runs</a>' in page and '<a href="#grades">Grades</a>' in page

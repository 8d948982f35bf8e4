"""Whole-run replay figures: runs driven without losing a step, computed once, rendered everywhere."""

from __future__ import annotations

import json

from rich.console import Console

from compare_tui.report import StepGrading, build_report
from compare_tui.report.render_json import render_json
from compare_tui.report.render_md import render_md
from compare_tui.report.render_text import render_text
from compare_tui.report.stats import proportion_interval
from tests.core.report.test_report import inputs, one

# Tasks t00..t08: run A is t00-t02, run B t03-t05, run C t06-t08 (three steps each).
TRACES = {f"t{i:02d}": ("ABC"[i // 3], i % 3 + 1, 3) for i in range(9)}


def _report(*outcome_strings: str, traces=TRACES):
    runs = [one(o, run_id=f"run-{i}", model=f"model-{i}") for i, o in enumerate(outcome_strings)]
    return build_report(inputs(*runs, task_traces=traces, task_ids=tuple(sorted(traces))))


def test_a_run_with_one_lost_step_is_lost_and_the_others_driven():
    report = _report("ppppfpppp")
    (fig,) = report.trajectories
    assert [(s.run, s.verdict, s.first_lost) for s in fig.runs] == [
        ("A", "driven", None),
        ("B", "lost", 2),
        ("C", "driven", None),
    ]
    assert (fig.driven, fig.lost, fig.undecided, fig.decided) == (2, 1, 0, 3)
    assert fig.interval == proportion_interval(2, 3)
    assert (fig.steps_kept, fig.steps_lost, fig.steps_not_measured) == (8, 1, 0)
    assert fig.step_interval == proportion_interval(8, 9)
    assert fig.runs[1].statuses == ("pass", "fail", "pass")


def test_a_step_not_measured_counts_neither_as_lost_nor_as_driven():
    report = _report("peppfpppp")
    (fig,) = report.trajectories
    verdicts = [(s.verdict, s.first_lost, s.not_measured) for s in fig.runs]
    assert verdicts == [("undecided", None, (2,)), ("lost", 2, ()), ("driven", None, ())]
    assert (fig.driven, fig.lost, fig.undecided) == (1, 1, 1)
    assert fig.interval == proportion_interval(1, 2)
    assert (fig.steps_kept, fig.steps_lost, fig.steps_not_measured) == (7, 1, 1)
    assert any(c.code == "replay_undecided" and "1 run was not decided" in c.text for c in report.caveats)


def test_the_first_lost_step_is_the_earliest_failed_one():
    (fig,) = _report("pffpppfpp").trajectories
    assert [s.first_lost for s in fig.runs] == [2, None, 1]


def test_a_set_without_traces_has_no_replay_figures_and_no_replay_caveat():
    report = _report("ppppfpppp", traces={})
    assert report.trajectories == ()
    assert not any(c.code.startswith("replay") for c in report.caveats)
    assert json.loads(render_json(report))["trajectories"] == []


def test_untraced_tasks_stay_out_of_the_runs():
    traces = {k: v for k, v in TRACES.items() if v[0] != "C"}
    (fig,) = _report("ppppfpfff", traces=traces).trajectories
    assert [s.run for s in fig.runs] == ["A", "B"] and (fig.driven, fig.lost) == (1, 1)


def test_every_surface_shows_the_same_figures_and_the_caveat():
    report = _report("ppppfpppp", "pppppppfp")
    doc = json.loads(render_json(report))
    first = doc["trajectories"][0]
    assert first["model"] == "model-0"
    assert first["runs_driven"] == {"driven": 2, "decided": 3, "rate": 2 / 3, "ci95": first["runs_driven"]["ci95"]}
    assert first["runs"][1] == {
        "run": "B",
        "task_ids": ["t03", "t04", "t05"],
        "statuses": ["pass", "fail", "pass"],
        "verdict": "lost",
        "first_lost_step": 2,
        "not_measured_steps": [],
        "by_grade_steps": [],
    }
    assert first["steps"]["kept"] == 8 and first["steps"]["lost"] == 1
    caveat = "a candidate's divergent actions are judged, never followed; this measures action fidelity"
    assert any(caveat in c["text"].lower() for c in doc["caveats"])
    md = render_md(report)
    assert "runs driven without losing a step 2 of 3 runs (66.7%, 95% CI 9.4–99.2%)" in md
    assert "| `B` | `✓✗✓` | lost at step 2 |" in md and "| `C` | `✓✗✓` | lost at step 2 |" in md
    console = Console(width=80, record=True, color_system=None)
    console.print(render_text(report))
    text = console.export_text()
    assert "runs driven without losing a step: 2 of 3 runs (66.7%, 95% CI 9.4–99.2%)" in text
    assert "B  ✓✗✓  lost at step 2" in text
    assert "judged, never followed" in text


def test_schema_doc_names_every_replay_field():
    from pathlib import Path

    documented = (Path(__file__).resolve().parents[3] / "compare_tui" / "report" / "SCHEMA.md").read_text(
        encoding="utf-8"
    )
    first = json.loads(render_json(_report("ppppfpppp")))["trajectories"][0]
    names = set(first) | set(first["runs_driven"]) | set(first["steps"]) | set(first["runs"][0]) | {"step_grading"}
    missing = sorted(name for name in names if f"`{name}`" not in documented)
    assert not missing, f"SCHEMA.md does not document: {missing}"


# ------------------------------------------------------------ steps decided by stored grades


def _graded(outcomes: str, grades: dict[str, int], verdicts=None, pass_at: int = 4):
    run = one(outcomes, run_id="run-0", model="model-0", verdicts=verdicts)
    grading = StepGrading("judge-model", "similarity", pass_at, {"run-0": grades})
    return build_report(inputs(run, task_traces=TRACES, task_ids=tuple(sorted(TRACES)), step_grading=grading))


def test_a_final_text_step_waiting_for_a_person_is_decided_by_its_grade():
    # Each run's last step (t02, t05, t08) waits for a person; the judge graded them 5, 2, 4.
    report = _graded("pprpprppr", {"t02": 5, "t05": 2, "t08": 4})
    (fig,) = report.trajectories
    assert [(s.verdict, s.first_lost, s.by_grade) for s in fig.runs] == [
        ("driven", None, (3,)),
        ("lost", 3, (3,)),
        ("driven", None, (3,)),
    ]
    assert (fig.driven, fig.lost, fig.undecided, fig.steps_by_grade) == (2, 1, 0, 3)
    caveat = next(c for c in report.caveats if c.code == "steps_by_grade")
    assert "model-0: 3 steps" in caveat.text and "judge-model" in caveat.text and "not a person's review" in caveat.text
    # The pass rate and the blocks are the scorer's and people's: a grade decides only the replay.
    assert report.models[0].blocks[2].status == "review"


def test_without_grading_nothing_changes():
    (fig,) = _report("pprpprppr").trajectories
    assert (fig.driven, fig.lost, fig.undecided, fig.steps_by_grade) == (0, 0, 3, 0)
    assert not any(c.code == "steps_by_grade" for c in _report("pprpprppr").caveats)


def test_a_persons_review_wins_over_a_grade_and_pass_at_moves_the_line():
    report = _graded("pprpprppr", {"t02": 5, "t05": 2, "t08": 2}, verdicts={"t02": "fail", "t05": "pass"})
    (fig,) = report.trajectories
    assert [(s.verdict, s.by_grade) for s in fig.runs] == [("lost", ()), ("driven", ()), ("lost", (3,))]
    assert fig.steps_by_grade == 1
    (fig,) = _graded("pprpprppr", {"t02": 3, "t05": 2, "t08": 4}, pass_at=3).trajectories
    assert [s.verdict for s in fig.runs] == ["driven", "lost", "driven"]


def test_an_ungraded_step_stays_waiting_and_a_grade_never_touches_a_scored_step():
    (fig,) = _graded("pfrpprppr", {"t01": 5, "t02": 5, "t08": 1}).trajectories
    assert [(s.verdict, s.by_grade) for s in fig.runs] == [("lost", (3,)), ("undecided", ()), ("lost", (3,))]


def test_every_surface_names_the_judge_and_the_steps_it_decided():
    report = _graded("pprpprppr", {"t02": 5, "t05": 2, "t08": 4})
    doc = json.loads(render_json(report))
    assert doc["step_grading"] == {
        "judge": "judge-model",
        "rubric": "similarity",
        "pass_at": 4,
        "calibration": None,
        "labels": 0,
        "verified": False,
    }
    first = doc["trajectories"][0]
    assert first["steps"]["by_grade"] == 3 and first["runs"][1]["by_grade_steps"] == [3]
    assert json.loads(render_json(_report("pprpprppr")))["step_grading"] is None
    md = render_md(report)
    assert "3 steps decided by judge-model's grades (similarity, kept from 4)" in md
    assert "| `B` | `✓✓✗` | lost at step 3, step 3 by a judge's grade |" in md
    console = Console(width=80, record=True, color_system=None)
    console.print(render_text(report))
    text = console.export_text()
    assert "  3 steps decided by judge-model's grades (similarity, kept from 4)\n" in text
    assert "B  ✓✓✗  lost at step 3, step 3 by a judge's grade" in text

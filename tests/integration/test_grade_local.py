"""`compare-tui grade` with a bundled judge through real llama.cpp (integration tier): Qwen2.5-Coder
0.5B grades the order-extraction runs of the two session models on the 1–5 quality rubric.

A 0.5B judge is no oracle: this checks the pipeline end to end (every answer graded or counted
as a failed call, the figures and Δ computed, the judge's calls in the audit ledger apart from
the runs, and a second `grade` asking nothing), not the grades' quality.
"""

from __future__ import annotations

import contextlib
import io
import json
import shutil
import sqlite3
import sys
from pathlib import Path

import pytest

from compare_tui.cli import main

pytestmark = pytest.mark.integration

QWEN = "qwen2.5-coder-0.5b"
SAMPLE = Path(__file__).resolve().parents[2] / "sample_sets" / "order-extraction"
KEEP = 6
"""Tasks of the sample set the module runs and grades (its first six by name: JSON extraction and
unit conversion alike): the pipeline is the same as for twelve, and a 0.5B judge on 2 cores
spends seconds a grade."""


@pytest.fixture(scope="module")
def qwen(qwen_cluster):
    return qwen_cluster


def _main(args: list[str]) -> tuple[int, str]:
    """`main(args)` with its standard output captured (a module fixture has no capsys)."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(args)
    return code, out.getvalue()


@pytest.fixture(scope="module")
def graded(qwen, tmp_path_factory):
    """The two session models' runs of the set, graded by Qwen once for the module: (store,
    catalogue, the `grade` arguments, its exit code and JSON, the comparison id)."""
    root = tmp_path_factory.mktemp("graded")
    store, models = root / "runs.sqlite", str(qwen.catalogue_path)
    goldset = shutil.copytree(SAMPLE, root / "set")
    for extra in sorted((goldset / "tasks").iterdir())[KEEP:]:
        extra.unlink()
    code, text = _main(
        ["run", str(goldset), "--baseline", "smollm2-135m", "--model", "gemma3-270m", "--json"]
        + ["--models", models, "--store", str(store)]
    )
    assert text, "the run was refused"  # a refusal prints its reason on stderr, not JSON
    summary = json.loads(text)
    assert code in (0, 1), summary
    runs = [r["id"] for r in summary["runs"]]
    args = ["grade", *runs, "--judge", QWEN, "--max-tokens", "64", "--models", models]
    args += ["--store", str(store), "--format", "json"]
    code, text = _main(args)
    assert text, "grade was refused"
    return store, models, args, code, json.loads(text), summary["comparison"], goldset


def test_a_bundled_judge_grades_two_runs_and_a_second_grade_asks_nothing(graded, capsys):
    store, _, args, code, out, _, goldset = graded
    assert code in (0, 1), out
    assert out["judge"]["model"] == QWEN and out["judge"]["provenance"] == "verified"
    assert out["baseline"]["model"] == "smollm2-135m"  # the comparison's baseline, without --reference
    tasks = len(list((goldset / "tasks").iterdir()))
    for graded_run in out["runs"]:
        f = graded_run["figures"]
        assert f["graded"] + f["failed"] + f["not_graded"] == tasks
        assert f["graded"] >= tasks // 2, graded_run  # the judge gives a readable grade to most answers
        assert sum(f["distribution"].values()) == f["graded"] and 1 <= f["mean"] <= 5
    gemma = next(g for g in out["runs"] if g["model"] == "gemma3-270m")
    assert gemma["delta_vs_baseline"]["tasks"] > 0
    calls = out["judge_usage"]["calls"]
    assert calls == 2 * tasks and out["judge_usage"]["prompt_tokens"] > 0
    conn = sqlite3.connect(store)
    judge_rows = conn.execute("SELECT COUNT(*) FROM audit WHERE run_id IS NULL").fetchone()[0]
    assert judge_rows >= calls  # every judge request (retries too) is a row of no run
    print(
        json.dumps({r["model"]: r["figures"] | {"delta": r["delta_vs_baseline"]} for r in out["runs"]}), file=sys.stderr
    )  # the figures, for the record (pytest -s)
    failed = sum(g["figures"]["failed"] for g in out["runs"])
    main(args)
    capsys.readouterr()
    asked = conn.execute("SELECT COUNT(*) FROM audit WHERE run_id IS NULL").fetchone()[0] - judge_rows
    assert asked == 0 if failed == 0 else asked >= failed  # only failed calls are asked again


def test_the_bundled_judge_calibrated_on_peoples_labels(graded, tmp_path, capsys):
    """People's labels (here: a person who agrees with the exact scorer on order extraction)
    calibrate Qwen as a judge. With five labels no rate is corrected ("not enough labels"). Two
    runs answering every task with its expected outcome are then graded with Qwen on the similarity
    rubric beside the two models' runs: with their twelve right answers labelled beside the
    models' (mostly wrong) ones, the judge's sensitivity and specificity are counted from its
    stored grades, and each run's rate is shown raw beside the corrected one (or the reason there
    is none: a judge that passes every answer tells nothing apart)."""
    store_path, models, _, _, out, comparison, set_path = graded
    from compare_tui.goldset import load_golden_set
    from compare_tui.judge.calibration.figures import NOT_ENOUGH
    from compare_tui.judge.prompt.answers import expected_text
    from compare_tui.store import Store
    from tests.core.judge.test_judge_support import add_run

    goldset = load_golden_set(set_path)
    with Store.open(store_path) as store:
        # Two runs answering every task with its expected outcome: twelve right answers.
        right = {t.id: ("pass", expected_text(t)) for t in goldset.tasks}
        perfect, perfect_2 = (add_run(store, goldset, name, right) for name in ("expected-outcomes", "expected-too"))
        answers = {
            run: {a.task_id: a.outcome for a in store.attempts_for_run(run)}
            for run in [g["run"] for g in out["runs"]] + [perfect, perfect_2]
        }
    labelled = [(r, t, o) for r, tasks in answers.items() for t, o in sorted(tasks.items()) if o in ("pass", "fail")]
    few = tmp_path / "few.csv"
    few.write_text("run,task,verdict\n" + "".join(f"{r},{t},{o}\n" for r, t, o in labelled[:5]), encoding="utf-8")
    assert main(["label", "import", str(few), "--store", str(store_path), "--reviewer", "ann"]) == 0
    assert "imported 5 label(s)" in capsys.readouterr().out
    assert main(["report", comparison, "--store", str(store_path), "--format", "json"]) in (0, 1)
    (quality,) = json.loads(capsys.readouterr().out)["grades"]
    for run in quality["runs"]:
        rate = run["judge_pass_rate"]
        assert rate["status"] == "not enough labels" and rate["corrected"] is None
        assert rate["reason"].startswith(NOT_ENOUGH) and rate["raw"] is not None

    # The two models' runs (mostly wrong answers) and the expected outcomes twice (all right):
    # enough of each for a calibration, in 24 judge calls.
    runs = [g["run"] for g in out["runs"]] + [perfect, perfect_2]
    code = main(
        ["grade", *runs, "--judge", QWEN, "--rubric", "similarity", "--max-tokens", "64", "--models", models]
        + ["--store", str(store_path), "--format", "json"]
    )
    similarity = json.loads(capsys.readouterr().out)
    assert code in (0, 1) and similarity["reference"] is None  # against each task's expected outcome
    assert main(["label", "next", perfect, "--store", str(store_path), "--count", "4"]) == 0
    assert "Label next (a fair sample" in capsys.readouterr().out
    every = tmp_path / "every.csv"
    every.write_text("run,task,verdict\n" + "".join(f"{r},{t},{o}\n" for r, t, o in labelled), encoding="utf-8")
    assert main(["label", "import", str(every), "--store", str(store_path), "--reviewer", "ann"]) == 0
    capsys.readouterr()
    code = main(
        ["grade", *runs, "--judge", QWEN, "--rubric", "similarity", "--max-tokens", "64", "--models", models]
        + ["--store", str(store_path), "--format", "json"]
    )  # asks nothing: every grade is stored
    doc = json.loads(capsys.readouterr().out)
    with Store.open(store_path) as store:
        grades = {
            g["run"]: {j.task_id: j.grade for j in store.judgements_for(g["grading"]) if j.grade is not None}
            for g in doc["runs"]
        }
    pairs = [(o == "pass", grades[r][t] >= 4) for r, t, o in labelled if t in grades.get(r, {})]
    right = [passed for is_right, passed in pairs if is_right]
    wrong = [passed for is_right, passed in pairs if not is_right]
    c = doc["calibration"]
    assert (c["right"], c["right_passed"]) == (len(right), sum(right)) and len(right) >= 10
    assert (c["wrong"], c["wrong_failed"]) == (len(wrong), len(wrong) - sum(wrong))
    assert (
        c["sentence"]
        == f"judge agrees with your labels: passes {sum(right)}/{len(right)} right answers, fails {len(wrong) - sum(wrong)}/{len(wrong)} wrong ones"
    )
    for run in doc["runs"]:
        rate = run["judge_pass_rate"]
        judged = grades[run["run"]]
        assert rate["judged"] == len(judged) and rate["passed"] == sum(1 for g in judged.values() if g >= 4)
        if rate["status"] == "human-calibrated":
            assert 0 <= rate["corrected_ci95"][0] <= rate["corrected"] <= rate["corrected_ci95"][1] <= 1
        else:  # fewer than 10 wrong answers graded, or a judge no better than a coin on these labels
            assert rate["corrected"] is None and "not verified" in rate["reason"]
    print(json.dumps({"calibration": c, "rates": [r["judge_pass_rate"] for r in doc["runs"]]}), file=sys.stderr)
    assert main(
        ["grade", *runs, "--judge", QWEN, "--rubric", "similarity", "--models", models, "--store", str(store_path)]
    ) in (0, 1)
    print(capsys.readouterr().out, file=sys.stderr)  # the text, for the record (pytest -s)

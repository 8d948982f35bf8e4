"""`compare-tui judge` from the command line: output, exit codes, resume and listing."""

from __future__ import annotations

import json

import pytest

from compare_tui.cli import main
from compare_tui.store import Store
from tests.core.judge.test_judge_support import (
    TASKS,
    add_run,
    consistent_judge,
    entry,
    fenced,
    golden,
    scored,
    write_models,
)
from tests.support.fake_openai import FakeServer, http_error


@pytest.fixture
def runs(tmp_path):
    goldset = golden(tmp_path)
    with Store.open(tmp_path / "runs.sqlite") as store:
        base = add_run(
            store, goldset, "base-model", {t: scored("bug" if t in ("t1", "t2") else "billing") for t in TASKS}
        )
        cand = add_run(store, goldset, "cand-model", {t: scored("billing") for t in TASKS})
    return tmp_path / "runs.sqlite", base, cand


def _cli(tmp_path, url, *args):
    models = write_models(tmp_path / "models.toml", entry("judge-model", url))
    return main(["judge", *args, "--judge", "judge-model", "--models", str(models)])


def test_judge_prints_the_figures_as_json_and_exits_0(tmp_path, runs, capsys):
    store, base, cand = runs
    with FakeServer(consistent_judge) as judge:
        code = _cli(tmp_path, judge.url, base[:6], cand[:6], "--store", str(store), "--json")
    out = json.loads(capsys.readouterr().out)
    assert code == 0
    assert out["figures"]["candidate_wins"] == 2 and out["figures"]["ties"] == 4 and out["figures"]["judged"] == 6
    assert out["figures"]["conclusion"] == "inconclusive" and len(out["figures"]["win_rate_ci95"]) == 2
    assert out["judge_usage"]["calls"] == 12 and out["rows"][0]["orderings"]["ab"]["preferred"] == "candidate"
    assert out["judging"]["mode"] == "reference"  # no rubric file: the built-in reference rubric


def test_failed_calls_exit_1_stay_in_the_table_and_a_rerun_retries_only_them(tmp_path, runs, capsys):
    store, base, cand = runs

    def failing(body, count):
        return http_error(400, "prompt too long") if "t3" in fenced(body)["REQUEST"] else consistent_judge(body, count)

    rubric = tmp_path / "rubric.txt"
    rubric.write_text("The answer that names the right ticket label is better.")
    with FakeServer(failing) as judge:
        code = _cli(tmp_path, judge.url, base, cand, "--store", str(store), "--rubric", str(rubric))
    captured = capsys.readouterr()
    assert code == 1
    assert "t3" in captured.out and "judge call failed" in captured.out and "HTTP 400" in captured.out
    assert "[12/12]" in captured.err and "mode direct" in captured.out
    with FakeServer(consistent_judge) as judge:
        code = _cli(tmp_path, judge.url, base, cand, "--store", str(store), "--rubric", str(rubric))
        assert code == 0 and len(judge.requests) == 2  # only t3's two orderings
    assert "10 already stored" in capsys.readouterr().err


def test_bad_input_exits_2_and_sends_nothing(tmp_path, runs, capsys):
    store, base, cand = runs
    with FakeServer(consistent_judge) as judge:
        assert _cli(tmp_path, judge.url, "nope", cand, "--store", str(store)) == 2
        assert "no run with id 'nope'" in capsys.readouterr().err
        assert _cli(tmp_path, judge.url, base, cand, "--store", str(store), "--mode", "direct") == 2
        assert "direct mode needs a rubric" in capsys.readouterr().err
        assert (
            main(
                [
                    "judge",
                    base,
                    cand,
                    "--judge",
                    "missing",
                    "--models",
                    str(tmp_path / "models.toml"),
                    "--store",
                    str(store),
                ]
            )
            == 2
        )
        assert "unknown model 'missing'" in capsys.readouterr().err
        assert _cli(tmp_path, judge.url, base, base, "--store", str(store)) == 2
        assert "same run" in capsys.readouterr().err
        assert judge.requests == []


def test_list_shows_stored_judgings(tmp_path, runs, capsys):
    store, base, cand = runs
    assert main(["judge", "--list", "--store", str(store)]) == 0
    assert "no judgings stored yet" in capsys.readouterr().out
    with FakeServer(consistent_judge) as judge:
        _cli(tmp_path, judge.url, base, cand, "--store", str(store), "--json")
    capsys.readouterr()
    assert main(["judge", "--list", "--store", str(store), "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [(j["kind"], j["judge"], j["run"], j["other_run"], j["calls"]) for j in listed] == [
        ("pair", "judge-model", base, cand, 12)
    ]

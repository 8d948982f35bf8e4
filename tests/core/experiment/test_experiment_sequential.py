"""`experiment run --stop-when-settled` against the fake server (issue 50): where the question is
arm-vs-arm, the arms run as one sequential comparison against the reference arm (the first), an
arm that settles is sent nothing more, the requests not sent are the requests the server never
saw, a kill resumes the same sequence, and where the question is not arm-vs-arm every run covers
the full set and the command says why."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from collections import Counter

from compare_tui.experiment import (
    ExperimentConfig,
    experiment_document,
    experiment_figures,
    full_set_reason,
    load_experiment,
)
from compare_tui.publish.experiment_page import experiment_page
from compare_tui.report.sequential import first_settled
from compare_tui.store import Store
from compare_tui.vocabulary import RunStatus
from tests.core.engine.test_chaos_helpers import cli as cli_argv
from tests.core.engine.test_chaos_helpers import cli_env
from tests.core.engine.test_sequential_run import TASKS, _expected_outcomes, _script, _sent, _setup
from tests.core.experiment.test_experiment_helpers import cli
from tests.support.fake_openai import FakeServer


def _new(set_path, common, *extra):
    result = cli("experiment", "new", "ab", str(set_path), "--arm", "base", "--arm", "cand", *extra, *common)
    assert result.code == 0, result.err
    return result


def test_an_arm_stops_once_settled_and_its_requests_not_sent_never_reach_the_server(tmp_path):
    with FakeServer(_script(), models=("base-model", "cand-model")) as server:
        set_path, catalogue = _setup(tmp_path, server.url)
        common = ["--models", str(catalogue), "--store", str(tmp_path / "runs.sqlite")]
        _new(set_path, common, "--repeats", "1", "--stop-when-settled")
        result = cli("experiment", "run", "ab", "--json", *common)
        assert result.code == 0, result.err
        doc = json.loads(result.out)
        seq = doc["sequential"]
        with Store.open(tmp_path / "runs.sqlite") as store:
            comparison = store.get_comparison(seq["comparison_id"])
            audit = sum(len(store.audit_for_run(run_id)) for run_id in comparison.run_ids)
            statuses = [store.get_run_exact(run_id).status for run_id in comparison.run_ids]
        order = comparison.sequential.order
        settled = first_settled(_expected_outcomes(order), TASKS, margin_pp=5)
        assert settled.settled and settled.tasks < TASKS
        assert comparison.baseline == "base" and statuses == [RunStatus.SETTLED, RunStatus.SETTLED]
        sent = _sent(server)
        assert max(sent.values()) == 1
        # Every request not sent is one the server never saw, and the ledger holds exactly the rest.
        assert seq["requests_not_sent"] == 2 * TASKS - sum(sent.values()) > 0
        assert audit == sum(sent.values())
        assert seq["mode"] == "stopped_when_settled" and seq["reference"] == "base"
        assert seq["settled_after"] == settled.tasks
        [cand] = seq["arms"]
        assert (cand["label"], cand["verdict"], cand["settled_at"]) == ("cand", "better", settled.tasks)
        runs = {a["label"]: a["runs"] for a in doc["arms"]}
        assert all(a["observed"] == 1 and a["to_launch"] == 0 for a in doc["arms"])  # a settled run holds its place
        assert sum(r["not_sent"] for rs in runs.values() for r in rs) == seq["requests_not_sent"]

        shown = cli("experiment", "show", "ab", "--store", common[-1]).out
        assert (
            f"sequential verdicts against the reference arm base: settled after {settled.tasks} of {TASKS} tasks; "
            f"{seq['requests_not_sent']} requests not sent" in shown
        )
        assert f"cand: better, settled at task {settled.tasks} of {TASKS} (confidence sequence at 95%" in shown
        assert "inconclusive" not in shown.split("tasks:")[1].splitlines()[0]  # not sent is not inconclusive
        with Store.open(tmp_path / "runs.sqlite") as store:
            figures = experiment_figures(load_experiment(store, "ab"))
        page = experiment_page(figures, experiment_document(figures))  # the published page says it too
        assert f"settled after {settled.tasks} of {TASKS} tasks" in page and 'id="arms-sequential"' in page
        again = cli("experiment", "run", "ab", *common)  # complete: nothing more is sent
        assert again.code == 0 and sum(_sent(server).values()) == sum(sent.values())


def test_killed_mid_sequence_the_next_experiment_run_resumes_it_and_sends_no_task_twice(tmp_path):
    with FakeServer(_script(delay_s=0.03), models=("base-model", "cand-model")) as server:
        set_path, catalogue = _setup(tmp_path, server.url)
        store_path = tmp_path / "runs.sqlite"
        common = ["--models", str(catalogue), "--store", str(store_path)]
        _new(set_path, common, "--repeats", "1")
        env = cli_env(tmp_path / "state")
        argv = cli_argv("experiment", "run", "ab", "--stop-when-settled", "--json", *common)
        proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 60
        while sum(_sent(server).values()) < 5 and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=30)
        with Store.open(store_path) as store:
            [comparison] = store.list_comparisons()
        result = cli("experiment", "run", "ab", "--json", *common)
        assert result.code == 0, result.err
        assert "resuming the arms' sequence" in result.err
        with Store.open(store_path) as store:
            assert [c.id for c in store.list_comparisons()] == [comparison.id]  # the same sequence, not a new one
            stored = Counter(
                (store.get_run_exact(a.run_id).model_name, a.task_id)
                for run_id in comparison.run_ids
                for a in store.attempts_for_run(run_id)
            )
        assert max(stored.values()) == 1
        settled = first_settled(_expected_outcomes(comparison.sequential.order), TASKS, margin_pp=5)
        seq = json.loads(result.out)["sequential"]
        assert seq["comparison_id"] == comparison.id and seq["settled_after"] == settled.tasks


def test_where_the_question_is_not_arm_vs_arm_every_run_covers_the_full_set_and_it_says_why(tmp_path):
    with FakeServer(_script(), models=("base-model", "cand-model")) as server:
        set_path, catalogue = _setup(tmp_path, server.url)
        common = ["--models", str(catalogue), "--store", str(tmp_path / "runs.sqlite")]
        made = _new(set_path, common, "--repeats", "2", "--stop-when-settled")
        assert "every run covers the full set: with N = 2 runs per arm" in made.out
        result = cli("experiment", "run", "ab", "--json", *common)
        assert result.code == 0, result.err
        assert "--stop-when-settled: the runs cover the full set: with N = 2 runs per arm" in result.err
        assert sum(_sent(server).values()) == 2 * 2 * TASKS
        seq = json.loads(result.out)["sequential"]
        assert seq["mode"] == "full_set" and "N = 2" in seq["full_set_reason"]
        with Store.open(tmp_path / "runs.sqlite") as store:
            assert {run.status for run in store.list_runs()} == {RunStatus.COMPLETED}


def test_arms_of_one_model_are_not_arm_vs_arm_for_a_comparison():
    arm = {"label": "m", "model": {"name": "m", "endpoint": "http://h"}}
    config = ExperimentConfig.model_validate(
        {
            "goldset": {"workload_id": "w", "version": "1", "digest": "sha256:x", "path": "/s"},
            "settings": {"attempts": 1, "temperature": 0, "max_tokens": 8, "concurrency": 1, "timeout_s": 5},
            "repeats": 1,
            "arms": [arm, {**arm, "label": "m [temperature=0.7]", "overrides": {"temperature": 0.7}}],
            "sequential": True,
        }
    )
    reason = full_set_reason(config)
    assert reason is not None and "run the same model (m)" in reason


def test_an_arm_that_already_holds_a_plain_run_leaves_no_sequence_to_start_and_it_says_so(tmp_path):
    with FakeServer(_script(), models=("base-model", "cand-model")) as server:
        set_path, catalogue = _setup(tmp_path, server.url)
        common = ["--models", str(catalogue), "--store", str(tmp_path / "runs.sqlite")]
        assert cli("run", str(set_path), "--model", "base", *common).code == 0
        _new(set_path, common, "--repeats", "1", "--stop-when-settled")
        result = cli("experiment", "run", "ab", "--json", *common)
        assert result.code == 0, result.err
        assert "arm(s) base already hold or are running their run" in result.err
        assert sum(_sent(server).values()) == 2 * TASKS  # the missing arm ran the full set
        seq = json.loads(result.out)["sequential"]
        assert seq["mode"] == "full_set" and "not run as one sequence" in seq["full_set_reason"]

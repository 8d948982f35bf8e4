"""`run --stop-when-settled` against the fake server (issue 50): the tasks go in the recorded
order to every model interleaved, a candidate is sent nothing once its verdict has settled, the
requests not sent are counted, and a resume (after a cancel or a SIGKILL) sends no task twice
and ends on the same sequence."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from collections import Counter

import pytest

from compare_tui.engine import CollectingObserver, EngineSession, NewRunPlan, ResumePlan, RunOverrides
from compare_tui.engine.events import AttemptFinished, SequenceLooked
from compare_tui.report import build_report, load_report_inputs
from compare_tui.report.sequential import first_settled, sequence
from compare_tui.report.sequential_run import paired_in_order
from compare_tui.store import Store
from compare_tui.vocabulary import MISSING, RunStatus
from tests.core.engine.test_chaos_helpers import cli, cli_env
from tests.support.builders import write_set
from tests.support.fake_openai import FakeServer, text

TASKS = 30


def _task(i: int) -> str:
    return f"t{i:02d}"


def _passes(model: str, task: str) -> bool:
    """The candidate passes most tasks, the baseline few: a lead the sequence settles early."""
    i = int(task[1:])
    return i % 6 != 0 if model == "cand-model" else i % 4 == 0


def _script(delay_s: float = 0.0):
    def plan(body: dict, count: int):
        task = body["messages"][-1]["content"]
        return text("billing" if _passes(body["model"], task) else "shipping", headers_delay_s=delay_s)

    return plan


def _catalogue(path, url: str):
    entries = []
    for name, model in (("base", "base-model"), ("cand", "cand-model")):
        entries.append(f"""[[model]]
name = "{name}"
kind = "hosted"
endpoint = "{url}"
model = "{model}"
revision = "2026-12-01"
weights_digest = "sha256:{"0" * 64}"
[model.cost]
basis = "token_price"
usd_per_mtok_input = 1.0
usd_per_mtok_output = 2.0
captured = "2026-12-01"
source = "test"
""")
    path.write_text("\n".join(entries))
    return path


def _setup(tmp_path, url: str):
    set_path = write_set(tmp_path / "set", {_task(i): "billing" for i in range(TASKS)})
    return set_path, _catalogue(tmp_path / "models.toml", url)


def _sent(server: FakeServer) -> Counter[tuple[str, str]]:
    return Counter(
        (r.body["model"], r.task) for r in server.requests if r.path.endswith("/chat/completions") and r.body
    )


def _expected_outcomes(order: list[str]) -> list[int]:
    return [int(_passes("cand-model", t)) - int(_passes("base-model", t)) for t in order]


def _plan(set_path) -> NewRunPlan:
    return NewRunPlan(
        set_path, ("base", "cand"), RunOverrides(concurrency=2), baseline="base", name="seq", sequential=True
    )


def sent_to(row) -> int:
    """The tasks a report row's run was sent (every block but the missing ones)."""
    return sum(1 for block in row.blocks if block.status != MISSING)


def test_a_sequential_session_sends_in_the_recorded_order_and_stops_once_settled(tmp_path):
    with (
        FakeServer(_script(), models=("base-model", "cand-model")) as server,
        Store.open(tmp_path / "runs.sqlite") as store,
    ):
        from compare_tui.report.sequential import look_at

        set_path, catalogue = _setup(tmp_path, server.url)
        seen = CollectingObserver()
        session = EngineSession(store, _plan(set_path), catalogue, seen, stop_rule=look_at)
        assert session.run() == (RunStatus.SETTLED, RunStatus.SETTLED)
        comparison = store.get_comparison(session.comparison_id)
        assert comparison.sequential is not None
        order = comparison.sequential.order
        assert sorted(order) == [_task(i) for i in range(TASKS)] and order != sorted(order)

        settled = first_settled(_expected_outcomes(order), TASKS, margin_pp=5)
        assert settled.settled and settled.tasks < TASKS
        sent = _sent(server)
        assert max(sent.values()) == 1  # no task twice
        for model in ("base-model", "cand-model"):
            tasks = {t for m, t in sent if m == model}
            # Interleaved in the recorded order: what each model was sent is a prefix of it, and
            # no more than its concurrency past the look that settled.
            assert tasks == set(order[: len(tasks)]), model
            assert settled.tasks <= len(tasks) <= settled.tasks + 2, (model, len(tasks))
        looks = seen.of(SequenceLooked)
        assert [e.tasks for e in looks] == list(range(1, settled.tasks + 1))
        assert looks[-1].settled and looks[-1].verdict == "better"

        report = build_report(load_report_inputs(store, session.comparison_id))
        assert report.sequential is not None
        assert report.sequential.requests_not_sent == 2 * TASKS - sum(sent.values())
        assert report.sequential.settled_after == settled.tasks
        # What was not spent is priced per task sent (each run's total ÷ its tasks sent), never
        # per task passed: a run that passed few of them would price each unsent task far higher.
        priced = [(m.cost.total, sent_to(m), TASKS - sent_to(m)) for m in report.models]
        assert all(total for total, _, _ in priced)
        assert report.sequential.not_spent == pytest.approx(
            sum(total / n_sent * unsent for total, n_sent, unsent in priced)
        )
        [versus] = report.decision.versus
        assert versus.sequential is not None and versus.sequential.settled
        assert (versus.sequential.low_pp, versus.sequential.high_pp) == (settled.low * 100, settled.high * 100)
        assert report.decision.summary.startswith(
            f"Switch to candidate cand: better than base (sequential, settled at task {settled.tasks} of {TASKS}: "
            "95% confidence sequence "
        )
        audit = [row for run_id in comparison.run_ids for row in store.audit_for_run(run_id)]
        assert len(audit) == sum(sent.values())


def test_a_cancelled_sequential_session_resumes_the_same_sequence_and_sends_nothing_twice(tmp_path):
    from compare_tui.report.sequential import look_at

    with (
        FakeServer(_script(delay_s=0.02), models=("base-model", "cand-model")) as server,
        Store.open(tmp_path / "runs.sqlite") as store,
    ):
        set_path, catalogue = _setup(tmp_path, server.url)

        class CancelAfter(CollectingObserver):
            session: EngineSession

            def on_event(self, event):
                super().on_event(event)
                if isinstance(event, AttemptFinished) and len(self.of(AttemptFinished)) == 4:
                    self.session.cancel()

        first = CancelAfter()
        session = EngineSession(store, _plan(set_path), catalogue, first, stop_rule=look_at)
        first.session = session
        statuses = session.run()
        assert RunStatus.INTERRUPTED in statuses
        before = _sent(server)
        order = store.get_comparison(session.comparison_id).sequential.order
        _, cand_id = store.get_comparison(session.comparison_id).run_ids

        again = CollectingObserver()
        # Resuming one run of a sequential comparison resumes its schedule: both runs, paired.
        resumed = EngineSession(store, ResumePlan((cand_id,)), catalogue, again, stop_rule=look_at)
        assert resumed.run() == (RunStatus.SETTLED, RunStatus.SETTLED)
        sent = _sent(server)
        assert max(sent.values()) == 1, [k for k, n in sent.items() if n > 1]
        assert set(sent) > set(before)
        settled = first_settled(_expected_outcomes(order), TASKS, margin_pp=5)
        looks = first.of(SequenceLooked) + again.of(SequenceLooked)
        # The same looks an uninterrupted run takes (a look may be repeated at the resume).
        assert sorted({e.tasks for e in looks}) == list(range(1, settled.tasks + 1))
        assert looks[-1].settled and (looks[-1].low, looks[-1].high) == (settled.low, settled.high)
        report = build_report(load_report_inputs(store, session.comparison_id))
        rows = {r.label: r for r in report.models}
        stored = paired_in_order(rows["cand"], rows["base"], report.task_ids, order)
        assert sequence(stored, TASKS, margin_pp=5).settled_at == settled


def test_killed_by_sigkill_a_sequential_cli_run_resumes_without_repeating_a_task(tmp_path):
    with FakeServer(_script(delay_s=0.03), models=("base-model", "cand-model")) as server:
        set_path, catalogue = _setup(tmp_path, server.url)
        store_path = tmp_path / "runs.sqlite"
        env = cli_env(tmp_path / "state")
        common = ["--models", str(catalogue), "--store", str(store_path), "--json"]
        argv = cli("run", str(set_path), "--baseline", "base", "--model", "cand", "--stop-when-settled", *common)
        proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 60
        while sum(_sent(server).values()) < 5 and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=30)
        with Store.open(store_path) as store:
            [comparison] = store.list_comparisons()
        before = _sent(server)
        done = subprocess.run(
            cli("run", "--resume", comparison.run_ids[0], *common), env=env, capture_output=True, text=True, timeout=120
        )
        assert done.returncode == 0, done.stderr
        summary = json.loads(done.stdout)
        assert [r["status"] for r in summary["runs"]] == ["settled", "settled"]
        sent = _sent(server)
        assert set(sent) >= set(before)
        # A request the kill cut off may be asked again (nothing of it was stored); a task stored is never.
        with Store.open(store_path) as store:
            stored = Counter(
                (store.get_run_exact(a.run_id).model_name, a.task_id)
                for r in comparison.run_ids
                for a in store.attempts_for_run(r)
            )
        assert max(stored.values()) == 1
        order = comparison.sequential.order
        settled = first_settled(_expected_outcomes(order), TASKS, margin_pp=5)
        assert f"sequential, settled at task {settled.tasks} of {TASKS}" in summary["decision"]


def test_the_reports_say_the_verdict_is_sequential_where_it_settled_and_what_was_not_sent(tmp_path, capsys):
    from compare_tui.cli import main

    with FakeServer(_script(), models=("base-model", "cand-model")) as server:
        set_path, catalogue = _setup(tmp_path, server.url)
        store = str(tmp_path / "runs.sqlite")
        common = ["--models", str(catalogue), "--store", store]
        assert (
            main(["run", str(set_path), "--baseline", "base", "--model", "cand", "--stop-when-settled", *common]) == 0
        )
        out = capsys.readouterr().out
        with Store.open(tmp_path / "runs.sqlite") as opened:
            [comparison] = opened.list_comparisons()
        settled = first_settled(_expected_outcomes(comparison.sequential.order), TASKS, margin_pp=5)
        sent = sum(_sent(server).values())
        assert "settled: " in out and "not sent (settled) of 30 tasks" in out
        assert (
            f"sequential: settled after {settled.tasks} of {TASKS} tasks; {2 * TASKS - sent} requests not sent; $"
            in out
        )
        assert "not done" not in out and "fail" not in out.split("decision:")[1]

        assert main(["report", comparison.id, "--store", store, "--format", "json"]) == 0
        doc = json.loads(capsys.readouterr().out)
        seq = doc["sequential"]
        assert (seq["mode"], seq["order"], seq["settled_after"]) == (
            "stopped_when_settled",
            comparison.sequential.order,
            settled.tasks,
        )
        [cand] = seq["candidates"]
        # one look per paired outcome: the candidate's tasks the baseline also scored, in order
        assert len(cand["looks"]) >= settled.tasks
        assert cand["looks"][settled.tasks - 1]["settled"] and not cand["looks"][settled.tasks - 2]["settled"]
        assert doc["decision"]["versus"][0]["sequential"]["tasks"] == settled.tasks

        assert main(["report", comparison.id, "--store", store, "--format", "md"]) == 0
        md = capsys.readouterr().out
        assert "Sequential verdicts (--stop-when-settled)" in md
        assert f"cand: better, settled at task {settled.tasks} of {TASKS} (confidence sequence at 95%" in md
        assert "not sent (settled), never failures" in md
        assert "· · not done (or not sent: the verdicts it served had settled)" in md  # the legend


def test_sent_to_the_full_set_later_the_fixed_n_figures_stand_beside_the_same_sequential_verdict(tmp_path):
    from compare_tui.report.sequential import look_at

    with (
        FakeServer(_script(), models=("base-model", "cand-model")) as server,
        Store.open(tmp_path / "runs.sqlite") as store,
    ):
        set_path, catalogue = _setup(tmp_path, server.url)
        session = EngineSession(store, _plan(set_path), catalogue, CollectingObserver(), stop_rule=look_at)
        session.run()
        comparison = store.get_comparison(session.comparison_id)
        before = build_report(load_report_inputs(store, comparison.id))
        refused = EngineSession(store, ResumePlan((comparison.run_ids[1],)), catalogue, CollectingObserver())
        assert refused.run() == ()  # every verdict settled: nothing to resume without --full-set
        full = ResumePlan((comparison.run_ids[1],), full_set=True)  # one run names the comparison
        assert EngineSession(store, full, catalogue, CollectingObserver(), stop_rule=look_at).run() == (
            RunStatus.COMPLETED,
            RunStatus.COMPLETED,
        )
        sent = _sent(server)
        assert len(sent) == 2 * TASKS and max(sent.values()) == 1
        after = build_report(load_report_inputs(store, comparison.id))
        [v] = after.decision.versus
        assert v.paired.tasks == TASKS  # the fixed-N figures over the whole set, beside
        assert v.sequential == before.decision.versus[0].sequential  # the verdict the comparison stopped on
        assert after.sequential.requests_not_sent == 0
        settled_at = before.sequential.settled_after
        assert f"(sequential, settled at task {settled_at} of {TASKS}: " in after.decision.summary


def test_the_gate_holds_the_sequential_verdict(tmp_path, capsys):
    from compare_tui.cli import main
    from compare_tui.report.sequential import look_at

    with (
        FakeServer(_script(), models=("base-model", "cand-model")) as server,
        Store.open(tmp_path / "runs.sqlite") as store,
    ):
        set_path, catalogue = _setup(tmp_path, server.url)
        session = EngineSession(store, _plan(set_path), catalogue, CollectingObserver(), stop_rule=look_at)
        session.run()
    store_arg = ["--store", str(tmp_path / "runs.sqlite")]
    assert main(["report", session.comparison_id, *store_arg, "--require-verdict", "better"]) == 0
    capsys.readouterr()
    # Only the first looks: the verdict there (inconclusive, not settled) is what the gate holds.
    with Store.open(tmp_path / "runs.sqlite") as store:
        comparison = store.get_comparison(session.comparison_id)
        cand = comparison.run_ids[1]
        kept = set(comparison.sequential.order[:2])
        store._write(
            lambda conn: conn.execute("DELETE FROM attempts WHERE run_id = ? AND task_id NOT IN (?, ?)", [cand, *kept])
        )
    assert main(["report", session.comparison_id, *store_arg, "--require-verdict", "better"]) == 3
    err = capsys.readouterr().err
    assert "cand inconclusive (sequential, not settled after 2 of 30 tasks)" in err


def test_the_manifest_sequential_switch_runs_sequentially_and_is_not_part_of_the_digest(tmp_path, capsys):
    from compare_tui.cli import main
    from compare_tui.goldset import load_golden_set

    with FakeServer(_script(), models=("base-model", "cand-model")) as server:
        set_path, catalogue = _setup(tmp_path, server.url)
        manifest = set_path / "golden.toml"
        manifest.write_text(manifest.read_text() + "[decision]\nmargin_pp = 5.0\n")
        before = load_golden_set(set_path).digest
        manifest.write_text(manifest.read_text() + "sequential = true\n")
        loaded = load_golden_set(set_path)
        assert loaded.manifest.decision.sequential and loaded.digest == before
        store = tmp_path / "runs.sqlite"
        args = [str(set_path), "--model", "cand", "--models", str(catalogue), "--store", str(store), "--json"]
        assert main(["run", *args, "--baseline", "base"]) == 0
        assert main(["run", *args]) == 0  # without a baseline there is nothing to settle: fixed-N
    capsys.readouterr()
    with Store.open(store) as opened:
        fixed, sequential = opened.list_comparisons()
    assert sequential.sequential is not None and fixed.sequential is None


def test_stop_when_settled_is_refused_without_a_baseline_or_with_a_resume(tmp_path, capsys):
    from compare_tui.cli import main

    set_path, catalogue = _setup(tmp_path, "http://127.0.0.1:9/v1")
    common = ["--models", str(catalogue), "--store", str(tmp_path / "s")]
    assert main(["run", str(set_path), "--model", "cand", "--stop-when-settled", *common]) == 2
    assert "name it with --baseline A" in capsys.readouterr().err
    assert main(["run", "--resume", "abc", "--stop-when-settled", *common]) == 2
    assert "a resume keeps its comparison's own schedule" in capsys.readouterr().err

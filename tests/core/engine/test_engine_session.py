"""The core multi-model session (`compare_tui.engine.session`) against the fake server: it
emits every event itself, in order; a refusal rolls back what was written; a resume skips
completed runs; runs prepared elsewhere execute through it too."""

from __future__ import annotations

from compare_tui.catalogue import load_catalogue
from compare_tui.engine import (
    AttemptFinished,
    BaselineChosen,
    CollectingObserver,
    EngineSession,
    ModelsResolved,
    NewRunPlan,
    ResumePlan,
    RunFinished,
    RunOverrides,
    RunRefused,
    RunsPrepared,
    RunStarted,
    SessionEnded,
    prepare_run,
)
from compare_tui.goldset import load_golden_set
from compare_tui.store import Store
from tests.support.builders import write_set
from tests.support.fake_openai import FakeServer, text
from tests.tui.test_tui_data import write_catalogue


def _setup(tmp_path, url: str, tasks: int = 3):
    goldset = write_set(tmp_path / "set", {f"t{i}": "billing" for i in range(tasks)})
    return goldset, write_catalogue(tmp_path / "models.toml", url)


def test_a_new_session_reports_every_step_and_links_its_runs(tmp_path):
    with FakeServer(default=text("billing")) as server, Store.open(tmp_path / "runs.sqlite") as store:
        set_path, catalogue = _setup(tmp_path, server.url)
        seen = CollectingObserver()
        plan = NewRunPlan(set_path, ("fake-a", "fake-b"), RunOverrides(), baseline="fake-a", name="mine")
        session = EngineSession(store, plan, catalogue, seen)
        assert session.run() == ("completed", "completed")
        kinds = [type(e) for e in seen.events if not isinstance(e, AttemptFinished)]
        assert kinds == [
            ModelsResolved,
            BaselineChosen,
            RunsPrepared,
            RunStarted,
            RunFinished,
            RunStarted,
            RunFinished,
            SessionEnded,
        ]
        assert seen.events[0] == ModelsResolved({"fake-a": "hosted", "fake-b": "hosted"})
        prepared = seen.of(RunsPrepared)[0]
        comparison = store.get_comparison(prepared.comparison_id)
        assert (comparison.name, comparison.baseline) == ("mine", "fake-a")
        assert comparison.run_ids == list(prepared.run_ids)
        assert len(seen.of(AttemptFinished)) == 6
        assert seen.events[-1] == SessionEnded(("completed", "completed"), False)


def test_a_refusal_rolls_back_the_comparison_and_every_run_prepared_before_it(tmp_path):
    with FakeServer(default=text("billing")) as server, Store.open(tmp_path / "runs.sqlite") as store:
        set_path, catalogue = _setup(tmp_path, server.url)
        seen = CollectingObserver()
        session = EngineSession(store, NewRunPlan(set_path, ("fake-a", "unpinned"), RunOverrides()), catalogue, seen)
        assert session.run() == ()
        refused = seen.of(RunRefused)
        assert len(refused) == 1 and refused[0].model_name == "unpinned"
        assert seen.events[-1] == SessionEnded((), False)
        assert store.list_runs() == [] and store.list_comparisons() == []
        assert server.count("t0") == 0  # nothing was sent


def test_an_unknown_model_and_a_missing_catalogue_are_refusals(tmp_path):
    set_path, catalogue = _setup(tmp_path, "http://127.0.0.1:9/v1")
    with Store.open(tmp_path / "runs.sqlite") as store:
        seen = CollectingObserver()
        EngineSession(store, NewRunPlan(set_path, ("nope",), RunOverrides()), catalogue, seen).run()
        assert "fake-a" in seen.of(RunRefused)[0].reason  # the names it does have
        seen = CollectingObserver()
        EngineSession(store, NewRunPlan(set_path, ("fake-a",), RunOverrides()), tmp_path / "none.toml", seen).run()
        assert "no model catalogue" in seen.of(RunRefused)[0].reason


def test_a_resume_skips_completed_runs_and_seeds_what_was_recorded(tmp_path):
    with FakeServer(default=text("billing")) as server, Store.open(tmp_path / "runs.sqlite") as store:
        set_path, catalogue = _setup(tmp_path, server.url)
        first = CollectingObserver()
        EngineSession(store, NewRunPlan(set_path, ("fake-a",), RunOverrides()), catalogue, first).run()
        done = first.of(RunsPrepared)[0].run_ids[0]
        seen = CollectingObserver()
        assert EngineSession(store, ResumePlan((done,)), catalogue, seen).run() == ()
        assert "already completed" in seen.of(RunRefused)[0].reason
        # A run left pending (prepared, never executed) is resumed; the completed one is skipped.
        entry = load_catalogue(catalogue).get("fake-b")
        pending = prepare_run(store, load_golden_set(set_path), entry, RunOverrides()).run.id
        seen = CollectingObserver()
        assert EngineSession(store, ResumePlan((done, pending)), catalogue, seen).run() == ("completed",)
        assert seen.of(RunsPrepared)[0].run_ids == (pending,)
        assert seen.of(RunStarted)[0].prior_counts == {}


def test_runs_prepared_elsewhere_execute_through_the_session(tmp_path):
    with FakeServer(default=text("billing")) as server, Store.open(tmp_path / "runs.sqlite") as store:
        set_path, catalogue = _setup(tmp_path, server.url)
        entry = load_catalogue(catalogue).get("fake-a")
        prepared = prepare_run(store, load_golden_set(set_path), entry, RunOverrides())
        seen = CollectingObserver()
        assert EngineSession.of_prepared(store, [prepared], seen).run() == ("completed",)
        assert store.get_run(prepared.run.id).status == "completed"
        assert seen.events[-1] == SessionEnded(("completed",), False)

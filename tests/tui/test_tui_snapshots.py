"""Snapshot tests: what each screen looks like at 80×24 (the report also at 120×40, with
real-length texts) over a hand-built store (fixed ids,
timestamps and figures), so any change to what a user sees shows up as an SVG diff.

Update after an intended change with `pytest tests/tui/test_tui_snapshots.py --snapshot-update`
and review the new SVGs in tests/tui/__snapshots__/.
"""

from __future__ import annotations

import pytest

from compare_tui.engine import RunOverrides
from compare_tui.engine.events import AttemptFinished, RunFinished, RunStarted
from compare_tui.tui import messages
from compare_tui.tui.app import create_app
from compare_tui.tui.engine_bridge import NewRunPlan, gpu_before_run
from compare_tui.tui.screens.live import LiveScreen
from tests.support.home_app import settle
from tests.tui.test_tui_data import COMPARISON_ID, RUN_IDS, build_store, fixed_probe, write_catalogue

SIZE = (80, 24)


@pytest.fixture
def make_app(tmp_path):
    store, sets = build_store(tmp_path)
    catalogue = write_catalogue(tmp_path / "models.toml")

    def make(theme: str | None = None):
        return create_app(
            store=store, catalogue_path=catalogue, sets_dir=sets, theme=theme, reviewer="tester", probe=fixed_probe
        )

    yield make
    store.close()


def keys(*presses: str):
    """A `run_before` that waits for Home, presses keys, and waits for what they started."""

    async def run_before(pilot) -> None:
        await settle(pilot)
        for key in presses:
            await pilot.press(key)
            await settle(pilot, rounds=2)

    return run_before


def opened(action, *presses: str):
    async def run_before(pilot) -> None:
        await settle(pilot)
        action(pilot.app)
        await settle(pilot)
        for key in presses:
            await pilot.press(key)
            await settle(pilot, rounds=2)

    return run_before


def test_home_runs(make_app, snap_compare):
    """At 80 columns the table fits: the year and the set's version left to the line under it."""
    assert snap_compare(make_app(), terminal_size=SIZE, run_before=keys())


def test_home_runs_wide(make_app, snap_compare):
    """At 120 columns every cell is whole."""
    assert snap_compare(make_app(), terminal_size=(120, 40), run_before=keys())


def test_home_sets_with_a_broken_set(make_app, snap_compare):
    assert snap_compare(make_app(), terminal_size=SIZE, run_before=keys("1"))


def test_home_models_with_a_refused_entry(make_app, snap_compare):
    assert snap_compare(make_app(), terminal_size=SIZE, run_before=keys("2", "down", "down"))


def test_new_run_with_estimate(make_app, snap_compare):
    assert snap_compare(make_app(), terminal_size=SIZE, run_before=keys("1", "down", "n", "space"))


def test_new_run_refusal(make_app, snap_compare):
    assert snap_compare(
        make_app(), terminal_size=SIZE, run_before=keys("1", "down", "n", "down", "down", "space", "ctrl+s")
    )


class ScriptedSession:
    """Stands in for the engine: the same events every time, no server, no clock."""

    def __init__(self, workspace, plan, tally, post) -> None:
        self.tally, self.post = tally, post

    def cancel(self) -> None:
        pass

    def run(self) -> None:
        self.post(messages.RunsPrepared("cmp-live", ("live-run-a", "live-run-b")))
        self.tally.set_gpu("fake-a", gpu_before_run("hosted"))
        self.tally.set_gpu("fake-b", gpu_before_run("local"))
        self.tally.on_event(
            RunStarted(
                "live-run-a",
                "fake-a",
                "Support mini",
                12,
                0,
                "provenance by host attestation, not verified",
                "≤ $0.0008",
            )
        )
        for n in range(12):
            outcome = "fail" if n in (2, 5) else "error" if n == 9 else "pass"
            self.tally.on_event(
                AttemptFinished(
                    "live-run-a",
                    "fake-a",
                    f"ticket-{n:02d}",
                    1,
                    outcome,
                    True,
                    40.0 + n,
                    300.0 + 10 * n,
                    error="HTTP 503 after 3 retries" if outcome == "error" else None,
                )
            )
        self.tally.on_event(RunFinished("live-run-a", "fake-a", "completed", {}))
        self.tally.on_event(RunStarted("live-run-b", "fake-b", "Support mini", 12, 0, "verified", "≤ $0.0012"))
        for n in range(5):
            self.tally.on_event(
                AttemptFinished("live-run-b", "fake-b", f"ticket-{n:02d}", 1, "pass", True, 90.0, 700.0)
            )
        self.tally.on_event(RunFinished("live-run-b", "fake-b", "interrupted", {}, "interrupted by the user"))
        self.post(messages.SessionEnded(("completed", "interrupted"), True))


def test_live_progress(make_app, snap_compare):
    def push(app):
        plan = NewRunPlan(app.workspace.sets_dir / "support-mini", ("fake-a", "fake-b"), RunOverrides())
        app.push_screen(LiveScreen(plan, session_factory=ScriptedSession))

    assert snap_compare(make_app(), terminal_size=SIZE, run_before=opened(push))


def test_report_summary(make_app, snap_compare):
    assert snap_compare(make_app(), terminal_size=SIZE, run_before=keys("enter"))


def test_report_figures(make_app, snap_compare):
    assert snap_compare(make_app(), terminal_size=SIZE, run_before=keys("enter", "2"))


def test_report_task_grid(make_app, snap_compare):
    assert snap_compare(make_app(), terminal_size=SIZE, run_before=keys("enter", "3", "end", "up"))


@pytest.mark.parametrize("theme", ["light", "high-contrast"])
def test_report_task_grid_themes(make_app, snap_compare, theme):
    assert snap_compare(make_app(theme), terminal_size=SIZE, run_before=keys("enter", "3", "right", "right"))


def test_task_detail(make_app, snap_compare):
    assert snap_compare(make_app(), terminal_size=SIZE, run_before=keys("enter", "3", "end", "enter"))


def test_run_picker(make_app, snap_compare):
    assert snap_compare(make_app(), terminal_size=SIZE, run_before=keys("down", "d"))


def test_diff_flips(make_app, snap_compare):
    diff = opened(lambda app: app.open_diff(RUN_IDS["smollm2-135m"], RUN_IDS["gemma3-270m"]))
    assert snap_compare(make_app(), terminal_size=SIZE, run_before=diff)


def test_diff_changed_tasks(make_app, snap_compare):
    diff = opened(lambda app: app.open_diff(RUN_IDS["smollm2-135m"], RUN_IDS["gemma3-270m"]), "2")
    assert snap_compare(make_app(), terminal_size=SIZE, run_before=diff)


def test_review(make_app, snap_compare):
    assert snap_compare(make_app(), terminal_size=SIZE, run_before=opened(lambda app: app.open_review(COMPARISON_ID)))


def test_help(make_app, snap_compare):
    assert snap_compare(make_app(), terminal_size=SIZE, run_before=keys("question_mark"))


def _toolcall_runs(store) -> None:
    """Two tool-call runs with fixed ids and dates: llama.cpp with Jinja, and without it."""
    from compare_tui.toolcall import ToolcallStore
    from compare_tui.toolcall.results.model import (
        CallRecord,
        CheckFailure,
        CheckResult,
        ScenarioResult,
        ToolcallOutcome,
        ToolcallRun,
    )

    ok = CheckResult("calls_match", "the expected calls, names and argument values (any order)", True)
    missing = CheckResult(
        "calls_match",
        "the expected calls, names and argument values (any order)",
        False,
        failures=(CheckFailure("/tool_calls/0/function/arguments/unit", "equals", "the argument is missing"),),
    )
    call = (CallRecord("get_weather", "call_1"),)
    results = {
        "jinja": [
            ScenarioResult(
                "S01",
                "simple.basic",
                "simple",
                "One tool, one obvious call",
                ToolcallOutcome.PASS,
                "every check passed",
                (ok,),
                calls=call,
                status=200,
                duration_ms=412.0,
            ),
            ScenarioResult(
                "S02",
                "simple.enum",
                "simple",
                "An enum value spelled exactly as declared",
                ToolcallOutcome.FAIL,
                "failed: calls_match",
                (missing,),
                calls=call,
                status=200,
                duration_ms=388.0,
            ),
            ScenarioResult(
                "S03",
                "simple.types",
                "simple",
                "Integer, number and boolean arguments",
                ToolcallOutcome.ERROR,
                "timed out after 60 s",
                status=None,
            ),
        ],
        "no-jinja": [
            ScenarioResult(
                "S01",
                "simple.basic",
                "simple",
                "One tool, one obvious call",
                ToolcallOutcome.UNSUPPORTED,
                "llama-server without --jinja refuses tools",
                status=500,
                duration_ms=3.0,
            ),
        ],
    }
    tool_runs = ToolcallStore(store)
    for n, (stack, found) in enumerate(results.items()):
        run = ToolcallRun(
            id=f"tc{n}{'0' * 14}",
            created_at=f"2026-12-01T10:0{n}:00Z",
            model_name="smollm2-135m",
            model_id="smollm2",
            endpoint=f"http://127.0.0.1:808{n + 1}/v1",
            suite_name="official",
            suite_version="1.0.0",
            suite_digest="sha256:" + "1" * 64,
            server_notes=(f"llama.cpp build b7000 ({stack})",),
        )
        tool_runs.begin(run)
        for position, result in enumerate(found):
            tool_runs.add_result(run, position, result)
        tool_runs.finish(run, "finished")


def test_toolcall_table(make_app, snap_compare):
    def open_table(app) -> None:
        _toolcall_runs(app.workspace.store)
        app.open_toolcall()

    assert snap_compare(make_app(), terminal_size=SIZE, run_before=opened(open_table, "right"))


def test_toolcall_table_focus_on_the_run_list_wide(make_app, snap_compare):
    # The focused table shows it (a bar on its left edge); one Tab reaches the run list.
    def open_table(app) -> None:
        _toolcall_runs(app.workspace.store)
        app.open_toolcall()

    assert snap_compare(make_app(), terminal_size=(120, 40), run_before=opened(open_table, "tab"))


# ------------------------------------------------------------------ the Models screen


@pytest.fixture
def make_models_app(tmp_path, monkeypatch):
    """The usual store over the Models screen's catalogue (tests/tui/test_models_screen.py), run from
    the catalogue's folder so the paths shown are the same on every machine."""
    from tests.tui.test_models_screen import write_models_catalogue

    store, sets = build_store(tmp_path)
    catalogue = write_models_catalogue(tmp_path)
    monkeypatch.chdir(tmp_path)
    yield lambda: create_app(store=store, catalogue_path=catalogue, sets_dir=sets, reviewer="tester", probe=fixed_probe)
    store.close()


@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=["80x24", "120x40"])
def test_models_after_verify_all(make_models_app, snap_compare, size):
    """`m` from Home, `V` verifies every model; the cursor on the one whose weights changed."""

    async def run_before(pilot) -> None:
        await keys("m", "V", "down")(pilot)
        for _ in range(200):  # the last outcome is a message: on a busy machine it lands later
            if not pilot.app.screen.queued:
                break
            await settle(pilot, rounds=1)
        assert not pilot.app.screen.queued, "verify all did not finish"
        await pilot.pause()
        pilot.app.clear_notifications()  # the toast would cover the reasons below it
        await pilot.pause()

    assert snap_compare(make_models_app(), terminal_size=size, run_before=run_before)


# ------------------------------------------------------------------ the report with real-length texts

NVML_REASON = "NVML library not found (no NVIDIA driver installed on this machine)"
LONG_NAMES = {
    "smollm2-135m": "Qwen2.5-Coder-32B-Instruct-Q4_K_M-long-name",
    "gemma3-270m": "meta-llama/Llama-3.1-70B-Instruct-Turbo",
}


@pytest.fixture
def make_long_app(tmp_path):
    """The usual store, its two compared runs renamed as long as real model names get, with the
    NVML reason a machine without a driver records and a hardware rate that makes six-figure costs."""
    from compare_tui.goldset import load_golden_set
    from compare_tui.store import ComparisonRecord, Store
    from tests.tui.test_tui_data import OUTCOMES, SET_NAME, TOKEN_PRICE, _attempts, _run, write_mini_set

    goldset = load_golden_set(write_mini_set(tmp_path / "sets" / SET_NAME))
    store = Store.open(tmp_path / "runs.sqlite")
    costs = {
        "smollm2-135m": {"basis": "hardware", "usd_per_hour": 7_500_000.0, "gpu_count": 1},
        "gemma3-270m": TOKEN_PRICE,
    }
    for model, run_id in RUN_IDS.items():
        run = _run(LONG_NAMES[model], run_id, goldset, cost=costs[model]).model_copy(
            update={"gpu": {"measured": False, "reason": NVML_REASON}}
        )
        if model == "gemma3-270m":
            run = run.model_copy(
                update={
                    "model_entry": {"name": run.model_name, "kind": "hosted"},
                    "gpu": None,
                    "provenance": "provenance by host attestation, not verified",
                }
            )
        store.create_run(run)
        store.record_attempts(_attempts(run_id, OUTCOMES[model]))
    store.create_comparison(
        ComparisonRecord(
            id=COMPARISON_ID,
            name="support-mini 2026-01-05",
            created_at="2026-01-05T10:00:00Z",
            run_ids=list(RUN_IDS.values()),
        )
    )
    catalogue = write_catalogue(tmp_path / "models.toml")

    def make():
        return create_app(
            store=store, catalogue_path=catalogue, sets_dir=tmp_path / "sets", reviewer="tester", probe=fixed_probe
        )

    yield make
    store.close()


REPORT_TABS = {
    "summary": ("enter",),
    "figures": ("enter", "2"),
    "figures-scrolled": ("enter", "2", "pagedown"),
    "tasks": ("enter", "3"),
    "insights": ("enter", "4", "down"),
}


@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=["80x24", "120x40"])
@pytest.mark.parametrize("tab", list(REPORT_TABS))
def test_report_with_real_length_texts(make_long_app, snap_compare, tab, size):
    assert snap_compare(make_long_app(), terminal_size=size, run_before=keys(*REPORT_TABS[tab]))


@pytest.fixture
def make_baseline_app(tmp_path):
    """The same store, its comparison naming smollm2-135m as the baseline."""
    store, sets = build_store(tmp_path)
    store.set_comparison_baseline(COMPARISON_ID, "smollm2-135m")
    catalogue = write_catalogue(tmp_path / "models.toml")
    yield lambda: create_app(store=store, catalogue_path=catalogue, sets_dir=sets, reviewer="tester", probe=fixed_probe)
    store.close()


@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=["80x24", "120x40"])
def test_report_summary_leads_with_the_decision(make_baseline_app, snap_compare, size):
    assert snap_compare(make_baseline_app(), terminal_size=size, run_before=keys("enter"))


# ------------------------------------------------------------------ issue 22: screens at both sizes

SIZES = {"80x24": (80, 24), "120x40": (120, 40)}


@pytest.mark.parametrize("size", list(SIZES))
def test_review_answer_first(make_app, snap_compare, size):
    assert snap_compare(
        make_app(), terminal_size=SIZES[size], run_before=opened(lambda app: app.open_review(COMPARISON_ID))
    )


@pytest.mark.parametrize("size", list(SIZES))
def test_triage_without_a_judging(make_app, snap_compare, size):
    assert snap_compare(make_app(), terminal_size=SIZES[size], run_before=keys("j"))


def test_live_progress_wide(make_app, snap_compare):
    def push(app):
        plan = NewRunPlan(app.workspace.sets_dir / "support-mini", ("fake-a", "fake-b"), RunOverrides())
        app.push_screen(LiveScreen(plan, session_factory=ScriptedSession))

    assert snap_compare(make_app(), terminal_size=SIZES["120x40"], run_before=opened(push))


@pytest.mark.parametrize("size", list(SIZES))
def test_diff_across_golden_sets(make_app, snap_compare, tmp_path, size):
    from tests.tui.test_tui_diff_screen import add_run_on_another_set

    def open_diff(app) -> None:
        other = add_run_on_another_set(app.workspace.store, tmp_path)
        app.open_diff(RUN_IDS["smollm2-135m"], other)

    assert snap_compare(make_app(), terminal_size=SIZES[size], run_before=opened(open_diff))


def test_run_picker_wide(make_app, snap_compare):
    assert snap_compare(make_app(), terminal_size=SIZES["120x40"], run_before=keys("down", "d"))


def test_new_run_two_models_wide(make_app, snap_compare):
    assert snap_compare(
        make_app(), terminal_size=SIZES["120x40"], run_before=keys("1", "down", "n", "space", "down", "space")
    )


# ------------------------------------------------------------------ issue 21: stored rubric grades in the Summary

GRADES = {"smollm2-135m": "4405424424" + "33", "gemma3-270m": "5555525255" + "44"}
"""Per run, each task's stored 1–5 grade (0: the judge call failed) by the judge `judge-x`."""


def store_grades(store) -> None:
    """A quality grading of each compared run by `judge-x`, with fixed ids, times and figures."""
    from compare_tui.judge.grade.scale import QUALITY_RUBRIC
    from compare_tui.store.judgements import JudgementRecord, JudgingRecord
    from tests.tui.test_tui_data import TASK_IDS

    for model, run_id in RUN_IDS.items():
        judging = store.save_judging(
            JudgingRecord(
                kind="scale",
                run_id=run_id,
                judge_model="judge-x",
                rubric_digest="sha256:" + "1" * 64,
                mode="quality",
                rubric=QUALITY_RUBRIC,
                judge_entry={"name": "judge-x", "kind": "local"},
                provenance="verified",
                created_at="2026-01-05T11:00:00Z",
            )
        )
        for n, (task_id, grade) in enumerate(zip(TASK_IDS, GRADES[model], strict=True)):
            failed = grade == "0"
            store.record_judgement(
                JudgementRecord(
                    judging_id=judging.id,
                    task_id=task_id,
                    ordering="single",
                    attempt=1,
                    verdict=None if failed else grade,
                    grade=None if failed else int(grade),
                    rationale="" if failed else "graded by rule",
                    error_class="http_5xx" if failed else None,
                    error="HTTP 500" if failed else None,
                    prompt_tokens=200,
                    completion_tokens=12,
                    e2e_ms=400.0 + 10 * n,
                    judged_at="2026-01-05T11:00:01Z",
                )
            )


@pytest.fixture
def make_graded_app(tmp_path):
    """The baseline store with stored grades of both compared runs."""
    store, sets = build_store(tmp_path)
    store.set_comparison_baseline(COMPARISON_ID, "smollm2-135m")
    store_grades(store)
    catalogue = write_catalogue(tmp_path / "models.toml")
    yield lambda: create_app(store=store, catalogue_path=catalogue, sets_dir=sets, reviewer="tester", probe=fixed_probe)
    store.close()


@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=["80x24", "120x40"])
def test_report_summary_with_stored_grades(make_graded_app, snap_compare, size):
    async def run_before(pilot) -> None:
        await keys("enter")(pilot)
        pilot.app.screen.query_one("#grades-title").scroll_visible(animate=False, top=True)
        await settle(pilot)

    assert snap_compare(make_graded_app(), terminal_size=size, run_before=run_before)


def test_review_with_real_length_names(make_long_app, snap_compare):
    # The status line keeps the reason whole beside a real model name (it was cut at 80 columns).
    assert snap_compare(
        make_long_app(), terminal_size=SIZE, run_before=opened(lambda app: app.open_review(COMPARISON_ID))
    )

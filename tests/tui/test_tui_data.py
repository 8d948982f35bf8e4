"""Deterministic data for the TUI tests (a hand-built store: fixed ids, timestamps and figures),
and plain-pytest tests of the pure modules behind the screens (no app needed).

Other TUI test modules import the builders from here: the only shared test files the TUI may
add are `tests/test_tui*.py`.
"""

from __future__ import annotations

import json
from pathlib import Path

from compare_tui.engine.events import AttemptFinished, RunFinished, RunStarted
from compare_tui.engine.reachability import Reachability
from compare_tui.goldset import load_golden_set
from compare_tui.store import AttemptRecord, ComparisonRecord, ReviewRecord, RunRecord, Store
from compare_tui.vocabulary import Reach

SET_NAME = "support-mini"
TASK_IDS = [f"ticket-{n:02d}" for n in range(1, 11)] + ["reply-01", "reply-02"]
HUMAN_TASKS = {"reply-01", "reply-02"}
HARDWARE = {"basis": "hardware", "usd_per_hour": 0.5, "gpu_count": 1}
TOKEN_PRICE = {
    "basis": "token_price",
    "usd_per_mtok_input": 0.15,
    "usd_per_mtok_output": 0.6,
    "captured": "2026-11-30",
    "source": "price page",
}
# outcome per task for each model: p pass, f fail, r review, e error
OUTCOMES = {
    "smollm2-135m": "ppfppfpppe" + "rr",
    "gemma3-270m": "pppppfpfpp" + "rr",
}
RUN_IDS = {"smollm2-135m": "a1a1a1a1a1a1a1a1", "gemma3-270m": "b2b2b2b2b2b2b2b2"}
INTERRUPTED_RUN = "c3c3c3c3c3c3c3c3"
COMPARISON_ID = "cmp0000000000001"


def write_mini_set(root: Path) -> Path:
    """A 12-task golden set: 10 exact-scored tickets and 2 reply tasks a person scores."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "tasks").mkdir(exist_ok=True)
    (root / "golden.toml").write_text(
        'workload_id = "support-mini"\nname = "Support mini"\nversion = "1.0.0"\n'
        'caveats = ["Expected labels are what production returned in October."]\n'
        '[default_scorer]\nkind = "exact"\nnormalize = ["case", "whitespace"]\n'
        "[run]\nattempts = 1\nmax_tokens = 16\n"
    )
    for n, task_id in enumerate(TASK_IDS):
        task = {
            "id": task_id,
            "input": {"system": "Classify the ticket.", "prompt": f"Ticket number {n}: [urgent] help"},
            "expected": {"text": "billing"},
        }
        if task_id in HUMAN_TASKS:
            task = {
                "id": task_id,
                "input": {"prompt": f"Write a short reply to ticket {n}."},
                "expected": {"text": "A polite reply that offers a refund."},
                "scorer": {"kind": "human", "instructions": "Pass if the reply is polite and offers a refund."},
            }
        (root / "tasks" / f"{task_id}.json").write_text(json.dumps(task))
    return root


def write_broken_set(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "tasks").mkdir(exist_ok=True)
    (root / "golden.toml").write_text('workload_id = "broken"\nname = "Broken"\nversion = "0.1"\n')
    return root


def write_catalogue(path: Path, endpoint: str = "http://127.0.0.1:9/v1") -> Path:
    """Two hosted entries on one endpoint (a fake server in Pilot tests) and one refused entry."""
    path.write_text(f"""
[[model]]
name = "fake-a"
kind = "hosted"
endpoint = "{endpoint}"
model = "fake-model"
revision = "2026-12-01"
weights_digest = "sha256:{"0" * 64}"
[model.cost]
basis = "token_price"
usd_per_mtok_input = 1.0
usd_per_mtok_output = 2.0
captured = "2026-12-01"
source = "test"

[[model]]
name = "fake-b"
kind = "hosted"
endpoint = "{endpoint}"
model = "fake-model"
revision = "2026-12-02"
weights_digest = "sha256:{"1" * 64}"
[model.cost]
basis = "hardware"
usd_per_hour = 0.5

[[model]]
name = "unpinned"
kind = "hosted"
endpoint = "{endpoint}"
model = "fake-model"
""")
    return path


def _run(
    model: str, run_id: str, goldset, *, status: str = "completed", cost=HARDWARE, created: str = "2026-01-05T10:00:00Z"
) -> RunRecord:
    return RunRecord(
        id=run_id,
        status=status,
        created_at=created,
        started_at=created,
        finished_at=None if status == "running" else "2026-01-05T10:02:00Z",
        goldset_id=goldset.manifest.workload_id,
        goldset_name=goldset.manifest.name,
        goldset_version=goldset.manifest.version,
        goldset_digest=goldset.digest,
        goldset_path=str(goldset.root),
        model_name=model,
        model_entry={"name": model, "kind": "local", "serving": {"stack": "llama.cpp"}},
        provenance="verified",
        cost_basis=cost,
        settings={"attempts": 1, "temperature": 0.0, "max_tokens": 16, "concurrency": 4, "timeout_s": 120.0},
        task_count=len(goldset.tasks),
        comparison_id=COMPARISON_ID,
        gpu={"measured": False, "reason": "no NVIDIA GPU found by NVML"},
    )


def _attempts(run_id: str, pattern: str) -> list[AttemptRecord]:
    outcome_of = {"p": "pass", "f": "fail", "r": "review", "e": "error"}
    records = []
    for n, (task_id, code) in enumerate(zip(TASK_IDS, pattern, strict=True)):
        outcome = outcome_of[code]
        error = outcome == "error"
        answer = {"pass": "billing", "fail": "bug", "review": "Sorry about that: we have refunded you.", "error": ""}
        detail = {
            "pass": "exact match",
            "fail": "expected 'billing', got 'bug'",
            "review": "a person decides (human scorer)",
            "error": "",
        }
        records.append(
            AttemptRecord(
                run_id=run_id,
                task_id=task_id,
                attempt=1,
                outcome=outcome,
                answer_text=answer[outcome],
                score_detail=detail[outcome],
                # A recorded error (the server answered with an error), not an outage: it is scored.
                error_class="stream_error" if error else None,
                error="the server reported an error inside the stream: slot unavailable" if error else None,
                ttft_ms=None if error else 40.0 + 7 * n,
                e2e_ms=None if error else 300.0 + 25 * n,
                prompt_tokens=None if error else 60,
                completion_tokens=None if error else 3,
                started_at="2026-01-05T10:00:01Z",
                finished_at="2026-01-05T10:00:02Z",
                finish_reason=None if error else "stop",
            )
        )
    return records


def build_store(tmp_path: Path) -> tuple[Store, Path]:
    """(an open store with two completed runs in one comparison and one interrupted run, the
    sets folder holding the golden set they ran and a broken set)."""
    sets = tmp_path / "sets"
    goldset = load_golden_set(write_mini_set(sets / SET_NAME))
    write_broken_set(sets / "broken-set")
    store = Store.open(tmp_path / "runs.sqlite")
    for model, run_id in RUN_IDS.items():
        store.create_run(_run(model, run_id, goldset))
        store.record_attempts(_attempts(run_id, OUTCOMES[model]))
    store.create_run(
        _run("gemma3-270m", INTERRUPTED_RUN, goldset, status="interrupted", created="2026-01-04T09:00:00Z")
    )
    store.record_attempts(_attempts(INTERRUPTED_RUN, OUTCOMES["smollm2-135m"])[:4])  # 3 of 4 pass
    store.create_comparison(
        ComparisonRecord(
            id=COMPARISON_ID,
            name="support-mini 2026-01-05",
            created_at="2026-01-05T10:00:00Z",
            run_ids=list(RUN_IDS.values()),
        )
    )
    return store, sets


def fixed_probe(endpoint: str) -> Reachability:
    if "127.0.0.1:9/" not in endpoint + "/":
        return Reachability(Reach.HEALTHY, 200)
    return Reachability(Reach.UNREACHABLE, reason="connection refused")


# ---------------------------------------------------------------- tests of the pure modules


def test_home_rows_list_sets_with_problems_models_with_refusals_and_runs(tmp_path):
    from compare_tui.tui.home_data import filter_runs, read_home, report_pass_rate, sort_runs
    from compare_tui.tui.workspace import Workspace

    store, sets = build_store(tmp_path)
    workspace = Workspace(store, write_catalogue(tmp_path / "models.toml"), sets, "tester", fixed_probe)
    data = read_home(workspace)
    assert [s.folder for s in data.sets] == ["broken-set", SET_NAME]
    broken, mini = data.sets
    assert broken.problems and all(str(tmp_path) not in p for p in broken.problems)
    assert (mini.tasks, mini.scorers, mini.problems) == (12, "exact×10, human×2", ())
    assert [m.provenance for m in data.models][2] == "refused"
    assert any("revision" in r for r in data.models[2].refusals)
    assert {r.run.id for r in data.runs} == set(RUN_IDS.values()) | {INTERRUPTED_RUN}
    assert [r.run.id for r in filter_runs(data.runs, "interrupted")] == [INTERRUPTED_RUN]
    rates = {r.run.id: report_pass_rate(store, r.run.id) for r in data.runs}
    best = sort_runs(list(data.runs), "pass rate", rates)[0]
    assert best.run.id == RUN_IDS["gemma3-270m"] and rates[best.run.id].text == "80.0% (8/10)"
    assert rates[RUN_IDS["smollm2-135m"]].text == "70.0% (7/10)"  # the error counts as not passed


def test_live_tally_counts_tasks_once_and_keeps_rolling_figures():
    from compare_tui.tui.live_tally import LiveTally

    now = [100.0]
    tally = LiveTally([("m", 0, "")], clock=lambda: now[0])
    tally.on_event(RunStarted("r1", "m", "set", 3, 0, "verified", "≤ $0.01"))
    tally.on_event(AttemptFinished("r1", "m", "t1", 1, "fail", False, 10.0, 100.0, 5, 20))
    tally.on_event(AttemptFinished("r1", "m", "t1", 2, "pass", True, 30.0, 300.0, 5, 20))
    now[0] += 2
    tally.on_event(AttemptFinished("r1", "m", "t2", 1, "error", True, error="timed out"))
    view = tally.snapshot()[0]
    assert (view.state, view.done, view.total) == ("running", 2, 3)
    assert view.counts == {"pass": 1, "error": 1}
    assert (view.ttft_p50_ms, view.e2e_p50_ms) == (20.0, 200.0)
    assert view.tokens_per_s == 40 / 2
    assert view.recent_errors == ("t2 #1: timed out",)
    before = tally.version
    tally.on_event(RunFinished("r1", "m", "interrupted", {}, "interrupted by the user"))
    assert tally.version > before and tally.snapshot()[0].state == "interrupted"


def test_review_queue_follows_the_report_and_skips_stay_waiting(tmp_path):
    from compare_tui.report import build_report, load_report_inputs
    from compare_tui.tui.review_queue import FLAGGED, next_position, review_queue, waiting

    store, _ = build_store(tmp_path)
    report = build_report(load_report_inputs(store, COMPARISON_ID))
    queue = review_queue(report, {(RUN_IDS["smollm2-135m"], "ticket-03")})
    # task files load in file-name order: the reply tasks come first
    assert [(i.task_id, i.label) for i in queue] == [
        ("reply-01", "smollm2-135m"),
        ("reply-01", "gemma3-270m"),
        ("reply-02", "smollm2-135m"),
        ("reply-02", "gemma3-270m"),
        ("ticket-03", "smollm2-135m"),
    ]
    assert queue[-1].reason == FLAGGED and waiting(queue) == 4
    store.add_review(ReviewRecord(run_id=RUN_IDS["smollm2-135m"], task_id="reply-01", verdict="skip", reviewer="t"))
    store.add_review(ReviewRecord(run_id=RUN_IDS["gemma3-270m"], task_id="reply-01", verdict="pass", reviewer="t"))
    after = review_queue(build_report(load_report_inputs(store, COMPARISON_ID)))
    assert [(i.task_id, i.label, i.verdict) for i in after] == [
        ("reply-01", "smollm2-135m", "skip"),
        ("reply-02", "smollm2-135m", None),
        ("reply-02", "gemma3-270m", None),
    ]
    # deciding gemma's reply-01 (index 1 of the old queue) moves on to the item that followed it
    assert next_position(queue, 1, after) == 1


def test_run_pair_diff_takes_its_statistics_from_the_report(tmp_path):
    from compare_tui.diff import read_run_pair
    from compare_tui.report.paired import paired

    store, _ = build_store(tmp_path)
    diff = read_run_pair(store, RUN_IDS["smollm2-135m"], RUN_IDS["gemma3-270m"])
    assert diff.same_set and not diff.problems
    assert diff.paired == paired(diff.a, diff.b)
    # an error counts as not passed (scored), so ticket-10 is a flip to B
    assert (diff.paired.both, diff.paired.only_a, diff.paired.only_b, diff.paired.neither) == (6, 1, 2, 1)
    assert [(c.task_id, c.change) for c in diff.changed] == [
        ("ticket-03", "only B passes"),
        ("ticket-08", "only A passes"),
        ("ticket-10", "only B passes"),
    ]
    assert {d.figure for d in diff.deltas} >= {"pass rate", "E2E p50/p95/p99", "cost/completed task"}


def test_a_diff_of_runs_on_different_sets_says_so(tmp_path):
    from compare_tui.diff import read_run_pair

    store, sets = build_store(tmp_path)
    other = load_golden_set(write_mini_set(tmp_path / "other"))
    changed = store.create_run(
        _run("other-model", "d4d4d4d4d4d4d4d4", other).model_copy(update={"goldset_digest": "sha256:" + "f" * 64})
    )
    store.record_attempts(_attempts(changed.id, OUTCOMES["gemma3-270m"]))
    diff = read_run_pair(store, RUN_IDS["smollm2-135m"], changed.id)
    assert not diff.same_set and "no paired verdict across sets" in diff.problems[0]
    assert diff.paired is None  # refused: no "larger than noise" across sets
    assert diff.sets[0].startswith("support-mini 1.0.0 (sha256:") and diff.sets[1].endswith("(sha256:ffffffff)")
    assert diff.sets[0] != diff.sets[1]


def test_spend_preview_refuses_what_the_engine_would(tmp_path):
    from compare_tui.catalogue import load_catalogue
    from compare_tui.engine import RunOverrides
    from compare_tui.tui.spend_preview import preview

    goldset = load_golden_set(write_mini_set(tmp_path / "set"))
    catalogue = load_catalogue(write_catalogue(tmp_path / "models.toml"))
    ok = preview(goldset, [catalogue.get("fake-a")], RunOverrides(attempts=2), max_cost=10.0)
    assert not ok.refused and ok.total_usd is not None and "attempts 2" in ok.settings
    capped = preview(goldset, [catalogue.get("fake-a")], RunOverrides(attempts=2), max_cost=1e-9)
    assert capped.refused and "spend cap" in capped.models[0].refusals[0]
    unpinned = preview(goldset, [catalogue.get("unpinned")], RunOverrides(), max_cost=None)
    assert unpinned.refused and any("revision" in r for r in unpinned.models[0].refusals)
    bad = preview(goldset, [catalogue.get("fake-a")], RunOverrides(concurrency=0), max_cost=None)
    assert bad.refused and "concurrency" in bad.problem


def test_themes_load_and_unknown_names_fall_back(tmp_path):
    from compare_tui.tui.themes import load_themes, resolve_theme_name

    loaded = load_themes()
    names = {t.name for t in loaded.themes}
    assert {"compare-dark", "compare-light", "compare-high-contrast"} <= names and not loaded.problems
    assert resolve_theme_name("light", names) == ("compare-light", None)
    name, problem = resolve_theme_name("nope", names)
    assert name == "compare-dark" and "unknown theme" in problem
    (tmp_path / "bad.toml").write_text('name = "x"\nprimary = "#000"\ncolour = "red"\n')
    assert "unknown field" in load_themes(tmp_path).problems[0]


def test_a_panel_line_repaints_in_place_only_when_it_wraps_the_same():
    from hypothesis import given
    from hypothesis import strategies as st
    from rich.cells import cell_len

    from compare_tui.tui.widgets.model_progress import same_shape

    assert same_shape("✓ pass 9   ✗ fail 10", "✓ pass 8   ✗ fail 11")
    assert not same_shape("✓ pass 9   ✗ fail 10", "✓ pass 10   ✗ fail 10")  # longer: may wrap
    assert not same_shape("a b", "ab ")  # a space moved: words wrap differently
    assert not same_shape("x\ny", "x y")  # a line break is not a space
    assert not same_shape("ab", "a界")  # a wide character takes two cells

    @given(st.text(max_size=40), st.text(max_size=40))
    def same_shape_means_same_cells_and_breaks(old, new):
        if same_shape(old, new):
            assert cell_len(old.replace("\n", "")) == cell_len(new.replace("\n", ""))
            assert [i for i, c in enumerate(old) if c in " \n"] == [i for i, c in enumerate(new) if c in " \n"]

    same_shape_means_same_cells_and_breaks()

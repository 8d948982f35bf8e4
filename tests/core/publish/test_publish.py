"""`compare-tui publish`: the bundle's files, what the page holds (and never holds), byte-identical
re-publishing, the store's record of it (schema v8), the latency distributions it draws, and a
golden file of the page's structure for a fixed store. The browser checks are in
tests/integration/test_publish_browser.py."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from html.parser import HTMLParser
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compare_tui.goldset import load_golden_set
from compare_tui.publish import CONTENT_SECURITY_POLICY
from compare_tui.report import build_report, load_report_inputs, render_json
from compare_tui.report.distribution import BINS, QUANTILE_STEPS, latency_distributions
from compare_tui.store import (
    AttemptRecord,
    BundleRecord,
    ComparisonRecord,
    ReviewRecord,
    Store,
    schema,
)
from tests.core.experiment.test_experiment_cli import new, run, world  # noqa: F401  (world is a fixture)
from tests.core.experiment.test_experiment_helpers import cli
from tests.core.report.test_report import make_run

REPO = Path(__file__).resolve().parents[3]
SAMPLE = REPO / "sample_sets" / "support-triage"
GOLDEN = REPO / "tests" / "golden" / "publish_structure.txt"
SECRET = "sk-proj-abcdefghijklmnopqrstuvwxyz012345"
VIRTUAL = "vk-team-0123456789abcdef"


def fill_store(path: Path) -> Path:
    """A fixed comparison of two runs over the sample set (answers with HTML and a key in them,
    a person's review, a named baseline): the same store every time."""
    goldset = load_golden_set(SAMPLE)
    with Store.open(path) as store:
        for run_id, model, step in (("run-a", "smollm2-135m", 3), ("run-b", "gemma3-270m", 2)):
            store.create_run(
                make_run(
                    run_id,
                    model,
                    goldset_path=str(SAMPLE),
                    goldset_digest=goldset.digest,
                    task_count=len(goldset.tasks),
                    created_at="2026-01-01T00:00:00Z",
                    model_entry={
                        "kind": "local",
                        "key_env": "WT17_TEST_KEY",
                        "serving": {"stack": "llama.cpp", "quantisation": "Q4_1"},
                    },
                )
            )
            records = []
            for i, task in enumerate(goldset.tasks):
                human = goldset.scorer_for(task).kind == "human"
                outcome = "review" if human else ("pass" if i % step else "fail")
                records.append(
                    AttemptRecord(
                        run_id=run_id,
                        task_id=task.id,
                        attempt=1,
                        outcome=outcome,
                        answer_text=f"<b>answer {i}</b> {SECRET} {VIRTUAL}",
                        score_detail="exact match" if outcome == "pass" else "expected 'billing', got 'bug'",
                        ttft_ms=20.0 + i * 3 * step,
                        e2e_ms=100.0 + i * 7 * step,
                        prompt_tokens=40,
                        completion_tokens=5,
                    )
                )
            store.record_attempts(records)
        store.add_review(
            ReviewRecord(
                run_id="run-a",
                task_id="reply-01",
                verdict="pass",
                note="kind enough",
                reviewer="ana",
                at="2026-01-02T00:00:00Z",
            )
        )
        store.create_comparison(
            ComparisonRecord(
                id="cmp-1",
                name="triage bake-off",
                run_ids=["run-a", "run-b"],
                baseline="gemma3-270m",
                created_at="2026-01-03T00:00:00Z",
            )
        )
    return path


@pytest.fixture
def store_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("WT17_TEST_KEY", VIRTUAL)
    return fill_store(tmp_path / "runs.sqlite")


def publish(store_path: Path, out: Path, *extra: str, ref: str = "latest"):
    return cli("publish", ref, "--out", str(out), "--store", str(store_path), *extra)


# ------------------------------------------------------------------ the files


def _attributes(page: str) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []

    class Collect(HTMLParser):
        def handle_starttag(self, tag, attrs):
            found.extend((name, value or "") for name, value in attrs)

    Collect().feed(page)
    return found


def test_publish_writes_the_page_and_the_reports_own_json_and_prints_the_path(store_path, tmp_path):
    result = publish(store_path, tmp_path / "bundle")
    assert result.code == 0, result.err
    index = tmp_path / "bundle" / "index.html"
    assert f"published comparison cmp-1: {index}" in result.out
    report_json = cli("report", "cmp-1", "--format", "json", "--store", str(store_path)).out
    assert (tmp_path / "bundle" / "report.json").read_text(encoding="utf-8") == report_json
    page = index.read_text(encoding="utf-8")
    doc = json.loads(report_json)
    # The figures, verdicts and task ids the report has are on the page.
    assert doc["decision"]["summary"] in page and doc["recommendation"]["summary"] in page
    for task_id in doc["task_ids"]:
        assert f"<th scope=row tabindex=0>{task_id}<td" in page
    assert doc["goldset"]["digest"] in page
    for caveat in doc["caveats"]:
        assert caveat["text"].replace("'", "&#x27;") in page
    assert 'id="plot-ttft_ms-ecdf"' in page and 'id="plot-e2e_ms-histogram"' in page
    assert 'id="plot-utilisation"' in page and 'id="versus-table"' in page


def test_the_page_is_self_contained_and_its_policy_allows_nothing_outside_it(store_path, tmp_path):
    publish(store_path, tmp_path / "b")
    page = (tmp_path / "b" / "index.html").read_text(encoding="utf-8")
    assert (
        f'<meta http-equiv="Content-Security-Policy" content="{CONTENT_SECURITY_POLICY.replace(chr(39), "&#x27;")}">'
        in page
    )
    assert CONTENT_SECURITY_POLICY.startswith("default-src 'none';")
    assert "unsafe-inline" not in CONTENT_SECURITY_POLICY and "unsafe-eval" not in CONTENT_SECURITY_POLICY
    # No attribute points anywhere: links are in-page anchors only, and nothing is loaded.
    attributes = _attributes(page)
    assert {"src", "srcset", "action", "formaction", "poster", "data", "background"} & {
        a for a, _ in attributes
    } == set()
    assert {value[:1] for name, value in attributes if name == "href"} == {"#"}
    assert "<link" not in page and "@import" not in page and "url(" not in page


def test_answers_are_escaped_and_secrets_never_appear(store_path, tmp_path):
    publish(store_path, tmp_path / "b")
    page = (tmp_path / "b" / "index.html").read_text(encoding="utf-8")
    # Answers travel as data for the page's script, with `<` escaped so none can close it.
    assert "\\u003cb>answer 0\\u003c/b>" in page and "<b>answer" not in page
    assert SECRET not in page and VIRTUAL not in page and "[redacted]" in page
    assert '["pass","kind enough","ana","2026-01-02T00:00:00.000000Z"]' in page
    assert SECRET not in (tmp_path / "b" / "report.json").read_text()


def test_no_answers_leaves_out_inputs_and_answers_but_keeps_the_matrix(store_path, tmp_path):
    publish(store_path, tmp_path / "full")
    result = publish(store_path, tmp_path / "lean", "--no-answers")
    assert result.code == 0, result.err
    lean = (tmp_path / "lean" / "index.html").read_text(encoding="utf-8")
    full = (tmp_path / "full" / "index.html").read_text(encoding="utf-8")
    assert "answer 0" in full and "answer 0" not in lean
    assert "I was charged twice" in full and "I was charged twice" not in lean
    assert "Published with --no-answers" in lean and "<th scope=row>refund-01<td" in lean
    assert 'id="task-details"' not in lean and 'id="open-all"' not in lean
    assert len(lean) < len(full)


def test_re_publishing_the_same_rows_gives_the_same_bytes_and_each_bundle_is_recorded(store_path, tmp_path):
    publish(store_path, tmp_path / "one")
    publish(store_path, tmp_path / "two")
    one, two = (tmp_path / n / "index.html" for n in ("one", "two"))
    assert one.read_bytes() == two.read_bytes()
    assert (tmp_path / "one" / "report.json").read_bytes() == (tmp_path / "two" / "report.json").read_bytes()
    with Store.open(store_path) as store:
        bundles = store.list_bundles("cmp-1")
    assert [b.path for b in bundles] == [str(tmp_path / "two"), str(tmp_path / "one")]
    digest = "sha256:" + hashlib.sha256(one.read_bytes()).hexdigest()
    assert {b.sha256 for b in bundles} == {digest}
    assert all(b.kind == "comparison" and b.answers and b.size_bytes == one.stat().st_size for b in bundles)
    listing = cli("publish", "--list", "--store", str(store_path))
    assert listing.code == 0 and listing.out.count("comparison cmp-1") == 2


def test_a_single_run_is_published_as_a_run(store_path, tmp_path):
    result = publish(store_path, tmp_path / "r", ref="run-b")
    assert result.code == 0, result.err
    assert "published run run-b" in result.out
    with Store.open(store_path) as store:
        assert store.list_bundles("run-b")[0].kind == "run"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("publish", "nope", "--out", "X"), "no comparison or run with id 'nope'"),
        (("publish", "latest"), "--out DIR"),
        (("publish", "--out", "X"), "give what to publish"),
        (("publish", "--experiment", "missing", "--out", "X"), "no experiment named 'missing'"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(store_path, tmp_path, args, message):
    args = tuple(str(tmp_path / "x") if a == "X" else a for a in args)
    result = cli(*args, "--store", str(store_path))
    assert result.code == 2 and message in result.err and "Traceback" not in result.err
    assert not (tmp_path / "x").exists()


def test_an_empty_out_is_refused_rather_than_read_as_the_current_folder(store_path, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = cli("publish", "latest", "--out", "", "--store", str(store_path))
    assert result.code == 2 and "--out is empty" in result.err and "Traceback" not in result.err
    assert not (tmp_path / "index.html").exists() and not (tmp_path / "report.json").exists()


def test_the_help_fits_80_columns_and_has_examples_and_exit_codes(capsys, monkeypatch):
    from compare_tui.cli import main

    monkeypatch.setenv("COLUMNS", "80")
    with pytest.raises(SystemExit):
        main(["publish", "--help"])
    out = capsys.readouterr().out
    assert "examples:" in out and "exit codes:" in out and "--no-answers" in out
    assert [line for line in out.splitlines() if len(line) > 80] == []


def test_an_out_that_is_a_file_is_refused(store_path, tmp_path):
    (tmp_path / "file").write_text("x")
    result = publish(store_path, tmp_path / "file")
    assert result.code == 2 and "is a file, not a folder" in result.err


# ------------------------------------------------------------------ experiments


def test_an_experiment_is_published_with_its_intervals_flaky_tasks_and_json(world, tmp_path):  # noqa: F811
    assert new(world).code == 0 and run(world).code == 0
    out = tmp_path / "exp"
    result = cli("publish", "--experiment", "e1", "--out", str(out), "--store", world["store"])
    assert result.code == 0, result.err
    assert "published experiment e1" in result.out
    shown = cli("experiment", "show", "e1", "--json", "--store", world["store"]).out
    assert (out / "report.json").read_text() == shown
    page = (out / "index.html").read_text(encoding="utf-8")
    assert 'id="arms-table"' in page and "95% CI" in page and 'id="plot-arms"' in page
    assert '<ul id="flaky-list"><li>alpha: t2</li></ul>' in page
    assert "<th scope=row>t2<td class=r>2/3" in page
    again = cli("publish", "--experiment", "e1", "--out", str(tmp_path / "again"), "--store", world["store"])
    assert again.code == 0 and (tmp_path / "again" / "index.html").read_bytes() == (out / "index.html").read_bytes()


def test_an_experiments_confound_is_a_banner_on_its_page(world, tmp_path):  # noqa: F811
    assert new(world).code == 0 and run(world).code == 0
    world["beta"].props = {**world["beta"].props, "build_info": "b10000-rebuilt"}
    assert run(world, "e1", "--repeats", "4").code == 0  # beta's fourth run is on another server build
    out = tmp_path / "exp"
    assert cli("publish", "--experiment", "e1", "--out", str(out), "--store", world["store"]).code == 0
    page = (out / "index.html").read_text(encoding="utf-8")
    assert '<section id="confounds">' in page and '<a href="#confounds">Confounds</a>' in page
    banner = page.split('<p class="banner" role="alert">⚠ ', 1)[1].split("</p>", 1)[0]
    assert banner.startswith("beta: server build differs across its runs") and "b10000-rebuilt" in banner


def test_the_runs_section_shows_provenance_gpu_memory_environment_and_serving_notes(tmp_path, monkeypatch):
    monkeypatch.setenv("WT17_TEST_KEY", VIRTUAL)
    with Store.open(tmp_path / "runs.sqlite") as store:
        for run_id, model, provenance, gpu in (
            (
                "run-a",
                "local-a",
                "verified",
                {"measured": True, "devices": [{"index": 0, "peak_bytes": 3 * 2**30, "baseline_bytes": 2**30}]},
            ),
            (
                "run-b",
                "hosted-b",
                "provenance by host attestation, not verified",
                {"measured": False, "reason": "NVML library not found"},
            ),
        ):
            store.create_run(
                make_run(
                    run_id,
                    model,
                    provenance=provenance,
                    gpu=gpu,
                    environment={
                        "os": "Linux 6.1",
                        "python": "3.11.7",
                        "cpu_count": 2,
                        "server": {"build_info": "b4321", "note": VIRTUAL},
                    },
                    model_entry={
                        "kind": "local",
                        "key_env": "WT17_TEST_KEY",
                        "model": model,
                        "revision": "r1",
                        "serving": {"stack": "llama.cpp", "chat_template": f"built-in {VIRTUAL}"},
                    },
                )
            )
            store.record_attempts(
                [
                    AttemptRecord(
                        run_id=run_id,
                        task_id="t1",
                        attempt=1,
                        outcome="pass",
                        answer_text="billing",
                        ttft_ms=10.0,
                        e2e_ms=50.0,
                    )
                ]
            )
        store.create_comparison(ComparisonRecord(id="cmp-r", name="runs", run_ids=["run-a", "run-b"]))
    assert publish(tmp_path / "runs.sqlite", tmp_path / "b", ref="cmp-r").code == 0
    page = (tmp_path / "b" / "index.html").read_text(encoding="utf-8")
    runs = page.split('<section id="runs">', 1)[1].split("</section>", 1)[0]
    for shown in (
        "<dt>provenance</dt><dd>verified</dd>",
        "<dt>provenance</dt><dd>provenance by host attestation, not verified</dd>",
        "<dt>GPU memory</dt><dd>not measured (NVML library not found)</dd>",
        "<dt>host: os</dt><dd>Linux 6.1</dd>",
        "<dt>host: python</dt><dd>3.11.7</dd>",
        "<dt>serving: stack</dt><dd>llama.cpp</dd>",
        "<dt>serving: chat_template</dt><dd>built-in [redacted]</dd>",
        "<dt>server: build_info</dt><dd>b4321</dd>",
        "<dt>model id</dt><dd>local-a</dd>",
    ):
        assert shown in runs, shown
    # The peak where measured, with where it was read and its devices; else why not (above).
    assert (
        "<dt>GPU memory</dt><dd>high-water mark 3.00 GiB on unnamed GPUs (NVML on this machine, 1 device)</dd>" in runs
    )
    assert VIRTUAL not in page


# ------------------------------------------------------------------ the store (schema v8)


def test_a_v7_store_with_rows_gains_the_bundles_table_and_keeps_its_rows(tmp_path):
    path = tmp_path / "runs.sqlite"
    conn = sqlite3.connect(path)
    for migration in schema.MIGRATIONS[:7]:
        migration(conn)
    conn.execute("INSERT INTO meta VALUES ('app', 'compare-tui'), ('schema_version', '7')")
    conn.execute(
        "INSERT INTO runs (id, status, created_at, goldset_id, model_name) "
        "VALUES ('r1', 'completed', '2026-01-01T00:00:00.000000Z', 'triage', 'm')"
    )
    conn.execute(
        "INSERT INTO attempts (id, run_id, task_id, attempt, outcome, answer_text) "
        "VALUES ('r1:t1:1', 'r1', 't1', 1, 'pass', 'billing')"
    )
    conn.execute(
        "INSERT INTO comparisons (id, name, created_at, baseline) "
        "VALUES ('c1', 'old', '2026-01-01T00:00:00.000000Z', 'm')"
    )
    conn.execute("INSERT INTO comparison_runs VALUES ('c1', 'r1', 0)")
    conn.execute(
        "INSERT INTO decisions (id, workload_id, model, kind, decided_at) "
        "VALUES ('d1', 'triage', 'm', 'initial', '2026-01-01T00:00:00.000000Z')"
    )
    conn.commit()
    conn.close()
    with Store.open(path) as store:
        assert store.schema_version == schema.CURRENT_VERSION >= 8
        assert store.get_comparison("c1").baseline == "m" and store.get_run_exact("r1").model_name == "m"
        assert [a.answer_text for a in store.attempts_for_run("r1")] == ["billing"]
        assert store.current_baseline("triage").model == "m"
        assert store.list_bundles() == []
        record = store.record_bundle(
            BundleRecord(
                kind="comparison",
                ref="c1",
                path="/tmp/b",
                sha256="sha256:" + "0" * 64,
                report_sha256="sha256:" + "1" * 64,
                answers=True,
                size_bytes=10,
            )
        )
        assert store.list_bundles("c1") == [record]


# ------------------------------------------------------------------ the distributions (pure)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.floats(0, 1e6, allow_nan=False), max_size=40), min_size=1, max_size=4))
def test_distributions_share_bins_count_every_value_and_have_monotone_quantiles(values):
    rows = [(f"m{i}", v, list(reversed(v))) for i, v in enumerate(values)]
    for dist in latency_distributions(rows):
        present = [v for _, v, _ in rows if v]
        assert (len(dist.edges) == BINS + 1) == bool(present)
        assert list(dist.edges) == sorted(dist.edges)
        for series, (_, data, _) in zip(dist.series, rows, strict=True):
            assert series.n == len(data) and sum(series.counts) == len(data)
            if data:
                assert len(series.quantiles) == QUANTILE_STEPS + 1
                assert list(series.quantiles) == sorted(series.quantiles)
                assert series.quantiles[0] == pytest.approx(min(data), abs=1e-3)
                assert series.quantiles[-1] == pytest.approx(max(data), abs=1e-3)
                assert dist.edges[0] <= min(data) + 1e-3 and max(data) <= dist.edges[-1] + 1e-3


def test_the_reports_json_carries_the_distributions_of_the_completed_tasks(store_path):
    with Store.open(store_path) as store:
        report = build_report(load_report_inputs(store, "cmp-1"))
    doc = json.loads(render_json(report))
    ttft, e2e = doc["latency_distributions"]
    assert (ttft["metric"], e2e["metric"]) == ("ttft_ms", "e2e_ms")
    for row, series in zip(doc["models"], ttft["series"], strict=True):
        assert series["model"] == row["model"] and series["n"] == row["latency"]["ttft_ms"]["n"]
        assert series["quantiles_ms"][50] == pytest.approx(row["latency"]["ttft_ms"]["p50"], abs=1e-3)


# ------------------------------------------------------------------ golden file of the structure


class _Outline(HTMLParser):
    """Sections, headings, tables (id and header cells), plots and the task rows' ids and classes:
    what a reader navigates by, without the figures' exact text."""

    def __init__(self) -> None:
        super().__init__()
        self.lines: list[str] = []
        self._capture: str | None = None
        self._text = ""

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag in ("section", "table", "svg", "form", "div", "script") and a.get("id"):
            self.lines.append(f"{tag}#{a['id']}")
        elif tag == "tbody" and a.get("class") is not None:
            self.lines.append(f"  task-row .{a['class'] or '-'}")
        elif tag == "meta" and a.get("http-equiv"):
            self.lines.append(f"meta {a['http-equiv']}")
        if tag in ("h1", "h2", "h3") or (tag == "th" and a.get("scope") in ("col", "row")):
            self._capture, self._text = tag, ""

    def handle_data(self, data):
        if self._capture:
            self._text += data

    def handle_endtag(self, tag):
        self._flush()

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)

    def _flush(self):
        if self._capture:
            self.lines.append(f"    {self._capture}: {self._text.strip()}")
            self._capture = None

    def outline(self, page: str) -> str:
        # `<th scope=row>` cells end implicitly at the next tag: flush on every start tag.
        original = self.handle_starttag

        def start(tag, attrs):
            self._flush()
            original(tag, attrs)

        self.handle_starttag = start  # type: ignore[method-assign]
        self.feed(page)
        self._flush()
        return "\n".join(self.lines) + "\n"


def test_the_page_structure_of_a_fixed_store_matches_the_golden_file(store_path, tmp_path):
    publish(store_path, tmp_path / "b")
    outline = _Outline().outline((tmp_path / "b" / "index.html").read_text(encoding="utf-8"))
    if not GOLDEN.exists():  # first run: write it, and fail so that it is looked at
        GOLDEN.write_text(outline, encoding="utf-8")
        pytest.fail(f"wrote {GOLDEN}: check it and run again")
    assert outline == GOLDEN.read_text(encoding="utf-8")

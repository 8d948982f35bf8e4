"""Renderers show the report's figures, never figures of their own: every format agrees."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from rich.console import Console

from compare_tui.report import (
    SCHEMA,
    AttemptFacts,
    ReportInputs,
    RunInput,
    build_report,
    render_json,
    render_junit,
    render_md,
    report_document,
)
from compare_tui.report import formatting as fmt
from compare_tui.report.render_text import render_text
from compare_tui.report.stats import PAIRED_METHOD
from tests.core.report.test_report import TOKEN_PRICE, attempts, inputs, make_run, one

SCHEMA_DOC = Path(__file__).resolve().parents[3] / "compare_tui" / "report" / "SCHEMA.md"


@pytest.fixture(scope="module")
def report():
    a = RunInput(
        make_run(),
        attempts("pppppppffe") + (AttemptFacts("h1", 1, "review"), AttemptFacts("h2", 1, "review")),
        {"h2": "fail"},
    )
    b = RunInput(
        make_run("run-b", "model-b", cost_basis=TOKEN_PRICE, model_entry={"kind": "hosted"}, gpu=None),
        attempts("ppppfffeee"),
    )
    c = RunInput(make_run("run-c", "model-c", provenance=None), attempts("p"))
    return build_report(inputs(a, b, c, task_kinds={"h1": "human", "h2": "human"}))


def text_of(report) -> str:
    console = Console(record=True, width=160, color_system=None)
    console.print(render_text(report))
    return console.export_text()


def test_json_has_the_schema_and_the_reports_numbers(report):
    doc = json.loads(render_json(report))
    assert (doc["schema"], doc["schema_version"]) == (SCHEMA, 3)
    assert doc == report_document(report)  # the text round-trips
    by_label = {m["label"]: m for m in doc["models"]}
    for row in report.models:
        m = by_label[row.label]
        assert m["pass_rate"]["rate"] == row.pass_rate.rate
        assert m["pass_rate"]["ci95"] == {"low": row.pass_rate.interval.low, "high": row.pass_rate.interval.high}
        assert m["latency"]["e2e_ms"]["p95"] == row.latency.e2e_ms.p95
        assert m["cost"]["per_completed_task"] == row.cost.per_task
        assert [t["status"] for t in m["tasks"]] == [b.status for b in row.blocks]
        assert [t["id"] for t in m["tasks"]] == doc["task_ids"]
    assert doc["refused"] == [
        {"run_id": "run-c", "model": "model-c", "label": "model-c", "reason": report.refused[0].reason}
    ]
    assert doc["recommendation"]["confidence"] == report.recommendation.confidence
    assert doc["paired"][0]["flips"]["both"] == report.paired[0].both
    assert doc["paired"][0]["ci_method"] == PAIRED_METHOD and "seed" not in doc["paired"][0]
    assert [c["code"] for c in doc["caveats"]] == [c.code for c in report.caveats]


def test_json_cost_fields_follow_the_basis(report):
    doc = report_document(report)
    hardware, priced = doc["models"]
    assert {"per_hour", "gpu_count", "duration_s", "utilisation"} <= hardware["cost"].keys()
    assert "captured" not in hardware["cost"]
    assert priced["cost"]["captured"] == "2026-11-30" and "utilisation" not in priced["cost"]


def test_schema_doc_names_every_field_the_json_writes(report):
    doc = report_document(report)
    documented = SCHEMA_DOC.read_text(encoding="utf-8")
    names = set(doc) | set(doc["recommendation"]) | set(doc["paired"][0]) | set(doc["refused"][0])
    for model in doc["models"]:
        names |= set(model) | set(model["cost"]) | set(model["pass_rate"]) | set(model["counts"])
        names |= set(model["tokens"]) | set(model["gpu_memory"]) | set(model["latency"]) | set(model["tasks"][0])
    missing = sorted(name for name in names if f"`{name}`" not in documented)
    assert not missing, f"SCHEMA.md does not document: {missing}"


def test_markdown_shows_the_same_figures(report):
    md = render_md(report)
    assert md.startswith(f"# {report.title}\n")
    assert report.recommendation.summary in md and report.recommendation.label in md
    for row in report.models:
        assert fmt.pass_rate(row.pass_rate) in md
        assert fmt.interval(row.pass_rate.interval) in md
        assert fmt.latency(row.latency.e2e_ms) in md
        assert fmt.cost_per_task(row.cost) in md
    for caveat in report.caveats:
        assert caveat.text in md
    assert report.refused[0].reason in md
    assert report.paired[0].sentence in md


def test_markdown_task_grid_names_each_task(report):
    """A reader can tell which task failed for which model: one row per task, by its id."""
    md = render_md(report)
    rows = md.split("## Tasks\n", 1)[1].split("\n\n", 1)[0].strip().splitlines()
    assert rows[0] == "| task | " + " | ".join(row.label for row in report.models) + " |"
    assert len(rows) == 2 + len(report.task_ids)
    for n, task_id in enumerate(report.task_ids):
        marks = " | ".join(fmt.MARKS[row.blocks[n].status] for row in report.models)
        assert rows[2 + n] == f"| `{task_id}` | {marks} |"
    # model-a's failures ("pppppppffe", and h2 failed by a reviewer) are named by their ids.
    failed = [line.split("`")[1] for line in rows[2:] if line.split(" | ")[1] == fmt.MARKS["fail"]]
    assert failed == ["h2", "t07", "t08"]


def test_text_confidence_is_spelled_as_everywhere_else(report):
    """One spelling of the confidence: the text report's is the JSON's and the page's."""
    level = json.loads(render_json(report))["recommendation"]["confidence"]
    assert f"confidence: {level}" in text_of(report)
    assert f"confidence: {level.upper()}" not in text_of(report)


def test_markdown_escapes_pipes_in_cells():
    report = build_report(inputs(one("p", model="a|b")))
    assert "a\\|b" in render_md(report)


def test_junit_parses_and_counts_match_the_report(report):
    root = ET.fromstring(render_junit(report))
    suites = root.findall("testsuite")
    assert [s.get("name") for s in suites] == [r.label for r in report.models]
    for suite, row in zip(suites, report.models, strict=True):
        cases = suite.findall("testcase")
        assert len(cases) == int(suite.get("tests")) == len(report.task_ids)
        failures = sum(1 for c in cases if c.find("failure") is not None)
        errors = sum(1 for c in cases if c.find("error") is not None)
        skipped = [c.find("skipped").get("message") for c in cases if c.find("skipped") is not None]
        assert failures == int(suite.get("failures")) == row.counts.failed
        assert errors == int(suite.get("errors")) == row.counts.errored
        assert len(skipped) == int(suite.get("skipped")) == row.counts.review + row.counts.missing
        props = {p.get("name"): p.get("value") for p in suite.iter("property")}
        assert props["pass_rate"] == fmt.pass_rate(row.pass_rate)
        assert props["provenance"] == row.provenance
    a_cases = {c.get("name"): c for c in suites[0].findall("testcase")}
    assert a_cases["h1"].find("skipped").get("message") == "needs review"
    assert a_cases["h2"].find("failure").get("message") == "failed by a reviewer"
    assert int(root.get("failures")) == sum(r.counts.failed for r in report.models)


def test_text_shows_the_same_figures_and_marks_without_colour(report):
    text = text_of(report)
    assert "confidence: low" in text
    assert report.recommendation.summary in text
    for row in report.models:
        assert fmt.pass_rate(row.pass_rate) in text
        assert fmt.latency(row.latency.ttft_ms) in text
        assert fmt.cost_per_task(row.cost) in text
        # The marks carry the status even with no colour at all.
        assert "".join(fmt.MARKS[b.status] for b in row.blocks) in text
    assert "! error (scorer or request failed)" in text and "? needs a person" in text
    assert "model-c" in text and "no provenance label" in text
    assert "within noise" in text or "larger than noise" in text


def test_text_blocks_are_coloured_by_status():
    from compare_tui.report.render_text import STATUS_STYLES, block_line

    row = build_report(inputs(one("ppfe"))).models[0]
    line = block_line(row)
    assert line.plain == "✓✓✗!"
    assert [(span.start, span.end, span.style) for span in line.spans] == [
        (0, 2, STATUS_STYLES["pass"]),
        (2, 3, STATUS_STYLES["fail"]),
        (3, 4, STATUS_STYLES["error"]),
    ]
    assert len(set(STATUS_STYLES.values())) == len(STATUS_STYLES)


@pytest.mark.parametrize(
    "built",
    [
        ReportInputs(runs=()),
        inputs(RunInput(make_run())),
        inputs(one("eeee")),
        inputs(one("ppp", cost_basis=None)),
    ],
    ids=["no runs", "empty run", "all errors", "only a refused row"],
)
def test_every_renderer_copes_with_thin_reports(built):
    report = build_report(built)
    assert json.loads(render_json(report))["schema_version"] == 3
    assert report.recommendation.summary in render_md(report)
    ET.fromstring(render_junit(report))
    assert "No recommendation" in text_of(report)


def test_formatting_spellings():
    assert fmt.money(0.0000187) == "$0.0000187"
    assert fmt.money(0.5) == "$0.5"
    assert fmt.money(1234.5) == "$1,234.50"
    assert fmt.money(0) == "$0"
    assert fmt.money(2.0, "EUR") == "EUR 2.00"
    assert fmt.money(None) == "–"
    assert fmt.byte_size(3 * 2**30) == "3.00 GiB" and fmt.byte_size(512) == "512 B"
    assert fmt.percent(0.8) == "80.0%"

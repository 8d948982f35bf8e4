"""The one report assembly (`compare_tui.assembly`): every surface reads a view's report through
it, with the store open once; the grid alone for one-line views; one JSON document."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from compare_tui.assembly import ReportChoices, assemble_report, report_json_document, report_rows
from compare_tui.cli import main
from compare_tui.commands.run import _summary
from compare_tui.publish import publish_report
from compare_tui.report import build_report, load_report_inputs
from compare_tui.store import ComparisonRecord, ReviewRecord, Store
from tests.core.report.test_report_load import record


@pytest.fixture
def store(tmp_path: Path):
    with Store.open(tmp_path / "runs.sqlite") as s:
        record(s, "run-a", "model-a", "p" * 10 + "f" * 19 + "r")
        record(s, "run-b", "model-b", "p" * 29 + "r")
        s.add_review(ReviewRecord(run_id="run-a", task_id="t29", verdict="pass"))
        s.create_comparison(
            ComparisonRecord(id="cmp-1", name="bake-off", run_ids=["run-a", "run-b"], baseline="model-a")
        )
        yield s


@pytest.mark.parametrize("fmt", ["text", "json", "md", "junit"])
def test_the_report_command_opens_the_store_once(store, fmt, monkeypatch, capsys):
    # It opened it twice (three times for Markdown: the report, the insights, the grades).
    opened = []
    real_open = Store.open

    def counting(path, *args, **kwargs):
        opened.append(path)
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(Store, "open", staticmethod(counting))
    assert main(["report", "cmp-1", "--store", str(store.path), "--format", fmt]) == 0
    assert len(opened) == 1
    assert capsys.readouterr().out


def test_the_rows_are_the_reports_own(store):
    report = build_report(load_report_inputs(store, "cmp-1"))
    rows = report_rows(store, "cmp-1")
    assert (rows.task_ids, rows.models, rows.refused) == (report.task_ids, report.models, report.refused)
    assert [row.awaiting_review for row in rows.models] == [(), ("t29",)]


def test_choices_reframe_the_view_as_the_report_command_does(store):
    view = assemble_report(store, "cmp-1", ReportChoices(baseline="model-b", margin_pp=2.0), grades=False)
    assert view.inputs.baseline == "model-b" and view.inputs.baseline_source == "after_data"
    assert view.report.decision is not None and view.report.decision.margin_pp == 2.0
    assert view.insights is None and view.grades == ()
    assert assemble_report(store, "cmp-1", insights=True).insights is not None


def test_report_json_and_the_bundles_report_json_are_one_document(store, tmp_path, capsys):
    assert main(["report", "cmp-1", "--store", str(store.path), "--format", "json"]) == 0
    written = capsys.readouterr().out
    published = publish_report(store, "cmp-1", tmp_path / "bundle")
    assert published.report.read_text(encoding="utf-8") == written
    view = assemble_report(store, "cmp-1", insights=True)
    document = report_json_document(view.report, view.grades, None, view.insights)
    assert json.loads(written) == view.document() == document and "insights" in document


def test_run_json_carries_the_decisions_action_and_chosen_model_as_the_report_does(store, capsys):
    summary = _summary(store, "cmp-1", [], [])
    assert main(["report", "cmp-1", "--store", str(store.path), "--format", "json"]) == 0
    decision = json.loads(capsys.readouterr().out)["decision"]
    assert decision["action"] == "switch" and decision["chosen"] == "model-b"
    assert (summary["decision"], summary["decision_action"], summary["decision_chosen"]) == (
        decision["summary"],
        decision["action"],
        decision["chosen"],
    )
    assert json.loads(json.dumps(summary))["decision_action"] == "switch"

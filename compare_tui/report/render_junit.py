"""The report as JUnit XML, for CI systems that display test results.

One `<testsuite>` per shown model, one `<testcase>` per task: `fail` → `<failure>`,
`error` → `<error>`, `review` → `<skipped message="needs review">`, not done →
`<skipped message="not done">`. A task a person decided reads as pass or failure (the failure
says so). Suite properties carry the pass rate, provenance and the report's confidence.
With a baseline, one more suite, `versus <baseline>`, has one `<testcase>` per candidate
verdict: `worse` → `<failure>`, `inconclusive` → `<skipped>`, `better` and `no worse` pass.
When a CI gate is given (`report.gate`), one more suite, `gate`, has one `<testcase>` per
option checked: a failure for each reason, and a rule-based gate met while the paired test
disagrees carries its warning in a `warning` property and its `<system-err>`.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from compare_tui.report import formatting as fmt
from compare_tui.report.decision import Verdict
from compare_tui.report.figures import Block, ModelFigures
from compare_tui.report.gate import GateResult
from compare_tui.report.model import Report
from compare_tui.report.text_calls import caveat_texts
from compare_tui.vocabulary import MISSING, Outcome


def render_junit(report: Report, gate: GateResult | None = None) -> str:
    """The report as a JUnit XML document (UTF-8 text with an XML declaration), with the
    `gate` suite when a gate was checked."""
    root = ET.Element("testsuites", name=f"compare-tui report: {report.title}")
    totals = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    for row in report.models:
        suite = _suite(row, report)
        root.append(suite)
        for key in totals:
            totals[key] += int(suite.get(key, "0"))
    if report.decision is not None:
        suite = _decision_suite(report)
        root.append(suite)
        for key in totals:
            totals[key] += int(suite.get(key, "0"))
    if gate is not None and gate.checks:
        suite = _gate_suite(gate)
        root.append(suite)
        for key in totals:
            totals[key] += int(suite.get(key, "0"))
    for key, value in totals.items():
        root.set(key, str(value))
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def _suite(row: ModelFigures, report: Report) -> ET.Element:
    counts = {"failures": 0, "errors": 0, "skipped": 0}
    suite = ET.Element("testsuite", name=row.label)
    properties = ET.SubElement(suite, "properties")
    for name, value in (
        ("run_id", row.run_id),
        ("provenance", row.provenance),
        ("pass_rate", fmt.pass_rate(row.pass_rate)),
        ("pass_rate_ci95", fmt.interval(row.pass_rate.interval)),
        ("cost_per_completed_task", fmt.cost_per_task(row.cost)),
        ("recommendation", report.recommendation.summary),
        *((code, text) for code, text in caveat_texts(row.label, row.text_calls)),
        *((("rating_note", report.rating_note),) if report.rating_note else ()),
    ):
        ET.SubElement(properties, "property", name=name, value=value)
    for block in row.blocks:
        case = ET.SubElement(suite, "testcase", name=block.task_id, classname=row.label)
        key = _outcome_element(case, block)
        if key:
            counts[key] += 1
    suite.set("tests", str(len(row.blocks)))
    for name, count in counts.items():
        suite.set(name, str(count))
    return suite


def _decision_suite(report: Report) -> ET.Element:
    decision = report.decision
    assert decision is not None
    suite = ET.Element("testsuite", name=f"versus {decision.baseline}")
    properties = ET.SubElement(suite, "properties")
    for name, value in (
        ("baseline", decision.baseline),
        ("margin_pp", f"{decision.margin_pp:g}"),
        ("margin", decision.margin_words),
        ("level", fmt.level(decision.level)),
        *((("multiplicity", decision.multiplicity),) if decision.multiplicity else ()),
        ("rule", decision.rule),
        ("summary", decision.summary),
        ("action", str(decision.action)),
        *((("rating_note", report.rating_note),) if report.rating_note else ()),
    ):
        ET.SubElement(properties, "property", name=name, value=value)
    counts = {"failures": 0, "skipped": 0}
    for v in decision.versus:
        case = ET.SubElement(suite, "testcase", name=f"{v.candidate} vs {decision.baseline}", classname="verdict")
        message = (
            f"{v.verdict_words(decision.margin_pp) if v.verdict else 'no verdict'}: Δ pass "
            f"{fmt.signed(v.delta_pp, ' pts')}, {fmt.level(v.level)} CI {fmt.points_interval(v.interval_pp)}, "
            f"{decision.margin_words}"
        )
        if v.verdict == Verdict.WORSE:
            ET.SubElement(case, "failure", message=message, type="worse")
            counts["failures"] += 1
        elif v.verdict in (Verdict.INCONCLUSIVE, None):
            ET.SubElement(case, "skipped", message=message)
            counts["skipped"] += 1
        else:
            ET.SubElement(case, "system-out").text = message
    suite.set("tests", str(len(decision.versus)))
    suite.set("errors", "0")
    for name, count in counts.items():
        suite.set(name, str(count))
    return suite


def _gate_suite(gate: GateResult) -> ET.Element:
    suite = ET.Element("testsuite", name="gate")
    failures = 0
    for check in gate.checks:
        case = ET.SubElement(suite, "testcase", name=check.option, classname="gate")
        if check.warnings:
            properties = ET.SubElement(case, "properties")
            for warning in check.warnings:
                ET.SubElement(properties, "property", name="warning", value=warning)
            ET.SubElement(case, "system-err").text = "\n".join(f"warning: {w}" for w in check.warnings)
        if check.reasons:
            ET.SubElement(case, "failure", message="; ".join(check.reasons), type="gate")
            failures += 1
    for name, value in (("tests", len(gate.checks)), ("failures", failures), ("errors", 0), ("skipped", 0)):
        suite.set(name, str(value))
    return suite


def _outcome_element(case: ET.Element, block: Block) -> str | None:
    """Add the child that says how the task went; return the suite counter it adds to."""
    if block.status == Outcome.FAIL:
        message = "failed by a reviewer" if block.human else block.detail or "the answer did not pass its check"
        ET.SubElement(case, "failure", message=message, type="fail")
        return "failures"
    if block.status == Outcome.ERROR:
        message = block.detail or "nothing was measured (the request or the check errored)"
        ET.SubElement(case, "error", message=message, type="error")
        return "errors"
    if block.status == Outcome.REVIEW:
        ET.SubElement(case, "skipped", message="needs review")
        return "skipped"
    if block.status == MISSING:
        ET.SubElement(case, "skipped", message="not done")
        return "skipped"
    return None

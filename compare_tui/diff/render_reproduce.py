"""The reproduce check as plain text (the CLI) and as a JSON document. Formatting only."""

from __future__ import annotations

from typing import Any

from compare_tui.diff.reproduce import FigureCheck, ReproduceCheck
from compare_tui.report import formatting as fmt

JSON_SCHEMA_VERSION = 1


def _value(check: FigureCheck, value: float | None) -> str:
    if value is None:
        return "—"
    if check.name == "pass_rate":
        return f"{value * 100:.1f} %"
    if check.name == "latency_p50":
        return f"{value:,.1f} ms"
    return f"{value:,.0f}"


def _delta(check: FigureCheck) -> str:
    if check.delta is None:
        return "—"
    if check.name == "pass_rate":
        return fmt.signed(check.delta * 100, " pp")
    if check.name == "agreement":
        return f"{check.delta * 100:.1f} % agree"
    return fmt.number(check.delta * 100, ".2f") + " %"


def _limit(check: FigureCheck) -> str:
    t = check.tolerance
    if check.name == "pass_rate":
        bound = f"|Δ| ≤ {t.limit * 100:g} pp"
    elif check.name == "agreement":
        bound = f"≥ {t.limit * 100:g} %"
    else:
        bound = f"|Δ| ≤ {t.limit * 100:g} % of run A"
    return f"{bound} ({t.source})"


def render_text(check: ReproduceCheck) -> str:
    """The check as lines: differences first, then one line per figure, then changed tasks."""
    lines = [f"reproduce check: {check.model_name} on {check.goldset}: run A {check.run_a} vs run B {check.run_b}"]
    if check.differences:
        lines.append("⚠ these differ between the runs (flagged before comparing):")
        lines += [f"  {d.what}: A {d.a} · B {d.b}" for d in check.differences]
    else:
        lines.append("same settings, server build, chat template, endpoint, serving notes, cost basis")
    lines.append("")
    # A figure over two lines (its tolerance under it), so that the table fits 80 columns.
    lines.append(f"{'figure':<12} {'run A':>12} {'run B':>12} {'delta':>16}  verdict")
    for f in check.figures:
        verdict = "within" if f.within else "OUTSIDE"
        lines.append(f"{f.name:<12} {_value(f, f.a):>12} {_value(f, f.b):>12} {_delta(f):>16}  {verdict}")
        lines.append(f"    tolerance {_limit(f)}" + (f"; {f.note}" if f.note else ""))
    lines.append("")
    if check.changed:
        lines.append(f"tasks whose outcome changed ({len(check.changed)}):")
        lines += [f"  {t.task_id}: {t.status_a} → {t.status_b}" for t in check.changed]
    else:
        lines.append("no task changed its outcome")
    if check.human_tasks:
        lines.append(f"{check.human_tasks} task(s) scored by a person were left out of the agreement")
    if check.reproduced:
        lines.append("verdict: REPRODUCED — every figure is within its tolerance")
    else:
        names = ", ".join(f.name for f in check.outside)
        cause = (
            "; the runs differ in " + ", ".join(d.what for d in check.differences) + " (flagged above), a likely cause"
            if check.differences
            else ""
        )
        lines.append(f"verdict: NOT REPRODUCED — outside tolerance: {names}{cause}")
    return "\n".join(lines) + "\n"


def reproduce_document(check: ReproduceCheck) -> dict[str, Any]:
    """The check as a JSON-ready document (stable keys; schema version 1)."""
    return {
        "schema_version": JSON_SCHEMA_VERSION,
        "run_a": check.run_a,
        "run_b": check.run_b,
        "model": check.model_name,
        "goldset": check.goldset,
        "reproduced": check.reproduced,
        "differences": [{"what": d.what, "a": d.a, "b": d.b} for d in check.differences],
        "figures": [
            {
                "name": f.name,
                "a": f.a,
                "b": f.b,
                "delta": f.delta,
                "within": f.within,
                "note": f.note,
                "tolerance": {"limit": f.tolerance.limit, "text": f.tolerance.text, "source": f.tolerance.source},
            }
            for f in check.figures
        ],
        "changed_tasks": [{"task_id": t.task_id, "a": t.status_a, "b": t.status_b} for t in check.changed],
        "compared_tasks": check.compared_tasks,
        "human_tasks": check.human_tasks,
    }

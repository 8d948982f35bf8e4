"""Text and JSON renderings of tool-call runs, for the CLI (the TUI renders `ScenarioTable`).

Both state what the results do not tell (an agent's success) and label the user's notes as
stated, not verified. Neither computes anything the table model does not already hold.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from typing import Any

from compare_tui.toolcall.results.model import (
    NOT_AN_AGENT_TEST,
    NOTES_LABEL,
    SERVER_NOTES_LABEL,
    ToolcallOutcome,
    ToolcallRun,
    ToolcallRunStatus,
)
from compare_tui.toolcall.results.table import MISSING, ScenarioTable, build_table, detail_lines


def render_text(runs: Sequence[ToolcallRun], *, details: bool = True, width: int = 0) -> str:
    """The scenario table with run headers, the failed checks with their pointers, caveats.
    `width` (a terminal's; 0: none) wraps every line but the grid's on spaces, so no word, id
    or path is cut by the terminal."""
    table = build_table(runs)
    lines: list[str] = ["Tool-call conformance (scenario by scenario; no combined score, no ranking)"]
    for n, (column, run) in enumerate(zip(table.columns, runs), 1):
        # Three short lines rather than one of ~170 columns.
        lines.append(f"[{n}] run {column.run_id}  model {column.model_name} ({run.model_id})")
        lines.append(f"    {column.endpoint}  {column.date}")
        lines.append(
            f"    suite {column.suite_version} {column.suite_digest[:19]}…{'  publishable' if column.publishable else ''}"
            f"{'' if column.status == ToolcallRunStatus.FINISHED else '  status ' + column.status}"
        )
        if column.user_notes:
            shown = ", ".join(f"{k}={v}" for k, v in column.user_notes.items())
            lines.append(f"    serving notes ({NOTES_LABEL}): {shown}")
        lines += [f"    {SERVER_NOTES_LABEL}: {note}" for note in column.server_notes]
        lines += [f"    {line}" for line in (column.serving_line, column.reach_line) if line]
        if run.tools_file:
            lines.append(
                f"    your tools: {run.tools_file.get('path')} ({run.tools_file.get('shape')}, "
                f"{len(run.tools_file.get('tools', []))} tools, {run.tools_file.get('digest', '')[:19]}…)"
            )
        tally = run.counts()
        lines.append("    outcomes: " + ", ".join(f"{tally[o.value]} {o.value}" for o in ToolcallOutcome))
    lines = _wrap(lines, width)
    lines.append("")
    lines += _grid(table)
    lines.append("")
    grid_end = len(lines)
    lines.append(table.legend)
    if details:
        failing = [
            (c, cell)
            for row in table.rows
            for c, cell in zip(table.columns, row.cells)
            if cell is not None and cell.outcome is not ToolcallOutcome.PASS
        ]
        if failing:
            lines.append("")
            lines.append("Details of every scenario that did not pass:")
            for column, cell in failing:
                prefix = f"[{table.columns.index(column) + 1}] " if len(table.columns) > 1 else ""
                body = detail_lines(cell.result)
                lines.append(prefix + body[0])
                lines += body[1:]
    lines.append("")
    lines += [f"note: {c}" for c in table.caveats]
    return "\n".join(lines[:grid_end] + _wrap(lines[grid_end:], width))


def _wrap(lines: list[str], width: int) -> list[str]:
    """Each line wrapped on spaces at `width` (its indent kept, continuations 2 further in)."""
    if width < 40:
        return lines
    out: list[str] = []
    for line in lines:
        lead = line[: len(line) - len(line.lstrip(" "))]
        out += textwrap.wrap(
            line, width, subsequent_indent=lead + "  ", break_long_words=False, break_on_hyphens=False
        ) or [line]
    return out


def _grid(table: ScenarioTable) -> list[str]:
    names = [f"{row.scenario_id} {row.name}" for row in table.rows]
    first = max([len("scenario"), *map(len, names)])
    heads = [f"[{i}] {c.model_name}"[:22] for i, c in enumerate(table.columns, 1)]
    widths = [max(len(h), 13) for h in heads]
    out = ["scenario".ljust(first) + "  " + "  ".join(h.ljust(w) for h, w in zip(heads, widths))]
    for name, row in zip(names, table.rows):
        cells = [
            (cell.text if cell is not None else f"{MISSING} not run").ljust(w) for cell, w in zip(row.cells, widths)
        ]
        out.append(name.ljust(first) + "  " + "  ".join(cells).rstrip())
    return out


def render_json(runs: Sequence[ToolcallRun]) -> dict[str, Any]:
    """Runs as JSON-ready data: each header, its outcome tally and every scenario result."""
    table = build_table(runs)
    return {
        "kind": "compare-tui toolcall",
        "statement": NOT_AN_AGENT_TEST,
        "user_notes_label": NOTES_LABEL,
        "server_notes_label": SERVER_NOTES_LABEL,
        "caveats": list(table.caveats),
        "runs": [
            {
                **run.header_dict(),
                "outcome_counts": run.counts(),
                "results": [(res if run.keep_arguments else res.without_values()).to_dict() for res in run.results],
            }
            for run in runs
        ],
    }

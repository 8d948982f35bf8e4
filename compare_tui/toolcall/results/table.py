"""The scenario table: rows = scenarios, columns = runs (models or serving stacks) side by side.

A pure model for every surface: the CLI's text renderer and the TUI's table screen render
the same `ScenarioTable`, and `detail_lines` is the one detail view of a cell. Every outcome
has a symbol *and* a word, so colour is never the only signal.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from compare_tui.endpoint.account import StoredToolsReach
from compare_tui.toolcall.checks.evaluate import FORCED_STOP
from compare_tui.toolcall.checks.unsupported import UNSUPPORTED_MEANS
from compare_tui.toolcall.results.model import (
    NOT_AN_AGENT_TEST,
    NOTES_LABEL,
    ScenarioResult,
    ToolcallOutcome,
    ToolcallRun,
    ToolcallRunStatus,
    ToolcallServing,
)

FORCED_ONLY = (
    "Your tools were tested with forced calls only (tool_choice naming the tool, or required): a pass says the "
    "server and model can produce a valid call when told to, not that the model calls your tools on its own "
    "(tool_choice auto)."
)

SYMBOLS = {
    ToolcallOutcome.PASS: "✓",
    ToolcallOutcome.FAIL: "✗",
    ToolcallOutcome.UNSUPPORTED: "⊘",
    ToolcallOutcome.ERROR: "!",
}
MISSING = "·"
LEGEND = (
    "✓ pass   ✗ fail   ✗ fail (text): the call was written as text, not parsed by the server   "
    "⊘ unsupported (the serving setup refused the request shape; not the model)   "
    "! error (nothing measured)   · not run"
)


@dataclass(frozen=True, slots=True)
class Column:
    """One run as a column head."""

    run_id: str
    model_name: str
    endpoint: str
    created_at: str
    suite_version: str
    suite_digest: str
    user_notes: dict[str, str]
    server_notes: tuple[str, ...]
    publishable: bool
    status: ToolcallRunStatus
    serving: ToolcallServing = field(default_factory=lambda: ToolcallServing())
    """`ToolcallRun.serving`: template, parser, whether the tools reached the prompt."""

    @property
    def serving_line(self) -> str:
        """`template …; parser …` (what every table and detail names per run), or "" for a run
        stored before compare-tui kept it."""
        if not self.serving:
            return ""
        return (
            f"template {self.serving.get('template', 'not stated')}; parser {self.serving.get('parser', 'not stated')}"
        )

    @property
    def reach_line(self) -> str:
        """Whether the offered tools reached the prompt as the server rendered it, or ""."""
        reach = StoredToolsReach.from_stored(self.serving.get("tools_reach") if self.serving else None)
        if reach is None:
            return ""
        verdict = "yes" if reach.reached else "NO: the model never saw them"
        return f"tools reach the prompt: {verdict} ({reach.how})"

    @property
    def label(self) -> str:
        return f"{self.model_name} {self.run_id[:6]}"

    @property
    def date(self) -> str:
        return self.created_at[:16].replace("T", " ") + " UTC"


@dataclass(frozen=True, slots=True)
class Cell:
    outcome: ToolcallOutcome
    result: ScenarioResult

    @property
    def symbol(self) -> str:
        return SYMBOLS[self.outcome]

    @property
    def text(self) -> str:
        """Symbol and word, e.g. "✗ fail", or "✗ fail (text)" for a call written as text."""
        return f"{self.symbol} {self.outcome.value}{' (text)' if self.result.written_as_text else ''}"


@dataclass(frozen=True, slots=True)
class Row:
    scenario_id: str
    name: str
    title: str
    cells: tuple[Cell | None, ...]
    """One per column; None where that run has no result for the scenario."""


@dataclass(frozen=True, slots=True)
class ScenarioTable:
    columns: tuple[Column, ...]
    rows: tuple[Row, ...]
    caveats: tuple[str, ...]
    legend: str = LEGEND

    def cell(self, row: int, column: int) -> Cell | None:
        return self.rows[row].cells[column]


def build_table(runs: Sequence[ToolcallRun]) -> ScenarioTable:
    """Rows in first-seen scenario order across the runs (the suite's own order)."""
    columns = tuple(
        Column(
            r.id,
            r.model_name,
            r.endpoint,
            r.created_at,
            r.suite_version,
            r.suite_digest,
            dict(r.user_notes),
            tuple(r.server_notes),
            r.publishable,
            r.status,
            r.serving.copy(),
        )
        for r in runs
    )
    by_run = [{res.scenario_id: res for res in run.results} for run in runs]
    order: dict[str, ScenarioResult] = {}
    for run in runs:
        for res in run.results:
            order.setdefault(res.scenario_id, res)
    rows = tuple(
        Row(sid, first.name, first.title, tuple(Cell(m[sid].outcome, m[sid]) if sid in m else None for m in by_run))
        for sid, first in order.items()
    )
    return ScenarioTable(columns, rows, tuple(_caveats(runs)))


def _caveats(runs: Sequence[ToolcallRun]) -> list[str]:
    out = [NOT_AN_AGENT_TEST, "There is no combined score and no ranking: read the table scenario by scenario."]
    results = [res for run in runs for res in run.results]
    if any(res.outcome is ToolcallOutcome.UNSUPPORTED for res in results):
        out.append(UNSUPPORTED_MEANS + ".")
    if len({run.suite_digest for run in runs}) > 1:
        out.append("The runs used different suite versions or digests; rows are matched by scenario id only.")
    if any(run.user_notes for run in runs):
        out.append(f"Serving notes are {NOTES_LABEL}.")
    if any(res.written_as_text for res in results):
        out.append(
            "fail (text): the model wrote the tool call as JSON in its answer's content; the server did not "
            "parse it into tool_calls. Check the chat template and the server's tool parser before blaming the model."
        )
    for run in runs:  # what was printed before sending, kept with the run
        tools_file = run.tools_file or {}
        notes = [str(n) for n in tools_file.get("notes") or []]
        left_out = tools_file.get("left_out") or {}
        if left_out:
            notes.append(f"left out (--skip-invalid-tools): {', '.join(repr(n) for n in left_out)}")
        if notes:
            out.append(f"Your tools in {run.model_name} {run.id[:6]}: " + "; ".join(notes) + ".")
    if any(res.not_checked for res in results):
        out.append("Some schema keywords were not checked (listed per scenario); a pass does not vouch for them.")
    if any(res.approximate for res in results):
        out.append("`pattern` is checked with Python's re, not ECMA-262: approximate.")
    for run in runs:
        gateway = run.settings.get("gateway")
        if gateway and not run.server_notes:
            stated = run.user_notes.get("stack")
            upstream = (
                f"the upstream stack stated in the catalogue is {stated} ({NOTES_LABEL})"
                if stated
                else "no upstream stack is stated (add it to the catalogue's [model.serving], recorded as "
                "stated, not verified)"
            )
            out.append(
                f"{run.model_name} {run.id[:6]} was reached through the {gateway} gateway, which hides the "
                "serving stack's own account (llama.cpp's /props: whether the chat template supports tools; "
                "server timings): a fail or unsupported may be the serving setup's, not the model's; "
                f"{upstream}."
            )
    for run in runs:
        reach = StoredToolsReach.from_stored(run.serving.get("tools_reach"))
        if reach is not None and not reach.reached:
            out.append(
                f"{run.model_name} {run.id[:6]}: the tools did not reach the prompt ({reach.how}): its chat "
                "template drops them, so the model never saw them; a missing call there is the serving setup's, "
                "not the model's."
            )
    forced_stop = [res for res in results if FORCED_STOP in res.notes]
    if forced_stop:
        out.append(
            f'{len(forced_stop)} forced call(s) ended with finish_reason "stop", not "tool_calls" '
            f"({', '.join(sorted({r.scenario_id for r in forced_stop}))}): the call is in the answer, but a client "
            'that waits for finish_reason "tool_calls" before running tools would miss it.'
        )
    if (
        results
        and not any(res.name.startswith("user.auto:") for res in results)
        and any(res.name.startswith("user.named:") for res in results)
    ):
        out.append(FORCED_ONLY)
    if any(run.status != ToolcallRunStatus.FINISHED for run in runs):
        out.append("A run did not finish; its missing scenarios show as · (not run).")
    return out


def detail_lines(result: ScenarioResult, column: Column | None = None) -> list[str]:
    """The detail view of one cell: outcome and reason, every check, failures with pointers."""
    lines = [f"{result.scenario_id} {result.name}: {result.title}"]
    if column is not None:
        lines.append(f"run {column.run_id} · {column.model_name} · {column.endpoint} · {column.date}")
        lines += [line for line in (column.serving_line, column.reach_line) if line]
    timing = f"{result.duration_ms:.0f} ms" if result.duration_ms is not None else "no timing"
    status = f"HTTP {result.status}" if result.status is not None else "no HTTP status"
    lines.append(
        f"{SYMBOLS[result.outcome]} {result.outcome.value} — {result.reason}  ({status}, {timing}"
        f"{', streamed' if result.stream else ''}{', finish_reason ' + result.finish_reason if result.finish_reason else ''})"
    )
    for check in result.checks:
        if check.applicable:
            lines.append(f"  {'✓' if check.passed else '✗'} {check.id}: {check.title}")
            lines += [f"      {f.pointer or '/'}  [{f.keyword}] {f.message}" for f in check.failures]
    idle = [c.id for c in result.checks if not c.applicable]
    if idle:
        lines.append(f"  – not applicable to this answer: {', '.join(idle)}")
    if result.written_as_text:
        lines.append(f"  written as text, not parsed into tool_calls: {result.written_as_text}")
    for call in result.calls:
        shown = "" if call.arguments is None else f" {call.arguments}"
        lines.append(f"  call {call.name} (id {call.id}){shown}")
    lines += [f"  not checked: {n}" for n in result.not_checked]
    lines += [f"  approximate: {a}" for a in result.approximate]
    lines += [f"  note: {n}" for n in result.notes]
    return lines

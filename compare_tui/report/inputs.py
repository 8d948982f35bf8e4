"""What a report is built from: plain, immutable inputs, so `build_report` needs no store.

`load.load_report_inputs` fills these from the run store and the golden set; tests build
them by hand (`AttemptFacts.from_record` turns a stored `AttemptRecord` into one).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from compare_tui.scoring.tool_call import stored_text_call_right
from compare_tui.store.records import AttemptRecord, RunRecord, SequentialOrder
from compare_tui.vocabulary import BaselineSource, ErrorClass, Outcome, ReviewVerdict, TextCall

REFUSED_CLASSES = frozenset({ErrorClass.HTTP_4XX, ErrorClass.AUTH, ErrorClass.HTTP_429})
"""Error statuses a server answers before generating anything (vLLM's 400 for a prompt past its
context, or for tools it has no parser for)."""


@dataclass(frozen=True, slots=True)
class AttemptFacts:
    """The parts of one attempt that the report's figures use (not the answer text)."""

    task_id: str
    attempt: int
    outcome: Outcome
    ttft_ms: float | None = None
    e2e_ms: float | None = None
    prompt_tokens: int | None = None
    """None when the server reported no usage (never guessed as 0)."""
    completion_tokens: int | None = None
    usage_missing: bool = False
    server_ttft_ms: float | None = None
    """The server's own time to the first token where it reported one per answer (llama.cpp's
    `timings.prompt_ms`), for the TTFT cross-check; None otherwise."""
    isolation: Mapping[str, Any] | None = None
    """Which sandbox isolations were in force (command scorers only)."""
    error_class: ErrorClass | None = None
    detail: str = ""
    """The scorer's one-line reason (or the error), for people reading a failure."""
    cached_tokens: int | None = None
    """Prompt tokens the server took from its prompt cache (store v14), None when not said."""
    text_call: TextCall | None = None
    """A tool call written as text that the server did not parse (`tool_call` scorer):
    `passed` (accepted by `accept_text_calls`), `right` (name and arguments as expected),
    `wrong`, `unknown` (not told by what was stored); None when the answer held no such call."""

    @property
    def refused(self) -> bool:
        """The server refused the request with an error status (4xx, 429): nothing was
        generated, so no token usage is missing from it."""
        return self.error_class in REFUSED_CLASSES

    @property
    def usage_unreported(self) -> bool:
        """The server generated an answer but did not report its prompt and completion tokens
        (both), so token figures and a token-priced cost that count it are lower bounds."""
        return not self.refused and (self.usage_missing or self.prompt_tokens is None or self.completion_tokens is None)

    @classmethod
    def from_record(cls, record: AttemptRecord) -> AttemptFacts:
        return cls(
            task_id=record.task_id,
            attempt=record.attempt,
            outcome=record.outcome,
            ttft_ms=record.ttft_ms,
            e2e_ms=record.e2e_ms,
            prompt_tokens=record.prompt_tokens,
            completion_tokens=record.completion_tokens,
            usage_missing=record.usage_missing,
            server_ttft_ms=prompt_ms(record.server_timings),
            isolation=record.isolation,
            error_class=record.error_class,
            detail=record.score_detail or record.error or "",
            text_call=text_call_kind(record.score_data),
            cached_tokens=record.cached_tokens,
        )


def prompt_ms(timings: Mapping[str, Any] | None) -> float | None:
    """llama.cpp's `timings.prompt_ms` (a positive number), else None."""
    value = timings.get("prompt_ms") if timings else None
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0:
        return float(value)
    return None


def text_call_kind(score_data: Mapping[str, Any] | None) -> TextCall | None:
    """`AttemptFacts.text_call` from a `tool_call` scorer's stored data."""
    if not score_data or not score_data.get("written_as_text"):
        return None
    if score_data.get("passed_as_text"):
        return TextCall.PASSED
    right = stored_text_call_right(score_data)
    return TextCall.UNKNOWN if right is None else TextCall.RIGHT if right else TextCall.WRONG


@dataclass(frozen=True, slots=True)
class RunInput:
    """One run with its attempts and the latest human verdict per task."""

    run: RunRecord
    attempts: tuple[AttemptFacts, ...] = ()
    verdicts: Mapping[str, ReviewVerdict] = field(default_factory=dict)
    """task id → the latest verdict (`pass`, `fail` or `skip`)."""
    running: str | None = None
    """"running since T, pid P on HOST" while a live process holds the run's lease (it is being
    executed now: the report never advises resuming it), else None."""


@dataclass(frozen=True, slots=True)
class StepGrading:
    """Stored 1–5 grades taken as the verdict of whole-run replay steps awaiting a person
    (`report --steps-by-grade JUDGE[:RUBRIC]`): opt-in, and a person's review always wins."""

    judge: str
    """The judge's catalogue name (named wherever a step it decided is counted)."""
    rubric: str
    """`similarity` (closeness to the recorded final text), `quality`, or a rubric file."""
    pass_at: int = 4
    """A grade from this up keeps the step; below it the step is lost."""
    grades: Mapping[str, Mapping[str, int]] = field(default_factory=dict)
    """run id → task id → the stored grade of that task's judged answer."""
    calibration: str = ""
    """The judge's agreement with people's labels on the runs' workload (`judge.calibration`)
    and whether that verifies it, or `not enough labels … not verified`; empty when not read."""
    calibration_labels: int = 0
    """Labelled answers (pass or fail) the judge decided with this rubric on the workload."""
    verified: bool = False
    """Enough labels, and a judge they show tells right from wrong answers."""


@dataclass(frozen=True, slots=True)
class ReportInputs:
    """Everything one report is computed from. Building it twice from the same rows gives
    the same report: nothing here depends on the clock or on the order of dicts' insertion
    beyond what the store returns."""

    runs: tuple[RunInput, ...]
    """In the comparison's order (the first is the baseline in a paired comparison)."""
    task_kinds: Mapping[str, str] = field(default_factory=dict)
    """task id → scorer kind from the golden set; empty when the set could not be read (then
    a task whose every attempt is `review` is taken to be a `human` task)."""
    task_ids: tuple[str, ...] = ()
    """The golden set's tasks in order, when it was read; tasks no run recorded show as
    not run. Empty: the tasks any run recorded, sorted."""
    task_traces: Mapping[str, tuple[str, int, int]] = field(default_factory=dict)
    """task id → (run, step, of) for the golden set's tasks that are steps of a recorded agent
    run (`trace`); empty when none are, or when the set could not be read."""
    manifest_caveats: tuple[str, ...] = ()
    """The golden set manifest's `caveats`, which travel into every report."""
    notes: tuple[str, ...] = ()
    """What the loader could not establish (an unreadable set, a changed set), in words."""
    comparison_id: str | None = None
    comparison_name: str = ""
    baseline: str | None = None
    """The model the candidates are judged against (None: no versus-baseline figures)."""
    baseline_source: BaselineSource = BaselineSource.NAMED
    """`named` (the comparison's or the command's) or `workload` (the promoted baseline)."""
    margin_pp: float | None = None
    """The verdict's margin in points (None: the recorded one, else the default); from the
    manifest's `[decision]`, or `report --margin`."""
    recorded_margin_pp: float | None = None
    """The margin recorded on the comparison when it ran, before the data (None: not recorded)."""
    sequential: SequentialOrder | None = None
    """A `--stop-when-settled` comparison's recorded seed and task order (None: fixed-N)."""
    step_grading: StepGrading | None = None
    """Stored grades deciding traced steps that await a person (None: only people decide them)."""
    skipped: Mapping[str, str] = field(default_factory=dict)
    """Model → why the comparison left it out before it ran (the daily eval budget): no run."""

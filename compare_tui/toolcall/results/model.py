"""The result model: one run of scenarios against one model behind one serving stack.

Pure data, rendered by the CLI (`render.py`), stored by `storage.py` and shown side by side
by the TUI (`table.py`). Results are listed scenario by scenario; there is deliberately no
combined score, ranking or success rate anywhere in this model.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from enum import StrEnum
from typing import TYPE_CHECKING, Any, TypedDict

if TYPE_CHECKING:
    from compare_tui.engine.tools_reach import ToolsReachEntry

NOT_AN_AGENT_TEST = (
    "These results say how this model, behind this serving stack, handled each tool-call "
    "request shape. They do not tell whether an agent built on it finishes a task."
)
NOTES_LABEL = "stated by the user, not verified"
SERVER_NOTES_LABEL = "reported by the server"


class ToolcallOutcome(StrEnum):
    """pass / fail: the checks decided; unsupported: the server refused the request shape
    (the serving setup, not the model); error: nothing was measured."""

    PASS = "pass"
    FAIL = "fail"
    UNSUPPORTED = "unsupported"
    ERROR = "error"


class ToolcallRunStatus(StrEnum):
    """Where a tool-call run stands: `running` (its header is stored before the first request),
    `interrupted` (stopped; the scenarios not run show as not run) or `finished`."""

    RUNNING = "running"
    INTERRUPTED = "interrupted"
    FINISHED = "finished"


@dataclass(frozen=True, slots=True)
class CheckFailure:
    """One failed assertion. `pointer` is a JSON pointer into the answer message (tool calls
    continue into their parsed arguments); `observed` is dropped unless arguments are kept."""

    pointer: str
    keyword: str
    message: str
    observed: Any = None


@dataclass(frozen=True, slots=True)
class CheckResult:
    id: str
    title: str
    passed: bool
    applicable: bool = True
    """False when there was nothing to check (e.g. argument checks on an answer without calls)."""
    failures: tuple[CheckFailure, ...] = ()


@dataclass(frozen=True, slots=True)
class CallRecord:
    """A call the model made: the name the user knows, its id, and (only when kept) arguments."""

    name: str
    id: str | None
    arguments: Any = None


@dataclass(frozen=True, slots=True)
class ScenarioResult:
    scenario_id: str
    name: str
    category: str
    title: str
    outcome: ToolcallOutcome
    reason: str
    checks: tuple[CheckResult, ...] = ()
    not_checked: tuple[str, ...] = ()
    """Schema keywords present in the offered tools that the checks did not evaluate."""
    approximate: tuple[str, ...] = ()
    calls: tuple[CallRecord, ...] = ()
    content: str | None = None
    content_chars: int = 0
    finish_reason: str | None = None
    status: int | None = None
    duration_ms: float | None = None
    ttft_ms: float | None = None
    stream: bool = False
    notes: tuple[str, ...] = ()
    written_as_text: str | None = None
    """A call the scenario wanted, found written as JSON in the answer's *content* instead of
    `tool_calls` (rendered canonically): the model meant to call, the server did not parse it."""

    @property
    def failed_checks(self) -> tuple[CheckResult, ...]:
        return tuple(c for c in self.checks if not c.passed)

    def without_values(self) -> ScenarioResult:
        """This result with argument values, observed values and the answer text removed."""
        checks = tuple(replace(c, failures=tuple(replace(f, observed=None) for f in c.failures)) for c in self.checks)
        calls = tuple(replace(c, arguments=None) for c in self.calls)
        return replace(self, checks=checks, calls=calls, content=None)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["outcome"] = self.outcome.value
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ScenarioResult:
        checks = tuple(
            CheckResult(
                c["id"],
                c["title"],
                c["passed"],
                c.get("applicable", True),
                tuple(CheckFailure(**f) for f in c.get("failures", ())),
            )
            for c in data.get("checks", ())
        )
        # Unknown keys (written by a newer compare-tui) are ignored rather than refused.
        fields = {
            k: v for k, v in data.items() if k in cls.__dataclass_fields__ and k not in ("checks", "calls", "outcome")
        }
        for key in ("not_checked", "approximate", "notes"):
            fields[key] = tuple(fields.get(key, ()))
        return cls(
            outcome=ToolcallOutcome(data["outcome"]),
            checks=checks,
            calls=tuple(CallRecord(**c) for c in data.get("calls", ())),
            **fields,
        )


class ToolcallServing(TypedDict, total=False):
    """What answered a tool-call run (`run.launch.serving_of`): `stack`, `template` and `parser`
    as the catalogue states them (so marked), and `tools_reach` when the server could be asked.
    Empty for runs stored before it was kept."""

    stack: str
    template: str
    parser: str
    tools_reach: ToolsReachEntry


@dataclass(frozen=True, slots=True)
class ToolcallRun:
    """One run: who was asked (model, endpoint), when, with which suite, and the results."""

    id: str
    created_at: str
    model_name: str
    model_id: str
    endpoint: str
    suite_name: str
    suite_version: str
    suite_digest: str
    user_notes: dict[str, str] = field(default_factory=dict)
    """`--note k=v`: stated by the user, not verified."""
    server_notes: tuple[str, ...] = ()
    """What the server said about itself (e.g. llama.cpp's /props), as it said it."""
    serving: ToolcallServing = field(default_factory=lambda: ToolcallServing())
    """What answered, for every table and detail to name (`run.launch.serving_of`): `stack`,
    `template`, `parser` (each as the catalogue states it, so marked), and `tools_reach`
    (`{reached, how}`: whether the offered tools reached the prompt as the server rendered it,
    checked; absent when the server could not be asked). Empty for runs before it was kept."""
    settings: dict[str, Any] = field(default_factory=dict)
    tools_file: dict[str, Any] | None = None
    publishable: bool = False
    keep_arguments: bool = False
    status: ToolcallRunStatus = ToolcallRunStatus.FINISHED
    results: tuple[ScenarioResult, ...] = ()

    def counts(self) -> dict[str, int]:
        """How many scenarios ended in each outcome (a tally, not a score)."""
        tally = {o.value: 0 for o in ToolcallOutcome}
        for result in self.results:
            tally[result.outcome.value] += 1
        return tally

    def header_dict(self) -> dict[str, Any]:
        """Everything but the results, JSON-ready."""
        data = {k: getattr(self, k) for k in self.__dataclass_fields__ if k != "results"}
        data["server_notes"] = list(self.server_notes)
        return data

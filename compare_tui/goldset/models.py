"""The golden-set format (docs/golden-sets.md) as pydantic models.

Field names are fixed: other tools and people's sets depend on them. Unknown fields are
rejected everywhere (`extra="forbid"`), so a typo is an error, not a silently ignored key.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


# ---------------------------------------------------------------- scorers

NormalizeOption = Literal["case", "whitespace", "punctuation"]
RegexFlag = Literal["IGNORECASE", "MULTILINE", "DOTALL", "VERBOSE", "ASCII"]


class ExactScorer(_Strict):
    kind: Literal["exact"]
    normalize: list[NormalizeOption] = []
    """Normalisations applied to both the answer and the expected text before comparing."""


class RegexScorer(_Strict):
    kind: Literal["regex"]
    pattern: str
    """A Python regular expression the answer must match."""
    mode: Literal["search", "fullmatch"] = "search"
    flags: list[RegexFlag] = []

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, value: str) -> str:
        try:
            re.compile(value)
        # `re` raises OverflowError for huge repeat counts and RecursionError for deep
        # nesting; both are a bad pattern, not a crash.
        except (re.error, OverflowError, RecursionError) as exc:
            raise ValueError(f"not a valid regular expression: {exc}") from None
        return value

    def compiled(self) -> re.Pattern[str]:
        flags = 0
        for name in self.flags:
            flags |= getattr(re, name)
        return re.compile(self.pattern, flags)


class JsonScorer(_Strict):
    kind: Literal["json"]
    schema_: dict[str, Any] | str | None = Field(default=None, alias="schema")
    """An inline JSON Schema, or a path (relative to the set folder) to one. The loader
    replaces a path with the schema it names, so scorers always see a dict or None."""
    fields: list[str] = []
    """Top-level keys whose values must equal those in `expected.json`."""


class ToolCallScorer(_Strict):
    kind: Literal["tool_call"]
    name: str | None = None
    """Expected tool name; defaults to `expected.tool_call.name`."""
    arguments: dict[str, Any] | None = None
    """Expected arguments; defaults to `expected.tool_call.arguments`."""
    match: Literal["exact", "subset"] = "exact"
    no_tool_call: bool = False
    """Pass only when the model made no tool call."""
    accept_text_calls: bool = False
    """Opt-in: a call written as text (not parsed by the server) with the expected name and
    arguments passes, with the detail "passed as text" and counted apart in the report."""


class CommandScorer(_Strict):
    kind: Literal["command"]
    run: list[str] = Field(min_length=1)
    """argv; arguments naming files in the set folder are resolved relative to it."""
    timeout_s: float = Field(default=10.0, gt=0, le=600)


class HumanScorer(_Strict):
    kind: Literal["human"]
    instructions: str = ""


ScorerSpec = Annotated[
    ExactScorer | RegexScorer | JsonScorer | ToolCallScorer | CommandScorer | HumanScorer,
    Field(discriminator="kind"),
]
SCORER_KINDS = ("exact", "regex", "json", "tool_call", "command", "human")


# ---------------------------------------------------------------- tasks


class Message(_Strict):
    role: Literal["system", "user", "assistant", "tool", "developer"]
    content: str | list[Any] | None = None
    tool_calls: list[dict[str, Any]] | None = None
    tool_call_id: str | None = None
    name: str | None = None


class TaskInput(_Strict):
    system: str | None = None
    prompt: str | None = None
    messages: list[Message] | None = None
    tools: list[dict[str, Any]] | None = None
    tool_choice: str | dict[str, Any] | None = None
    response_format: dict[str, Any] | None = None

    @model_validator(mode="after")
    def _one_form(self) -> TaskInput:
        if self.messages is None and self.prompt is None:
            raise ValueError("give either `prompt` (with optional `system`) or `messages`")
        if self.messages is not None and (self.prompt is not None or self.system is not None):
            raise ValueError("give either `prompt`/`system` or `messages`, not both")
        if self.messages is not None and not self.messages:
            raise ValueError("`messages` is empty")
        return self

    def chat_messages(self) -> list[dict[str, Any]]:
        """The OpenAI chat `messages` this input sends."""
        if self.messages is not None:
            return [m.model_dump(exclude_none=True) for m in self.messages]
        out: list[dict[str, Any]] = []
        if self.system is not None:
            out.append({"role": "system", "content": self.system})
        out.append({"role": "user", "content": self.prompt})
        return out


class ExpectedToolCall(_Strict):
    name: str
    arguments: dict[str, Any] = {}


class Expected(_Strict):
    text: str | None = None
    json_: Any = Field(default=None, alias="json")
    tool_call: ExpectedToolCall | None = None

    @model_validator(mode="before")
    @classmethod
    def _exactly_one(cls, data: Any) -> Any:
        if isinstance(data, dict):
            # Count only non-null values, so a dump (which writes the unset two as null)
            # validates again.
            given = [k for k in ("text", "json", "json_", "tool_call") if data.get(k) is not None]
            if len(given) != 1:
                raise ValueError("give exactly one of `text`, `json` or `tool_call`")
        return data


TASK_ID = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$"


class Trace(_Strict):
    """Where a task sits in a recorded agent run: step `step` of `of` of run `run`.

    Within one set every step 1..`of` of a run is present exactly once and every task of the
    run gives the same `of` (the loader checks it, since it needs the whole set)."""

    run: str = Field(min_length=1, max_length=128, strict=True)
    """The run's id (any non-empty string; `sample --whole-runs` writes `c` + 12 hex digits)."""
    step: int = Field(ge=1, strict=True)
    """1-based place of the step in its run."""
    of: int = Field(ge=1, le=10_000, strict=True)
    """How many steps the run has."""

    @model_validator(mode="after")
    def _step_within(self) -> Trace:
        if self.step > self.of:
            raise ValueError(f"step {self.step} is past the run's {self.of} steps (`of`); 1 <= step <= of")
        return self


class Task(_Strict):
    id: str = Field(pattern=TASK_ID)
    """Unique within the set; letters, digits, `.`, `_`, `-`."""
    tags: list[str] = []
    input: TaskInput
    expected: Expected
    scorer: ScorerSpec | None = None
    """Optional; the manifest's `default_scorer` applies when absent."""
    trace: Trace | None = None
    """Optional: the task is one step of a recorded agent run (whole-run replay)."""


# ---------------------------------------------------------------- manifest


class RunSettings(_Strict):
    attempts: int = Field(default=1, ge=1, le=20)
    temperature: float = Field(default=0.0, ge=0.0, le=2.0)
    max_tokens: int | None = Field(default=None, ge=1, le=1_000_000)
    strict_serving: bool = False
    """Refuse a run whose server's settings differ from the catalogue's `[model.serving]`
    (the default for every run of this set; `run --strict-serving` for one run)."""


class DecisionSettings(_Strict):
    margin_pp: float = Field(default=5.0, ge=0.0, le=100.0)
    """The non-inferiority margin of the versus-baseline verdict, in percentage points."""
    sequential: bool = False
    """Run every comparison with a baseline as `run --stop-when-settled` does: anytime-valid
    verdicts, and each candidate's requests stop once its verdict has settled."""


class Manifest(_Strict):
    workload_id: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
    name: str = Field(min_length=1)
    version: str = Field(min_length=1)
    default_scorer: ScorerSpec
    run: RunSettings = RunSettings()
    caveats: list[str] = []
    tolerances: dict[str, str] = {}
    """Optional reproduce-check tolerances, e.g. {pass_rate = "2pp"}."""
    decision: DecisionSettings | None = None
    """Optional `[decision]` table (margin_pp); absent, the report's default margin applies."""


class GoldenSet(BaseModel):
    """A loaded, validated golden set. `digest` proves two runs ran the same set."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    root: Path
    manifest: Manifest
    tasks: tuple[Task, ...]
    digest: str
    """`sha256:<hex>` over the canonical form of manifest + tasks + referenced files."""
    files: dict[str, str] = {}
    """Files the scorers reference (relative path -> sha256 hex), included in the digest."""

    def scorer_for(self, task: Task) -> Any:
        return task.scorer if task.scorer is not None else self.manifest.default_scorer

    def task(self, task_id: str) -> Task:
        for task in self.tasks:
            if task.id == task_id:
                return task
        raise KeyError(task_id)

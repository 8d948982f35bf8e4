"""The rows of the run store as domain models (pydantic v2, frozen, unknown fields rejected).

These are what the store's accessors take and return; nothing outside `compare_tui.store`
sees a raw SQLite row. Timestamps are ISO 8601 strings in UTC (`2026-01-31T12:00:00.000000Z`):
every timestamp is normalised to that one form so that string order is time order.
"""

from __future__ import annotations

import re
import secrets
import time
from datetime import UTC, datetime
from typing import Annotated, Any, TypedDict

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    model_validator,
)

from compare_tui.scoring.result import Answer, Outcome, ToolCall
from compare_tui.vocabulary import AuditState, ErrorClass, Provenance, ReviewVerdict, RunStatus

PROVENANCE_VERIFIED = Provenance.VERIFIED
PROVENANCE_ATTESTED = Provenance.HOST_ATTESTED
Verdict = ReviewVerdict
"""A person's verdict on one task (`vocabulary.ReviewVerdict`)."""


_SECOND: tuple[int, str] = (-1, "")
"""The last whole second `utc_now` spelled, and its spelling."""


def utc_now() -> str:
    """The current time in the store's timestamp form (`2026-12-06T04:12:00.123456Z`)."""
    # The engine stamps three per attempt, thousands a second: the date and time of day are
    # spelled once per second, the microseconds each call (a third of `isoformat`'s cost).
    global _SECOND
    seconds, nanos = divmod(time.time_ns(), 1_000_000_000)
    known, text = _SECOND
    if seconds != known:
        text = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds))
        _SECOND = (seconds, text)
    return f"{text}.{nanos // 1000:06d}Z"


def new_run_id() -> str:
    """A fresh run id: 16 random hex digits, so a short prefix is usually unique to type."""
    return secrets.token_hex(8)


_CANONICAL = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z")


def _iso_utc(value: Any) -> Any:
    if value is None:
        return None
    if isinstance(value, str) and _CANONICAL.fullmatch(value):
        return value  # already in the stored form (every row read back): skip parsing
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value)
        except ValueError:
            raise ValueError(f"not an ISO 8601 timestamp: {value!r}") from None
    if not isinstance(value, datetime):
        raise ValueError(f"expected an ISO 8601 timestamp, got {type(value).__name__}")
    if value.tzinfo is None:
        # A naive time is ambiguous across machines; refuse rather than guess the zone.
        raise ValueError("timestamp has no time zone; give it in UTC (suffix Z or +00:00)")
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


Timestamp = Annotated[str, BeforeValidator(_iso_utc)]
"""An ISO 8601 UTC timestamp, normalised to `YYYY-MM-DDTHH:MM:SS.ffffffZ`."""

# Keys and values that mean a credential. A run records the catalogue entry (with `key_env`,
# the *name* of a variable), never a key: refusing here makes a leak fail loudly at the source.
_SECRET_KEYS = {
    "api_key",
    "apikey",
    "key",
    "authorization",
    "bearer",
    "token",
    "access_token",
    "secret",
    "password",
    "headers",
}
_SECRET_VALUE = re.compile(r"^(?:Bearer\s+)?(?:sk-|sk_|gsk_|xai-|AIza|hf_)[A-Za-z0-9_\-]{16,}$")


def _no_secrets(value: Any, where: str = "") -> Any:
    if isinstance(value, dict):
        for key, item in value.items():
            if str(key).lower() in _SECRET_KEYS:
                raise ValueError(f"{where}{key}: a credential field is never stored")
            _no_secrets(item, f"{where}{key}.")
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            _no_secrets(item, f"{where}{index}.")
    elif isinstance(value, str) and _SECRET_VALUE.match(value.strip()):
        raise ValueError(f"{where.rstrip('.') or 'value'}: looks like an API key; keys are never stored")
    return value


SafeDict = Annotated[dict[str, Any], AfterValidator(_no_secrets)]


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class RunRecord(_Record):
    """One golden set × one model × settings."""

    id: str = Field(default_factory=new_run_id, min_length=1)
    status: RunStatus = RunStatus.PENDING
    created_at: Timestamp = Field(default_factory=utc_now)
    started_at: Timestamp | None = None
    finished_at: Timestamp | None = None
    goldset_id: str
    """The golden set's `workload_id`."""
    goldset_name: str = ""
    goldset_version: str = ""
    goldset_digest: str = ""
    goldset_path: str = ""
    model_name: str
    """The catalogue name users type and see."""
    model_entry: SafeDict = {}
    """The catalogue entry as recorded, with its pins. Never a key: credentials are refused."""
    provenance: Provenance | None = None
    cost_basis: SafeDict | None = None
    settings: SafeDict = {}
    """attempts, temperature, max_tokens, concurrency, timeout_s, …"""
    environment: SafeDict = {}
    task_count: int = Field(default=0, ge=0)
    gpu: SafeDict | None = None
    """baseline/peak/device figures, or `{"measured": False, "reason": …}`."""
    error: str | None = None
    comparison_id: str | None = None
    task_inputs: dict[str, str] | None = None
    """task id → sha256 of the task's input as sent (`goldset.input_digest`); None for runs made
    before it was recorded. `rescore` checks it before scoring the answers again."""
    rescore: SafeDict | None = None
    """For a rescored run: `source_run`, `answers_generated` (the source's start and finish),
    `scored_at`, `scorers_digest`, `set_digest_before` and `changed` (tasks whose outcome moved)."""
    serving: list[SafeDict] = []
    """The server's serving fingerprint each time the run started or resumed, oldest first
    (`engine.serving`); `[]` when nothing was read (runs stored before store v11)."""


class AttemptRecord(_Record):
    """One request for one task in a run, as it finished (an error is an outcome too)."""

    id: str = ""
    """Always `f"{run_id}:{task_id}:{attempt}"`: filled in when omitted, checked when given."""
    run_id: str = Field(min_length=1)
    task_id: str = Field(min_length=1)
    attempt: int = Field(ge=1)
    outcome: Outcome
    answer_text: str = ""
    tool_calls: list[dict[str, Any]] = []
    """`{"id", "name", "arguments"}` per call, arguments as the raw JSON text the model sent."""
    reasoning: str | None = None
    score_detail: str = ""
    score_data: dict[str, Any] = {}
    isolation: dict[str, Any] | None = None
    error_class: ErrorClass | None = None
    error: str | None = None
    ttft_ms: float | None = None
    e2e_ms: float | None = None
    prompt_tokens: int | None = None
    """None means the server did not report it (never guessed as 0)."""
    completion_tokens: int | None = None
    usage_missing: bool = False
    server_timings: dict[str, Any] | None = None
    started_at: Timestamp | None = None
    finished_at: Timestamp | None = None
    retries: int = Field(default=0, ge=0)
    finish_reason: str | None = None
    cached_tokens: int | None = Field(default=None, ge=0)
    """Prompt tokens the server reused from its prompt cache (llama.cpp `timings.cache_n`, vLLM
    `usage.prompt_tokens_details.cached_tokens`); None when the server did not say (store v14)."""

    @model_validator(mode="before")
    @classmethod
    def _deterministic_id(cls, data: Any) -> Any:
        if isinstance(data, dict) and {"run_id", "task_id", "attempt"} <= data.keys():
            expected = attempt_id(data["run_id"], data["task_id"], data["attempt"])
            given = data.get("id") or ""
            if given and given != expected:
                raise ValueError(f"attempt id must be {expected!r}, got {given!r}")
            data = {**data, "id": expected}
        return data

    @property
    def key(self) -> tuple[str, int]:
        """`(task_id, attempt)`: how a resumed run recognises work already done."""
        return (self.task_id, self.attempt)

    def answer(self) -> Answer:
        """The recorded answer as the scorers' `Answer`."""
        calls = tuple(
            ToolCall(name=c.get("name", ""), arguments=c.get("arguments", ""), id=c.get("id")) for c in self.tool_calls
        )
        return Answer(text=self.answer_text, tool_calls=calls, reasoning=self.reasoning)


def attempt_id(run_id: str, task_id: str, attempt: int) -> str:
    """The deterministic request id of one attempt: `run:task:attempt`."""
    return f"{run_id}:{task_id}:{int(attempt)}"


class StoredToolCall(TypedDict):
    """One tool call of an answer as an attempt stores it (`AttemptRecord.tool_calls`)."""

    id: str | None
    name: str
    arguments: str
    """The raw JSON text the model sent."""


def tool_calls_of(answer: Answer) -> list[StoredToolCall]:
    """An answer's tool calls in the stored form (`{"id", "name", "arguments"}`)."""
    return [{"id": c.id, "name": c.name, "arguments": c.arguments} for c in answer.tool_calls]


class AttemptCells(TypedDict, total=False):
    """The columns of an attempt that `Store.attempt_columns` read, as the store gives them: only
    those asked for are present. For readers of many rows (the report), so no record is built:
    the outcome and error class arrive as their enums (converted once, in the store), the JSON
    columns as their stored text (a reader decodes only what it uses), `usage_missing` a bool.
    Every `AttemptRecord` field but `id` and `run_id`."""

    task_id: str
    attempt: int
    outcome: Outcome
    """An outcome this version does not know (a hand-edited row) reads as `error`."""
    answer_text: str
    tool_calls: str
    reasoning: str | None
    score_detail: str
    score_data: str
    isolation: str | None
    error_class: ErrorClass | None
    """A class this version does not know reads as `transport`: the request failed, somehow."""
    error: str | None
    ttft_ms: float | None
    e2e_ms: float | None
    prompt_tokens: int | None
    completion_tokens: int | None
    usage_missing: bool
    server_timings: str | None
    started_at: str | None
    finished_at: str | None
    retries: int
    finish_reason: str | None
    cached_tokens: int | None


class AuditRow(_Record):
    """One request sent to an endpoint. There is no field for headers: a key cannot be logged."""

    id: int | None = None
    """Assigned by the store (autoincrement) when recorded."""
    at: Timestamp = Field(default_factory=utc_now)
    run_id: str | None = None
    """The golden-set run that sent the request; None for judge calls and tool-call runs."""
    toolcall_run_id: str | None = None
    """The tool-call run that sent the request (its `task_id` is the scenario id)."""
    task_id: str | None = None
    attempt: int | None = None
    endpoint: str
    model: str
    status: int | None = None
    """HTTP status, or None when no response came back."""
    bytes_in: int | None = None
    bytes_out: int | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    duration_ms: float | None = None
    error_class: ErrorClass | None = None
    state: AuditState = AuditState.DONE
    """`sent` (written before the request went out, not yet completed), `done`, `unknown` (its
    sender died before reading the answer: the server may have received it) or `cancelled`
    (its sender stopped reading: Ctrl-C, SIGTERM, the run stopped): `vocabulary.AuditState`."""


class ReviewRecord(_Record):
    """A person's verdict on one task of a run. The latest per (run, task) wins; all are kept."""

    id: int | None = None
    """Assigned by the store (autoincrement) when recorded."""
    run_id: str
    task_id: str
    verdict: Verdict
    note: str = ""
    reviewer: str = ""
    at: Timestamp = Field(default_factory=utc_now)


class SequentialOrder(_Record):
    """The task order of a sequential comparison, drawn from `seed` and recorded before the
    first request: every model is sent the tasks in this order, and each candidate's confidence
    sequence takes its paired outcomes in it (a resume keeps it)."""

    seed: int
    order: list[str]
    """Task ids, in the order they are sent and looked at."""


class ComparisonRecord(_Record):
    """Two or more runs on the same golden set version, reported together."""

    id: str = Field(default_factory=new_run_id, min_length=1)
    name: str = ""
    created_at: Timestamp = Field(default_factory=utc_now)
    run_ids: list[str] = []
    """In the order the user chose (the first is the baseline in a diff)."""
    baseline: str | None = None
    """The model (catalogue name) the others are judged against, when one was named."""
    margin_pp: float | None = None
    """The verdict's margin in points, recorded when the comparison was made (before the data);
    None when none was recorded."""
    skipped: dict[str, str] = {}
    """Model → why the comparison left it out before it ran (the daily eval budget): a skipped
    model has no run here, never half a run counted as done."""
    sequential: SequentialOrder | None = None
    """A comparison run with `--stop-when-settled`: the order its sequential verdicts follow
    (None: a fixed-N comparison)."""

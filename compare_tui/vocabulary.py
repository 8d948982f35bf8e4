"""The product's words, once: task outcomes, run statuses, the error classes of an attempt, the
states of an audit-ledger row, the kinds of model, the rules that join them (which attempts measured something, what a task's outcome is), and the one
money format.

Every package compares against these members, never against raw strings. Imports nothing from
the project, so any package may import it (it is first in the dependency order, ARCHITECTURE.md).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from enum import StrEnum
from typing import Final, Literal, TypeAlias


class Outcome(StrEnum):
    """The four outcomes of a task (docs/index.md, "Concepts"). `error` means nothing was measured."""

    PASS = "pass"
    FAIL = "fail"
    REVIEW = "review"
    ERROR = "error"


NotDone = Literal["not_done"]
"""The type of `NOT_DONE`, for fields that hold an outcome or it."""
NOT_DONE: Final = "not_done"
"""The outcome observers are told for an attempt that measured nothing (never stored)."""

Missing = Literal["missing"]
"""The type of `MISSING`."""
MISSING: Final = "missing"
"""A task's status in a run that has no measured attempt of it (*not done*, shown as `·`)."""
TaskStatus: TypeAlias = Outcome | Missing
"""A task's status in one run (a report block, an A/B diff): its outcome, or `missing`."""

TASK_ENDING_OUTCOMES = frozenset({Outcome.PASS, Outcome.REVIEW})
"""Attempt outcomes that end a task: a pass completes it, and asking again cannot settle a review."""


class RunStatus(StrEnum):
    """Where a run stands. `interrupted` and `incomplete` runs can be resumed, and so can a
    `pending` one (prepared, never started) or a `running` one whose process was killed."""

    PENDING = "pending"
    RUNNING = "running"
    INTERRUPTED = "interrupted"
    """Stopped by the user, a signal or a crash before every task was tried."""
    INCOMPLETE = "incomplete"
    """Every task was tried, but some measured nothing (the endpoint failed): they are not done,
    and a resume retries exactly those."""
    COMPLETED = "completed"
    SETTLED = "settled"
    """A `--stop-when-settled` run that stopped sending once every verdict it serves had
    settled: the tasks it did not send are *not sent*, never failures, and `run --resume RUN
    --full-set` sends them."""


FINISHED_STATUSES = frozenset({RunStatus.INTERRUPTED, RunStatus.INCOMPLETE, RunStatus.COMPLETED, RunStatus.SETTLED})
"""Statuses a run stops in (its `finished_at` is set). Only `completed` gains no more attempts."""


class ReviewVerdict(StrEnum):
    """A person's verdict on one task (`ReviewRecord.verdict`): a skip leaves the task waiting."""

    PASS = "pass"
    FAIL = "fail"
    SKIP = "skip"


class TextCall(StrEnum):
    """A `tool_call` answer written as text instead of a call (`AttemptFacts.text_call`)."""

    PASSED = "passed"
    """Accepted as the call (the scorer's opt-in `accept_text_calls`)."""
    RIGHT = "right"
    """Not accepted, but the name and arguments were the expected ones."""
    WRONG = "wrong"
    UNKNOWN = "unknown"
    """Stored before the scorer said whether the text call was right."""


class WeightsCheck(StrEnum):
    """What the loaded-weights check found (`catalogue.serving_check.LoadedCheck.status`)."""

    MATCHED = "matched"
    MISMATCH = "mismatch"
    UNCHECKED = "unchecked"
    """The server does not say which weights it loaded (or they could not be read)."""
    NOT_PINNED = "not_pinned"


class Consistency(StrEnum):
    """One task across an experiment arm's runs (`experiment.figures.TaskConsistency.state`)."""

    CONSISTENT_PASS = "consistent pass"
    CONSISTENT_FAIL = "consistent fail"
    FLAKY = "flaky"
    """Passed in some runs only."""
    INCONCLUSIVE = "inconclusive"


class Reach(StrEnum):
    """What a keyless probe of an endpoint's `/models` found (`engine.reachability.Reachability`)."""

    HEALTHY = "healthy"
    """HTTP 200."""
    WANTS_KEY = "wants_key"
    """HTTP 401 or 403: the server is up and wants a key."""
    HTTP = "http"
    """Another HTTP status: a 5xx is down (or a keyless gateway), any other the server is up."""
    UNREACHABLE = "unreachable"
    """No answer: nothing listens, a timeout, a transport failure."""


class ModelKind(StrEnum):
    """Where a catalogue model runs (`ModelEntry.kind`): on this machine's hardware, whose GPU a
    run samples, or at a host reached over the network (its latency includes the network)."""

    LOCAL = "local"
    HOSTED = "hosted"


class PriceGroup(StrEnum):
    """Where a candidate's blended price stands against the baseline's (`candidates`)."""

    CHEAPER = "cheaper"
    ABOUT_THE_SAME = "about the same"
    DEARER = "dearer"
    UNPRICED = "price not known"
    """No cost basis, or an hourly basis with no throughput measured on the workload yet."""
    NOT_COMPARED = "not compared: no baseline price"
    """Priced, but no baseline price to compare it with (no baseline promoted or named, or the
    baseline itself has no price yet)."""


class SpendSource(StrEnum):
    """Where a spend figure was counted from (`candidates`, the daily budget)."""

    STORE_RUNS = "store runs"
    """This store's own runs (their attempts' tokens, or their duration at the hourly rate)."""
    AUDIT_LEDGER = "audit ledger"
    """Every request the ledger recorded: runs, judges, canary replays."""
    GATEWAY_LOG = "gateway log"
    """The managed gateway's traffic log: the workload's own traffic through its alias."""


class GpuSource(StrEnum):
    """Where a run's GPU memory figure was read (`GpuReport.source`): NVML on the machine that
    runs compare-tui, or an NVIDIA DCGM exporter on the serving host (`--gpu-telemetry`)."""

    NVML = "nvml"
    DCGM = "dcgm"


class BaselineSource(StrEnum):
    """How a report's baseline was chosen (`ReportInputs.baseline_source`)."""

    NAMED = "named"
    """Recorded on the comparison when it ran (or named for a report of runs without one)."""
    WORKLOAD = "workload"
    """The workload's promoted baseline."""
    AFTER_DATA = "after_data"
    """Named with `report --baseline` at report time, other than the one recorded: chosen after the data."""


class Provenance(StrEnum):
    """A run's provenance label (docs/index.md, "Concepts"): what was checked about the weights
    that answered. Every surface shows these exact strings."""

    VERIFIED = "verified"
    """Weights were hashed this run, every per-file pin matched with nothing extra, and the server
    named what it loaded, which is the pinned weights."""
    HOST_ATTESTED = "provenance by host attestation, not verified"
    """A hosted model: the revision and digest are what the host states; nothing was hashed."""
    NOT_IN_HF_CACHE = "weights not checked: the server's repository is not in this machine's Hugging Face cache"
    """The pins hashed, but the server loaded a repository id that this machine's cache does not
    hold (another host, or a cache elsewhere): what answered is not known to be the pins."""
    NOT_ON_THIS_MACHINE = "weights not checked: the server's weights file is not on this machine"
    """The pins hashed, but the file the server names is not here (a server on another host)."""
    NOT_SAID = "weights not checked: the server does not say what it loaded"
    """The pins hashed, but the server names no loaded file or folder."""


WEIGHTS_NOT_CHECKED: Final = frozenset(
    {Provenance.NOT_IN_HF_CACHE, Provenance.NOT_ON_THIS_MACHINE, Provenance.NOT_SAID}
)
"""The labels of a local run whose pins matched but whose server could not be checked against them."""


class PromptCache(StrEnum):
    """Whether a run lets the server reuse a cached prompt prefix (`RunSettings.prompt_cache`).

    A prefix the server already holds (the same system prompt, the same task asked again) skips
    its prompt processing: time to first token drops from seconds to milliseconds on a CPU, so
    two runs minutes apart differ by what the server remembered, not by the model."""

    SERVER = "server"
    """The server's own behaviour (llama.cpp and vLLM reuse prefixes by default)."""
    COLD = "cold"
    """No reuse: llama.cpp is sent `cache_prompt: false`, vLLM a `cache_salt` of its own per
    request; a server that offers neither cannot be held cold (the run says so)."""


class ErrorClass(StrEnum):
    """Why an attempt's request produced no usable answer (`AttemptRecord.error_class`)."""

    CONNECT = "connect"
    UPSTREAM = "upstream"
    """A gateway answered, but reported (a 5xx body, or an error inside a 200 stream) that it
    could not connect to the server behind it: a connection failure one hop further."""
    RESET = "reset"
    TIMEOUT = "timeout"
    TRANSPORT = "transport"
    HTTP_429 = "http_429"
    HTTP_5XX = "http_5xx"
    AUTH = "auth"
    HTTP_4XX = "http_4xx"
    MALFORMED_RESPONSE = "malformed_response"
    MALFORMED_STREAM = "malformed_stream"
    STREAM_ERROR = "stream_error"
    TRUNCATED = "truncated"
    TOO_LARGE = "too_large"
    """The answer passed the raw reader's size bound (`engine.exchange.MAX_RAW_BYTES`): reading stopped."""
    SCORER_UNAVAILABLE = "scorer_unavailable"
    """The model answered, but no scorer could be run for the answer (every node of the scorer
    cluster that could take it was lost, or none could be placed in time): nothing measured."""


class JudgeFailure(StrEnum):
    """Why a judge call gave no verdict when the transport did not fail (`JudgementRecord.error_class`)."""

    NO_ANSWER = "no_answer"
    """The exchange ended without an answer to read."""
    UNPARSEABLE = "unparseable"
    """The reply held no verdict in the asked-for form (a verdict is never guessed at)."""


class Correction(StrEnum):
    """Whether a judge-decided pass rate could be corrected for the judge's errors measured on
    people's labels (`judge/calibration`): `human-calibrated`, or why only the raw rate is shown."""

    CALIBRATED = "human-calibrated"
    TOO_FEW_LABELS = "not enough labels"
    NOT_INFORMATIVE = "judge does not tell right from wrong"
    NOTHING_JUDGED = "nothing judged"


class AuditState(StrEnum):
    """Where a request's row of the audit ledger stands (`AuditRow.state`, `compare-tui audit`).
    Every request that left the process is a row; only `done` rows carry its measure."""

    SENT = "sent"
    """Written before the request went out, not yet completed: its sender is still reading the
    answer, or was killed (`kill -9`) and no one has taken the run's lease since."""
    DONE = "done"
    """The answer (or the failure) was read and stored with its measure."""
    UNKNOWN = "unknown"
    """Its sender died before reading the answer (the run's next holder found it `sent`): the
    server may have received it, and may have charged for it."""
    CANCELLED = "cancelled"
    """Its sender stopped reading (Ctrl-C, SIGTERM, the run stopped) and said so."""


class CanaryState(StrEnum):
    """Where a canary stands (`compare-tui canary status`)."""

    SHADOW = "shadow"
    """B gets mirrored copies of the alias's requests; no user sees its answers."""
    STEPPING = "stepping"
    """B serves its step's share of the alias's traffic."""
    ROLLED_BACK = "rolled back"
    """B was found worse: its weight went back to 0 and the alias to the baseline alone."""
    PROMOTED = "promoted"
    """B reached 100 %: it is the workload's baseline (a decision in `baseline history`)."""
    STOPPED = "stopped"
    """Ended by a person (`canary stop`): the alias went back to the baseline alone."""


LIVE_CANARY_STATES = frozenset({CanaryState.SHADOW, CanaryState.STEPPING})
"""The states of a canary still running (B mirrored or serving a share); the others have ended."""


class CanaryChange(StrEnum):
    """One entry of a canary's history (`baseline history`): a change of the split, or a refusal
    to make one."""

    STARTED = "started"
    ADVANCED = "advanced"
    ROLLED_BACK = "rolled back"
    PROMOTED = "promoted"
    STOPPED = "stopped"
    REFUSED = "refused"
    """A change was due but the gateway's routes were not what the canary last wrote (a hand
    edit): nothing was written."""


class PairSkip(StrEnum):
    """Why a logged request of B gave no paired outcome (`canary status` counts them)."""

    NO_CHECK = "no check"
    """Its messages match no task of the workload's golden set: nothing to grade it with."""
    REPLAY_FAILED = "replay failed"
    """The off-path replay to the baseline got no answer (the audit row says why)."""
    NOT_GRADED = "not graded"
    """A scorer gave neither pass nor fail (an error, or a check waiting for a person)."""
    OVER_BUDGET = "over budget"
    """The day's replay spend (`--max-usd-per-day`) was reached: not replayed."""
    OVER_DAILY_BUDGET = "over the daily eval budget"
    """The next replay would take today's eval spend past `[budget]` in the user's config: not replayed."""
    JUDGE_FAILED = "judge failed"
    """No golden-set check, and a judge call (either order) gave no readable verdict."""
    JUDGE_INCONSISTENT = "judge inconsistent"
    """No golden-set check, and the judge's two orders disagreed (it picked by position): a tie
    that is no evidence either way, left out of the verdict."""


class PairGrader(StrEnum):
    """What decided a canary pair's outcome (`canary status` splits the evidence by it)."""

    CHECK = "check"
    """The golden set's check of the task whose input the request is."""
    JUDGE = "judge"
    """A pairwise judge, both orders asked (no task matched the request)."""
    SIMILARITY = "similarity"
    """A judge's 1–5 similarity grade of B's answer against A's (no task matched the request)."""


class CanaryJudgeRubric(StrEnum):
    """How a canary's judge grades a request no golden-set check grades (`--judge-rubric`)."""

    PAIRWISE = "pairwise"
    """Which answer better does what the request asks, both orders asked: B − A is +1, 0 or −1."""
    SIMILARITY = "similarity"
    """How close B's answer is to A's on the 1–5 similarity rubric: as close (4 or 5) is 0, else −1."""


class FailureCause(StrEnum):
    """Why a failed attempt failed, as `compare-tui insights` groups it (docs/insights.md). Each
    failed attempt has exactly one, decided in this order: the request's error, a truncated
    answer, an empty one, a refusal, an answer in another language than the request, then what
    its scorer recorded."""

    REQUEST_ERROR = "request_error"
    """The request failed (its `ErrorClass` names how): nothing was measured."""
    TRUNCATED = "truncated"
    """The server stopped at the token limit (`finish_reason: length`)."""
    EMPTY = "empty"
    """No text and no tool call."""
    REFUSAL = "refusal"
    """The answer opens like a refusal (`insights.causes.REFUSAL_PATTERNS`)."""
    WRONG_LANGUAGE = "wrong_language"
    """The answer is in another language than the request (`insights.language`)."""
    WRONG_LABEL = "wrong_label"
    """An `exact` scorer's expected text against the one answered."""
    NO_MATCH = "no_match"
    """A `regex` scorer's pattern did not match."""
    JSON_PARSE = "json_parse"
    """A `json` scorer found no JSON in the answer."""
    JSON_SCHEMA = "json_schema"
    """The JSON broke the task's schema."""
    JSON_FIELD = "json_field"
    """A field the task checks is missing or not a JSON object."""
    JSON_VALUE = "json_value"
    """A field the task checks holds another value."""
    TOOL_NO_CALL = "tool_no_call"
    """A tool call was expected and none was made."""
    TOOL_TEXT_CALL = "tool_text_call"
    """The call was written as text that the server did not parse."""
    TOOL_WRONG_TOOL = "tool_wrong_tool"
    """Calls were made, none to the expected tool."""
    TOOL_BAD_ARGUMENTS = "tool_bad_arguments"
    """The expected tool was called with other arguments."""
    TOOL_UNWANTED_CALL = "tool_unwanted_call"
    """A call was made where the task expects none."""
    COMMAND_FAILED = "command_failed"
    """A `command` scorer's program said no (grouped by its last line of output)."""
    SCORER_ERROR = "scorer_error"
    """The scorer could not score the answer (outcome `error` with no request error)."""
    OTHER = "other"
    """A failure none of the above describes (grouped by the scorer's detail)."""


class SuspectReason(StrEnum):
    """Why `compare-tui insights` asks to check a task of the golden set."""

    SAME_FAILURE = "same_failure"
    """Every model failed it, for the same cause: the expected outcome may be wrong."""
    FLAKY = "flaky"
    """A model both passed and failed it across its attempts."""
    UNLIKE_EXPECTED = "unlike_expected"
    """Every model failed it and no answer resembles the expected text: it may be wrong."""


JudgeErrorClass: TypeAlias = ErrorClass | JudgeFailure
"""Why a judge call gave no verdict: the transport's error class, or the judge's own failure."""


RETRYABLE_CLASSES = frozenset(
    {ErrorClass.CONNECT, ErrorClass.UPSTREAM, ErrorClass.RESET, ErrorClass.HTTP_429, ErrorClass.HTTP_5XX}
)
"""Connection failures (ours, or a gateway's to its upstream), 429 and 5xx are retried; nothing else is."""

HTTP_STATUS_CLASSES = frozenset({ErrorClass.HTTP_429, ErrorClass.HTTP_5XX, ErrorClass.AUTH, ErrorClass.HTTP_4XX})
"""The server answered with an error status (other than a gateway's lost upstream): its body
may say why (the tool-call suite reads refusals there)."""

CONNECTION_CLASSES = frozenset({ErrorClass.CONNECT, ErrorClass.UPSTREAM})
"""Failures to reach the model's server at all (directly, or from a gateway): a run of these in
a row means the server is down (`engine.runner.OUTAGE_AFTER`)."""

NOT_MEASURED_CLASSES = frozenset(
    {
        ErrorClass.CONNECT,
        ErrorClass.UPSTREAM,
        ErrorClass.RESET,
        ErrorClass.TIMEOUT,
        ErrorClass.TRANSPORT,
        ErrorClass.HTTP_429,
        ErrorClass.HTTP_5XX,
        ErrorClass.AUTH,
        ErrorClass.SCORER_UNAVAILABLE,
    }
)
"""Error classes of an attempt where no model answered: the network or the server failed
(connection refused or reset, a gateway that could not reach its upstream, a timeout, 5xx or
429 after the retries, a refused key), or where no scorer could be run for the answer. Such
an attempt measured nothing: its task stays *not done*, a resume retries it, and it never
enters a figure. Every other error (the scorer itself failed, the server rejected the
request, a stream cut short after part of an answer) is a recorded outcome."""


def measured(outcome: str, error_class: str | None) -> bool:
    """False for an attempt that measured nothing (`NOT_MEASURED_CLASSES`)."""
    return not (outcome == Outcome.ERROR and error_class in NOT_MEASURED_CLASSES)


def task_outcome(outcomes: Iterable[str], verdict: str | None = None) -> Outcome:
    """One task's outcome from its attempts' outcomes and the latest human verdict.

    A person's `pass` or `fail` is final: it decides a task awaiting review, and it replaces
    the scorer's outcome of a scored task (a reviewer flagged it and judged otherwise). A
    `skip`, or no verdict, leaves the attempts to decide: a task passes when any attempt
    passes; otherwise an attempt awaiting a person keeps it in `review`; failing that, any
    measured failure is a `fail`, and only a task whose every attempt errored is an `error`.
    """
    seen = set(outcomes)
    if verdict in (Outcome.PASS, Outcome.FAIL) and seen:
        return Outcome(verdict)
    if Outcome.PASS in seen:
        return Outcome.PASS
    if Outcome.REVIEW in seen:
        return Outcome.REVIEW
    if Outcome.FAIL in seen:
        return Outcome.FAIL
    return Outcome.ERROR


def plural(count: int, word: str) -> str:
    """`1 model`, `2 models`: a count and its noun (an English plural in `s`)."""
    return f"{count} {word}{'' if count == 1 else 's'}"


def money(value: float | None, currency: str = "USD") -> str:
    """The one money format: `$1,234.50` from a dollar up, three significant digits below
    (`$0.0123`, `$0.0000105`), `–` for unknown."""
    if value is None:
        return "–"  # the report's dash for a figure that is not there
    symbol = "$" if currency in ("USD", "") else f"{currency} "
    if value == 0:
        return f"{symbol}0"
    if abs(value) >= 1:
        return f"{symbol}{value:,.2f}"
    # Small costs (fractions of a cent per task are common): three significant digits.
    digits = 2 - math.floor(math.log10(abs(value)))
    return f"{symbol}{value:.{digits}f}".rstrip("0").rstrip(".")

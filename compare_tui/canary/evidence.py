"""Paired evidence from live traffic: B's logged answer and the baseline's answer to the same
request, replayed off-path, both graded by the workload's own checks.

The traffic log (`local/traffic_log.py`) is read from the canary's offset, whole lines only. A
line is B's when it was served under the alias by B's deployment (or, in shadow, is the mirrored
copy on the shadow route). Its request (already scrubbed) is replayed to the baseline's own
endpoint, never through the alias, so no user ever sees that answer; each replay is a row of the
audit ledger (`task_id` `canary:<canary id>:<call id>`). Both answers are graded by the golden
set's scorer of the task whose messages the request carries; a request that matches no task has
no check to grade it by: the canary's judge grades it (`judged.py`), else it is counted as such.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from compare_tui.catalogue import ModelEntry
from compare_tui.goldset import GoldenSet, Task
from compare_tui.scoring.dispatch import score
from compare_tui.scoring.result import Answer, ToolCall
from compare_tui.vocabulary import Outcome

REPLAY_TIMEOUT_S = 120.0


@dataclass(frozen=True)
class LoggedCall:
    """One whole line of the traffic log and where the next one starts."""

    end_offset: int
    record: dict[str, Any]

    @property
    def call_id(self) -> str:
        return str(self.record.get("litellm_call_id") or "")


def read_calls(path: str, offset: int) -> Iterator[LoggedCall]:
    """The log's whole lines after byte `offset` (a line still being written waits)."""
    try:
        with open(path, "rb") as log:
            log.seek(offset)
            position = offset
            for line in log:
                if not line.endswith(b"\n"):
                    return
                position += len(line)
                try:
                    record = json.loads(line)
                except ValueError:
                    record = {}
                yield LoggedCall(position, record if isinstance(record, dict) else {})
    except FileNotFoundError:
        return


def served_by(record: Mapping[str, Any], alias: str, candidate: str, *, shadow: bool) -> bool:
    """Whether the line is an answer of B to the alias's traffic (its mirrored copy in shadow)."""
    from compare_tui.canary.routes import shadow_route

    if record.get("status") not in (None, "success") or record.get("model_id") != candidate:
        return False
    if shadow:
        return record.get("model_group") == shadow_route(alias)
    return record.get("model_group") == alias and not record.get("is_silent_experiment")


def messages_key(messages: Any) -> str:
    """Messages compared by role and content only (what a task's input sends)."""
    shaped = [{"role": m.get("role"), "content": m.get("content")} for m in messages or [] if isinstance(m, dict)]
    return hashlib.sha256(json.dumps(shaped, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


def task_index(goldset: GoldenSet) -> dict[str, Task]:
    return {messages_key(task.input.chat_messages()): task for task in goldset.tasks}


def logged_answer(record: Mapping[str, Any]) -> Answer | None:
    """B's answer as the log holds it (a chat completion, already scrubbed), cut short or not:
    a truncated answer is what the user got, so it is graded as it is. None: no answer."""
    response = record.get("response")
    if isinstance(response, str):
        return Answer(text=response)
    choices = response.get("choices") if isinstance(response, dict) else None
    message = (
        choices[0].get("message") if isinstance(choices, list) and choices and isinstance(choices[0], dict) else None
    )
    if not isinstance(message, dict):
        return None
    content = message.get("content")
    if isinstance(content, list):
        content = "".join(part.get("text", "") for part in content if isinstance(part, dict))
    calls = tuple(
        ToolCall(
            name=str((call.get("function") or {}).get("name") or ""),
            arguments=str((call.get("function") or {}).get("arguments") or ""),
            id=call.get("id"),
        )
        for call in message.get("tool_calls") or []
        if isinstance(call, dict)
    )
    return Answer(text=content if isinstance(content, str) else "", tool_calls=calls)


def replay_body(record: Mapping[str, Any], baseline: ModelEntry) -> dict[str, Any]:
    """The same messages, tools and sampling parameters, to the baseline's own model id,
    streamed as a run's request."""
    params = record.get("model_parameters")
    body: dict[str, Any] = dict(params) if isinstance(params, dict) else {}
    body.update({"model": baseline.model, "messages": record.get("messages") or [], "stream": True})
    # Without it most servers send no token counts in a stream, and a token-priced replay would
    # be counted at $0 against `--max-usd-per-day` and the daily budget.
    body["stream_options"] = {"include_usage": True}
    if record.get("tools"):
        body["tools"] = record["tools"]
    return body


def graded(goldset: GoldenSet, task: Task, answer: Answer) -> Outcome:
    return score(task, goldset.scorer_for(task), answer, set_root=goldset.root).outcome


def paired_outcome(candidate: Outcome, baseline: Outcome) -> int | None:
    """B − A on one request: +1, 0 or −1; None when either was neither pass nor fail."""
    points = {Outcome.PASS: 1, Outcome.FAIL: 0}
    if candidate not in points or baseline not in points:
        return None
    return points[candidate] - points[baseline]


def replay_usd(entry: ModelEntry, prompt: int | None, completion: int | None, duration_ms: float) -> float:
    """What one replay cost at the baseline's cost basis: tokens at its price, or its hourly
    rate for the request's duration; 0 when the entry has no cost basis."""
    cost = entry.cost
    if cost is None:
        return 0.0
    basis = cost.model_dump()
    if basis.get("usd_per_mtok_input") is not None:
        return (
            (prompt or 0) * float(basis["usd_per_mtok_input"])
            + (completion or 0) * float(basis.get("usd_per_mtok_output") or 0)
        ) / 1e6
    if basis.get("usd_per_hour") is not None:
        return float(basis["usd_per_hour"]) * duration_ms / 3.6e6
    return 0.0

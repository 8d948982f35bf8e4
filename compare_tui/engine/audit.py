"""The audit-ledger row of one chat request, made in one place for every sender.

Golden-set attempts, judge calls and tool-call scenarios each send through `client.py` and
record each request as one `AuditRow`: no headers, no body, only its measure (status, bytes,
tokens as the server reported them, duration and the `ErrorClass`)."""

from __future__ import annotations

from typing import Any

from compare_tui.engine.client import Exchange
from compare_tui.store import AuditRow, utc_now


def audit_row(
    ex: Exchange,
    *,
    endpoint: str,
    model: str,
    task_id: str | None,
    attempt: int | None = None,
    run_id: str | None = None,
    toolcall_run_id: str | None = None,
) -> AuditRow:
    """The row for the request `ex` sent to `endpoint` for `model`, owned by a golden-set run
    (`run_id`), a tool-call run (`toolcall_run_id`) or neither (a judge call)."""
    return AuditRow(**_fields(ex, endpoint, model, task_id, attempt, run_id, toolcall_run_id))


def audit_values_of(
    ex: Exchange,
    *,
    endpoint: str,
    model: str,
    task_id: str | None,
    attempt: int | None = None,
    run_id: str | None = None,
) -> dict[str, Any]:
    """`audit_row` as the row itself, unvalidated (as `store.rows.audit_values` makes one; its
    fields are every column): a golden-set run's hot path."""
    return _fields(ex, endpoint, model, task_id, attempt, run_id, None)


def _fields(
    ex: Exchange,
    endpoint: str,
    model: str,
    task_id: str | None,
    attempt: int | None,
    run_id: str | None,
    toolcall_run_id: str | None,
) -> dict[str, Any]:
    prompt, completion = ex.tokens()
    return {
        "at": utc_now(),
        "run_id": run_id,
        "toolcall_run_id": toolcall_run_id,
        "task_id": task_id,
        "attempt": attempt,
        "endpoint": endpoint,
        "model": model,
        "status": ex.status,
        "bytes_in": ex.bytes_in,
        "bytes_out": ex.bytes_out,
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "duration_ms": round(ex.duration_ms, 3),
        "error_class": ex.error_class,
    }

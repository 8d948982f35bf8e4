"""From a catalogue entry and a choice of scenarios to a stored, finished tool-call run.

The key policy is the catalogue's: the entry must be pinned (`refuse_if_needed`) and its key
must be a virtual key (`resolve_key`), which the endpoint accepts (`check_key`: a gateway
confirms an `sk-` virtual key); all refuse before any chat request, so a refused key is never
sent to a model. `--publishable` runs hold the full official suite and nothing of a user's tools.

A stored run is executed under its lease like a golden-set run (`engine/lease.py`), and each
request's audit row is committed before the request goes out (`audit.RequestLedger`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace

from compare_tui.catalogue import ModelEntry, check_key, refuse_if_needed, resolve_key
from compare_tui.endpoint import key_headers
from compare_tui.endpoint.client import ChatClient
from compare_tui.engine.audit import RequestLedger, audit_row
from compare_tui.engine.exchange import RawExchange
from compare_tui.engine.lease import HeldLeases
from compare_tui.engine.settings import RunSettings
from compare_tui.engine.tools_reach import ToolsReach, tools_reach
from compare_tui.errors import CompareTuiError
from compare_tui.store import new_run_id, utc_now
from compare_tui.toolcall.results.model import ScenarioResult, ToolcallRun, ToolcallRunStatus, ToolcallServing
from compare_tui.toolcall.results.storage import ToolcallStore
from compare_tui.toolcall.run.runner import DEFAULT_SETTINGS, run_scenarios, stored_settings
from compare_tui.toolcall.run.server_probe import probe
from compare_tui.toolcall.scenarios.scenario import Scenario
from compare_tui.toolcall.scenarios.suite import Suite
from compare_tui.toolcall.schema.survey import survey
from compare_tui.toolcall.tools.file import ToolsFile


class ToolcallRefused(CompareTuiError, ValueError):
    """The run cannot start as asked; the message says what to change. Nothing was sent."""


@dataclass(frozen=True, slots=True)
class RunRequest:
    entry: ModelEntry
    suite: Suite
    scenarios: tuple[Scenario, ...]
    settings: RunSettings = DEFAULT_SETTINGS
    user_notes: dict[str, str] = field(default_factory=dict)
    tools: ToolsFile | None = None
    publishable: bool = False
    keep_arguments: bool = False
    scenario_patterns: tuple[str, ...] = ()
    skip_invalid_tools: bool = False
    """The scenarios leave out the user's tools whose schema servers refuse (`ToolsFile.refused`)."""


def check_request(request: RunRequest) -> None:
    """Refuse what must never run (before any request or store write)."""
    if request.publishable and request.tools is not None:
        raise ToolcallRefused(
            "--publishable runs hold the official suite only: nothing of your tools may go there; "
            "drop --tools, or drop --publishable to keep the run to yourself"
        )
    if request.publishable and request.scenario_patterns:
        raise ToolcallRefused(
            "--publishable runs hold the whole official suite so that they can be read side by side; drop --scenario"
        )
    if request.publishable and request.keep_arguments:
        raise ToolcallRefused("--publishable runs never keep argument values; drop --keep-arguments")
    if request.settings.attempts != 1:
        raise ToolcallRefused(
            f"a tool-call run sends one request per scenario (attempts 1, not "
            f"{request.settings.attempts}); run it again to measure it again"
        )
    if not request.scenarios:
        raise ToolcallRefused("no scenario matches --scenario; `compare-tui toolcall list` shows the ids and names")
    refuse_if_needed(request.entry)


def tools_file_summary(tools: ToolsFile, skip_invalid: bool = False) -> dict[str, object]:
    """What a run records about the user's tools file: where, its digest, names (original and
    as sent), the notes printed before sending, the tools left out (`--skip-invalid-tools`)
    and, per tool, the schema keywords the checks will not evaluate."""
    return {
        "path": tools.path,
        "digest": tools.digest,
        "shape": tools.shape,
        "notes": list(tools.notes),
        "left_out": dict(tools.refused) if skip_invalid else {},
        "tools": [
            {
                "name": t.name,
                "wire_name": t.wire_name,
                "source": t.source,
                "not_checked": [str(n) for n in survey(t.parameters).not_checked],
                "kept_for_report": sorted(t.extras),
            }
            for t in tools.tools
        ],
    }


def gateway_stated_serving(entry: ModelEntry) -> dict[str, str]:
    """For an entry behind a gateway (which hides the stack's `/props`), the catalogue's
    `[model.serving]` as the user stated it: shown as stated, not verified. Empty otherwise."""
    if entry.gateway is None:
        return {}
    stated = entry.serving.model_dump(exclude={"extra"}, exclude_none=True)
    return {k: str(v) for k, v in stated.items()} | dict(entry.serving.extra)


STATED = "stated, not checked"


def serving_of(entry: ModelEntry, reach: ToolsReach | None) -> ToolcallServing:
    """The run's `serving`: template and parser as the catalogue's `[model.serving]` states
    them (compare-tui's own template named as such), and what the server's rendering showed."""
    notes = entry.serving
    shipped = notes.extra.get("chat_template_file")
    template = f"compare-tui's shipped {shipped}" if shipped else notes.chat_template
    llama = (notes.stack or "").startswith("llama.cpp")
    parser = notes.tool_parser or ("llama.cpp's own, from the chat template" if llama else None)
    out: ToolcallServing = {
        "stack": f"{notes.stack} ({STATED})" if notes.stack else "not stated",
        "template": f"{template} ({STATED})" if template else "not stated",
        "parser": f"{parser} ({STATED})" if parser else "not stated (the server does not report its tool-call parser)",
    }
    if reach is not None:
        out["tools_reach"] = reach.as_dict()
    return out


async def execute(
    request: RunRequest,
    *,
    store: ToolcallStore | None = None,
    environ: Mapping[str, str] | None = None,
    on_result: Callable[[int, ScenarioResult], None] | None = None,
    client: ChatClient | None = None,
) -> ToolcallRun:
    """Run the request's scenarios and return the finished run (stored as it goes when a
    store is given). Raises `ToolcallRefused`/`ModelRefused` before sending anything."""
    check_request(request)
    entry = request.entry
    key = resolve_key(entry, environ)
    await asyncio.to_thread(check_key, entry, key)  # the endpoint (a gateway) accepts the key
    headers = key_headers(key)
    run = ToolcallRun(
        id=new_run_id(),
        created_at=utc_now(),
        model_name=entry.name,
        model_id=entry.model,
        endpoint=entry.endpoint,
        suite_name=request.suite.name,
        suite_version=request.suite.version,
        suite_digest=request.suite.digest,
        user_notes={**gateway_stated_serving(entry), **request.user_notes},
        settings={**stored_settings(request.settings), "scenarios": list(request.scenario_patterns)}
        | ({"gateway": entry.gateway} if entry.gateway else {}),
        tools_file=tools_file_summary(request.tools, request.skip_invalid_tools) if request.tools else None,
        publishable=request.publishable,
        keep_arguments=request.keep_arguments,
        status=ToolcallRunStatus.RUNNING,
    )
    leases = HeldLeases(store.store) if store is not None else None
    ledger = RequestLedger(store.store, lease_token=leases.token) if store is not None and leases else None
    opened: dict[str, int] = {}
    try:
        offered = next((s.tools for s in request.scenarios if s.tools), ())
        reach = await tools_reach(entry.endpoint, entry.model, [t.as_openai() for t in offered], headers)
        run = replace(run, server_notes=tuple(await probe(entry.endpoint, headers)), serving=serving_of(entry, reach))
        if store is not None and leases is not None:
            leases.take(run.id)  # a new id: nobody else holds it, but its writes are fenced all the same
            store.begin(run)

        async def opening(scenario: Scenario) -> None:
            if ledger is not None:  # the row exists before the request leaves
                opened[scenario.id] = await ledger.open(
                    endpoint=run.endpoint, model=run.model_id, task_id=scenario.id, attempt=1, toolcall_run_id=run.id
                )

        def sent(scenario: Scenario, exchange: RawExchange) -> None:
            if store is not None:  # every request to a model endpoint is a row of the audit ledger
                row = audit_row(
                    exchange,
                    endpoint=run.endpoint,
                    model=run.model_id,
                    task_id=scenario.id,
                    attempt=1,
                    toolcall_run_id=run.id,
                )
                store.record_audit(row.model_copy(update={"id": opened.get(scenario.id)}))

        def heard(position: int, result: ScenarioResult) -> None:
            kept = result if request.keep_arguments else result.without_values()
            if store is not None:
                store.add_result(run, position, kept)
            if on_result is not None:
                on_result(position, kept)

        try:
            results = await run_scenarios(
                request.scenarios,
                endpoint=entry.endpoint,
                model_id=entry.model,
                settings=request.settings,
                headers=headers,
                on_result=heard,
                client=client,
                on_exchange=sent,
                before_send=opening,
            )
        except (asyncio.CancelledError, KeyboardInterrupt):
            if store is not None:
                store.finish(run, ToolcallRunStatus.INTERRUPTED)
            raise
    finally:
        if leases is not None:
            leases.close()
    kept = tuple(r if request.keep_arguments else r.without_values() for r in results)
    final = replace(run, status=ToolcallRunStatus.FINISHED, results=kept)
    if store is not None:
        store.finish(final, ToolcallRunStatus.FINISHED)
    return final

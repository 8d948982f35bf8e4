"""Run scenarios against one endpoint: a few requests at a time, each bounded in time.

`run_scenarios` is the IO loop; `evaluate` decides each outcome. Every scenario ends with a
result, including when its request fails (then the outcome says error or unsupported), and
`on_result` hears each one as it finishes so a caller can store it at once.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from contextlib import AsyncExitStack
from typing import Any

from compare_tui.endpoint.client import ChatClient, chat_client
from compare_tui.engine.exchange import RawExchange, chat_chunks
from compare_tui.engine.settings import RunSettings
from compare_tui.toolcall.checks.evaluate import evaluate
from compare_tui.toolcall.results.model import ScenarioResult
from compare_tui.toolcall.scenarios.scenario import Scenario

CONCURRENCY = 2
"""A tool-call run's default concurrency, below the engine's: conformance is not a load test,
and a small local server answers several requests at once only as fast as one."""

DEFAULT_SETTINGS = RunSettings(concurrency=CONCURRENCY)
"""How a tool-call run sends requests unless told otherwise (the engine's `RunSettings`)."""


def stored_settings(settings: RunSettings) -> dict[str, Any]:
    """A tool-call run's settings as its stored header keeps them: every setting but `attempts`,
    which is always 1 here (one request per scenario) and which the stored form never held, and
    `prompt_cache`, which its requests do not carry (it measures conformance, not latency)."""
    return {k: v for k, v in settings.as_dict().items() if k not in ("attempts", "prompt_cache")}


async def run_scenarios(
    scenarios: Sequence[Scenario],
    *,
    endpoint: str,
    model_id: str,
    settings: RunSettings,
    headers: dict[str, str] | None = None,
    on_result: Callable[[int, ScenarioResult], None] | None = None,
    client: ChatClient | None = None,
    on_exchange: Callable[[Scenario, RawExchange], None] | None = None,
    before_send: Callable[[Scenario], Awaitable[None]] | None = None,
) -> list[ScenarioResult]:
    """One result per scenario, in the order given. `on_exchange(scenario, exchange)` hears
    each request as it ends (for the audit ledger), then `on_result(position, result)` its
    result (in finishing order). Without `client`, the requests go through the endpoint's chat
    client (`endpoint.client.chat_client`), as a golden-set run's do. `before_send(scenario)` is
    awaited just before each request goes out (its audit row is written there)."""
    gate = asyncio.Semaphore(max(1, settings.concurrency))

    async def one(position: int, scenario: Scenario) -> ScenarioResult:
        async with gate:
            body = scenario.request_body(model_id, max_tokens=settings.max_tokens, temperature=settings.temperature)
            if before_send is not None:
                await before_send(scenario)
            exchange = await chat_chunks(http, endpoint, body, headers=headers, timeout_s=settings.timeout_s)
        if on_exchange is not None:
            on_exchange(scenario, exchange)
        result = evaluate(scenario, exchange)
        if on_result is not None:
            on_result(position, result)
        return result

    async with AsyncExitStack() as stack:
        http: ChatClient
        if client is not None:
            http = client
        else:
            http = await stack.enter_async_context(
                chat_client(timeout_s=settings.timeout_s, concurrency=settings.concurrency)
            )
        return list(await asyncio.gather(*(one(i, s) for i, s in enumerate(scenarios))))

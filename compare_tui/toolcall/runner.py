"""Run scenarios against one endpoint: a few requests at a time, each bounded in time.

`run_scenarios` is the IO loop; `evaluate` decides each outcome. Every scenario ends with a
result, including when its request fails (then the outcome says error or unsupported), and
`on_result` hears each one as it finishes so a caller can store it at once.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import httpx

from compare_tui.engine.transport import endpoint_client
from compare_tui.toolcall.evaluate import evaluate
from compare_tui.toolcall.exchange import RawExchange, post_chat
from compare_tui.toolcall.results import ScenarioResult
from compare_tui.toolcall.scenario import Scenario


@dataclass(frozen=True, slots=True)
class RunSettings:
    """How requests are sent. Concurrency stays small: conformance is not a load test, and a
    small local server answers several requests at once only as fast as one."""

    max_tokens: int = 256
    temperature: float = 0.0
    timeout_s: float = 120.0
    concurrency: int = 2

    def as_dict(self) -> dict[str, float | int]:
        return {"max_tokens": self.max_tokens, "temperature": self.temperature,
                "timeout_s": self.timeout_s, "concurrency": self.concurrency}


async def run_scenarios(
    scenarios: Sequence[Scenario], *, endpoint: str, model_id: str, settings: RunSettings,
    headers: dict[str, str] | None = None, on_result: Callable[[int, ScenarioResult], None] | None = None,
    client: httpx.AsyncClient | None = None,
    on_exchange: Callable[[Scenario, RawExchange], None] | None = None,
) -> list[ScenarioResult]:
    """One result per scenario, in the order given. `on_exchange(scenario, exchange)` hears
    each request as it ends (for the audit ledger), then `on_result(position, result)` its
    result (in finishing order)."""
    gate = asyncio.Semaphore(max(1, settings.concurrency))
    own = client is None
    http = client or endpoint_client(timeout_s=settings.timeout_s, concurrency=settings.concurrency)

    async def one(position: int, scenario: Scenario) -> ScenarioResult:
        async with gate:
            body = scenario.request_body(model_id, max_tokens=settings.max_tokens, temperature=settings.temperature)
            exchange = await post_chat(http, endpoint, body, headers=headers, timeout_s=settings.timeout_s)
        if on_exchange is not None:
            on_exchange(scenario, exchange)
        result = evaluate(scenario, exchange)
        if on_result is not None:
            on_result(position, result)
        return result

    try:
        return list(await asyncio.gather(*(one(i, s) for i, s in enumerate(scenarios))))
    finally:
        if own:
            await http.aclose()

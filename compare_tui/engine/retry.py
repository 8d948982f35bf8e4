"""Retries with jittered exponential backoff for transport failures, 429 and 5xx.

A retried failure is not a new attempt: the attempt keeps its number, and each HTTP request
is still one row of the audit ledger (the caller writes it through `on_exchange`).
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from compare_tui.engine.exchange import Exchange


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    max_retries: int = 3
    base_s: float = 0.5
    cap_s: float = 30.0
    retry_after_cap_s: float = 120.0
    """A server asking for a longer wait than this is not waited for: the attempt fails."""

    def delay(self, retry: int, exchange: Exchange, rng: random.Random) -> float | None:
        """Seconds to wait before retry number `retry` (1-based), or None to give up."""
        if retry > self.max_retries or not exchange.retryable:
            return None
        if exchange.retry_after_s is not None:
            if exchange.retry_after_s > self.retry_after_cap_s:
                return None
            return exchange.retry_after_s
        # "Full jitter": spreads retries of many concurrent requests apart.
        return rng.uniform(0, min(self.cap_s, self.base_s * 2 ** (retry - 1)))


async def with_retries(
    send: Callable[[], Awaitable[Exchange]],
    policy: RetryPolicy,
    *,
    on_exchange: Callable[[Exchange], Awaitable[None] | None] | None = None,
    rng: random.Random | None = None,
) -> tuple[Exchange, int]:
    """Send until an answer arrives or the policy gives up; return the last exchange and retries used."""
    rng = rng or random.Random()
    retries = 0
    while True:
        exchange = await send()
        if on_exchange is not None:
            result = on_exchange(exchange)
            if asyncio.iscoroutine(result):
                await result
        if exchange.error_class is None:
            return exchange, retries
        wait = policy.delay(retries + 1, exchange, rng)
        if wait is None:
            return exchange, retries
        retries += 1
        await asyncio.sleep(wait)

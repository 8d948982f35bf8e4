"""`gateway up`'s check that the provider takes the key the proxy read, before any run.

One chat request through the gateway, as a run's would go (the engine's one chat client, the
gateway key as bearer), asking for one token: a wrong or revoked provider key is refused by the
provider there, and `gateway up` stops the proxy instead of leaving a catalogue entry whose
every task would fail. The gateway's process reads the provider key once, at its start, so a
check here covers every run through it; a run's own pre-flight (`catalogue.check_key`) does not
repeat it, since each check is a billed request to the provider.

Why not LiteLLM's `GET /health?model=ROUTE`: it makes the proxy send a chat request of its own
(a random prompt, its own `max_tokens`) whose size, tokens and status compare-tui cannot see, so
that request to a model could not be an honest row of the audit ledger; this one is, written
`sent` before it leaves and completed after (no run owns it: `task_id` is `CHECK_TASK_ID`).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterable
from dataclasses import dataclass

from compare_tui.catalogue.keys import mask_provider_keys, redact
from compare_tui.endpoint import key_headers
from compare_tui.endpoint.client import chat_client
from compare_tui.engine.audit import audit_row
from compare_tui.engine.exchange import Exchange, stream_chat
from compare_tui.store import Store, utc_now
from compare_tui.store.rows import audit_values
from compare_tui.vocabulary import ErrorClass

CHECK_TASK_ID = "gateway-up:provider-key-check"
"""The audit row's `task_id` for the check's one request (it belongs to no run)."""
LITELLM_WRAPPING = re.compile(
    r"^(?:litellm\.\w+:\s*)?(?:\w+Error:\s*)?(?:\w+Exception\s*-\s*)?|\s*(?:LiteLLM: model group|Received Model Group).*$",
    re.DOTALL,
)
"""What LiteLLM wraps a provider's error in (`litellm.AuthenticationError: AuthenticationError:
OpenAIException - …`, then `LiteLLM: model group '…' failed …`): the provider's own words stay."""
TIMEOUT_S = 60.0
"""A provider's first answer through a freshly started proxy can take a while."""


@dataclass(frozen=True)
class ProviderCheck:
    """What the check's one request got: `refusal` (what was wrong) and `remedy` (what to do)
    are None when the provider answered."""

    refusal: str | None
    remedy: str | None
    status: int | None
    prompt_tokens: int | None
    completion_tokens: int | None


def check_body(route: str) -> dict[str, object]:
    """The smallest chat request a provider answers: one short message, one token back."""
    return {
        "model": route,
        "messages": [{"role": "user", "content": "Reply with OK."}],
        "max_tokens": 1,
        "temperature": 0,
        "stream": False,
    }


async def _ask(store: Store, url: str, route: str, gateway_key: str) -> Exchange:
    opened = store.open_request(audit_values(endpoint=url, model=route, task_id=CHECK_TASK_ID, attempt=1, at=utc_now()))
    ex = Exchange()
    try:
        async with chat_client(timeout_s=TIMEOUT_S) as client:
            ex = await stream_chat(
                client, url, check_body(route), headers=key_headers(gateway_key), timeout_s=TIMEOUT_S
            )
    finally:
        row = audit_row(ex, endpoint=url, model=route, task_id=CHECK_TASK_ID, attempt=1)
        store.record_audit(row.model_copy(update={"id": opened}))
    return ex


def check_provider_key(
    store: Store, *, url: str, route: str, gateway_key: str, provider: str, key_env: str, secrets: Iterable[str]
) -> ProviderCheck:
    """Send the check's request through the gateway at `url` and say what came back. The
    refusal names what was wrong and what to do, with every value of `secrets` (the keys) and
    anything shaped like a provider key masked."""
    ex = asyncio.run(_ask(store, url, route, gateway_key))
    prompt, completion = ex.tokens()
    if ex.error_class is None:
        return ProviderCheck(None, None, ex.status, prompt, completion)
    said = mask_provider_keys(redact(ex.server_message or ex.error or str(ex.error_class), secrets))
    said = " ".join(LITELLM_WRAPPING.sub("", said).split())[:300]
    if ex.error_class == ErrorClass.AUTH:
        what = f"{provider} refused the key in ${key_env} (through the gateway: HTTP {ex.status}: {said})"
        todo = f"Export the right key in {key_env} (or name another variable with --key-env), then run `compare-tui gateway up` again"
    else:
        where = f"HTTP {ex.status}: {said}" if ex.status is not None else said
        what = f"a one-token request to {provider}/{route} through the gateway failed ({where})"
        todo = f"Check the model id, --api-base and the key in ${key_env}, then run `compare-tui gateway up` again"
    return ProviderCheck(what, todo, ex.status, prompt, completion)

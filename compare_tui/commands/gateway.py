"""`compare-tui gateway up|status|down`: a hosted baseline through a LiteLLM proxy on loopback."""

from __future__ import annotations

import argparse
import re
import secrets
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from compare_tui.commands.common import (
    CommandError,
    add_catalogue_option,
    add_store_option,
    catalogue_path,
    open_store,
    say,
)

if TYPE_CHECKING:
    from compare_tui.local.gateway import GatewayRecord
    from compare_tui.local.provider_check import ProviderCheck
    from compare_tui.store import Store

DESCRIPTION = """\
Compare against the hosted model you run today without handing compare-tui its key. `gateway
up` starts a LiteLLM proxy on 127.0.0.1 whose own process reads your provider key from the
variable --key-env names (default: the provider's usual one, e.g. OPENAI_API_KEY);
compare-tui hands that variable to the proxy's process and never reads, stores or logs it.
It then writes a catalogue entry for the model routed through that gateway (hosted,
provenance by host attestation, token-price cost basis), whose key_env is a gateway key of
its own (--gateway-key-env, default COMPARE_TUI_GATEWAY_KEY: set it first, or one is made
and printed once). A run checks that key with the gateway before its first task.

Before writing the entry, `up` sends one chat request asking for one token through the
gateway (a row of the store's audit ledger): a provider that refuses the key (or the model
id) stops the gateway, and nothing is written.

The proxy is the pinned LiteLLM in $COMPARE_TUI_LITELLM_VENV (what the test command
provisions), else `litellm` on PATH, else --litellm PATH. Prices: --price-in/--price-out
(USD per million tokens) with --price-date and --price-source, else LiteLLM's bundled
price table (dated by when it was installed; the entry's source says so).
"""

EPILOG = """\
examples:
  export OPENAI_API_KEY=…        # read by the gateway's process only
  compare-tui gateway up --provider openai --model gpt-4o-mini
  compare-tui run sets/tickets --baseline openai-gpt-4o-mini --model qwen2.5-coder-0.5b
  compare-tui gateway up --provider anthropic --model claude-3-5-haiku-20241022 --key-env MY_ANTHROPIC \\
      --price-in 0.8 --price-out 4 --price-date 2026-12-01 --price-source https://www.anthropic.com/pricing
  compare-tui gateway status
  compare-tui gateway down
"""


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from compare_tui.local.gateway import DEFAULT_GATEWAY_KEY_ENV, PROVIDERS

    group = subparsers.add_parser(
        "gateway",
        help="a hosted baseline through a LiteLLM proxy compare-tui starts on loopback",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    group.set_defaults(group_parser=group)
    sub = group.add_subparsers(dest="gateway_command", metavar="SUBCOMMAND")
    up = sub.add_parser(
        "up",
        help="start the proxy and write the hosted model's catalogue entry",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    up.add_argument("--provider", required=True, help=f"LiteLLM provider prefix ({', '.join(PROVIDERS)}, …)")
    up.add_argument("--model", required=True, metavar="NAME", help="the provider's model id, e.g. gpt-4o-mini")
    up.add_argument("--key-env", metavar="VAR", help="variable holding the provider key, read by the proxy only")
    up.add_argument(
        "--gateway-key-env",
        default=DEFAULT_GATEWAY_KEY_ENV,
        metavar="VAR",
        help=f"variable holding the gateway's own key (default {DEFAULT_GATEWAY_KEY_ENV}); made and printed when unset",
    )
    up.add_argument("--name", help="the catalogue name (default: PROVIDER-MODEL)")
    up.add_argument("--revision", help="the model revision to record (default: the model id)")
    up.add_argument(
        "--api-base", metavar="URL", help="the provider's API base, when not its default (e.g. an Azure resource)"
    )
    up.add_argument("--port", type=int, help="the proxy's port on 127.0.0.1 (default: a free one)")
    up.add_argument("--litellm", metavar="PATH", help="the litellm executable (default: see above)")
    up.add_argument("--price-in", type=float, metavar="USD", help="USD per million input tokens")
    up.add_argument("--price-out", type=float, metavar="USD", help="USD per million output tokens")
    up.add_argument("--price-date", metavar="YYYY-MM-DD", help="when the price was read")
    up.add_argument("--price-source", metavar="URL", help="where the price was read")
    up.add_argument("--replace", action="store_true", help="replace a catalogue entry of the same name")
    add_catalogue_option(up)
    add_store_option(up)
    up.set_defaults(handler=_up)
    status = sub.add_parser("status", help="pid, port, route, uptime and health of the running proxy")
    status.set_defaults(handler=_status)
    down = sub.add_parser("down", help="stop the proxy `gateway up` started")
    down.set_defaults(handler=_down)


def _cost(args: argparse.Namespace, executable: Path) -> dict[str, Any]:
    from compare_tui.local.gateway import table_price

    given = [args.price_in, args.price_out, args.price_date, args.price_source]
    if all(v is not None for v in given):
        return {
            "basis": "token_price",
            "usd_per_mtok_input": args.price_in,
            "usd_per_mtok_output": args.price_out,
            "captured": args.price_date,
            "source": args.price_source,
        }
    if any(v is not None for v in given):
        raise CommandError("a token price needs all of --price-in, --price-out, --price-date and --price-source")
    price = table_price(executable, args.provider, args.model)
    if price is None:
        raise CommandError(
            f"{args.provider}/{args.model} is not in LiteLLM's bundled price table: give --price-in, --price-out, "
            "--price-date YYYY-MM-DD and --price-source URL"
        )
    return {
        "basis": "token_price",
        "usd_per_mtok_input": price.usd_per_mtok_input,
        "usd_per_mtok_output": price.usd_per_mtok_output,
        "captured": price.captured,
        "source": price.source,
    }


def _up(args: argparse.Namespace) -> int:
    import os

    from compare_tui.catalogue import ModelEntry
    from compare_tui.catalogue.editing import read_for_edit, save, with_entry
    from compare_tui.local import gateway

    key_env = args.key_env or gateway.DEFAULT_KEY_ENV.get(args.provider)
    if key_env is None:
        raise CommandError(f"no usual key variable for provider {args.provider!r}: name it with --key-env VAR")
    executable = gateway.litellm_executable(args.litellm)
    cost = _cost(args, executable)
    name = args.name or re.sub(r"[^A-Za-z0-9._:/@+-]+", "-", f"{args.provider}-{args.model}")
    made_key = None
    gateway_key = os.environ.get(args.gateway_key_env, "").strip()
    if not gateway_key:
        made_key = gateway_key = "sk-" + secrets.token_hex(20)
    entry = ModelEntry.model_validate(
        {
            "name": name,
            "kind": "hosted",
            "endpoint": "http://127.0.0.1:1/v1",  # replaced by the proxy's port below
            "model": args.model,
            "revision": args.revision or args.model,
            "weights_digest": gateway.stated_digest(args.provider, args.model),
            "key_env": args.gateway_key_env,
            "gateway": "litellm",
            "serving": {"stack": f"{args.provider} API through a LiteLLM proxy started by compare-tui gateway up"},
            "cost": cost,
        }
    )
    path = catalogue_path(args.models)
    document, existing = read_for_edit(path)
    if existing is not None and name in existing.names() and not args.replace:
        raise CommandError(f"a model named {name!r} is already in {path}; pass --replace, or choose --name")
    with open_store(args.store, create=True) as store:
        record, check = _start_and_check(args, store, key_env=key_env, gateway_key=gateway_key, executable=executable)
        store_at = store.path
    entry = entry.model_copy(update={"endpoint": record.url})
    stamp = time.strftime("%Y-%m-%d %H:%M:%S %z")
    comment = (
        f"written by `compare-tui gateway up` at {stamp}: {args.provider}/{args.model} through LiteLLM on {record.url}"
    )
    save(with_entry(document, entry, replace=True, comment=comment, path=path), path)
    say(f"gateway: pid {record.pid} on {record.url}, {args.provider}/{args.model} (the proxy reads ${key_env})")
    got = check.completion_tokens
    tokens = "" if got is None else f", {got} token{'s' if got != 1 else ''} back"
    say(
        f"provider: {args.provider} took the key (one chat request through the gateway, HTTP {check.status}{tokens}; "
        f"a row of the audit ledger in {store_at})"
    )
    say(f"catalogue: {name} in {path} (key_env = {args.gateway_key_env}, cost {cost['source']})")
    if made_key is not None:
        print(f"export {args.gateway_key_env}={made_key}   # the gateway's own key; runs need it, shown once")
    say(f"log: {record.log}; stop with `compare-tui gateway down`")
    return 0


def _start_and_check(
    args: argparse.Namespace, store: Store, *, key_env: str, gateway_key: str, executable: Path
) -> tuple[GatewayRecord, ProviderCheck]:
    """Start the gateway, then send its one check request; stop it again when the provider refuses."""
    import os

    from compare_tui.local import gateway
    from compare_tui.local.provider_check import check_provider_key

    record = gateway.up(
        provider=args.provider,
        model=args.model,
        route=args.model,
        key_env=key_env,
        gateway_key=gateway_key,
        gateway_key_env=args.gateway_key_env,
        api_base=args.api_base,
        port=args.port,
        litellm=str(executable),
    )
    try:
        # The provider key is read here only to mask it out of what the provider answered.
        check = check_provider_key(
            store,
            url=record.url,
            route=record.route,
            gateway_key=gateway_key,
            provider=args.provider,
            key_env=key_env,
            secrets=[os.environ.get(key_env, ""), gateway_key],
        )
    except BaseException:
        gateway.down()
        raise
    if check.refusal is not None:
        gateway.down()
        raise CommandError(
            f"refused: {check.refusal}; the gateway was stopped and nothing was written to the catalogue. {check.remedy}"
        )
    return record, check


def _status(args: argparse.Namespace) -> int:
    from compare_tui.local import gateway

    found = gateway.status()
    if found is None:
        print("no gateway recorded (start one with `compare-tui gateway up`)")
        return 1
    r = found.record
    state = "healthy" if found.healthy else ("running, not answering" if found.alive else "not running")
    print(
        f"pid {r.pid}  {r.url}  {r.provider}/{r.model}  {state}  up {found.uptime_s:.0f} s  key ${r.key_env} (read by the proxy)"
    )
    return 0 if found.healthy else 1


def _down(args: argparse.Namespace) -> int:
    from compare_tui.local import gateway

    print(f"gateway: {gateway.down()}")
    return 0

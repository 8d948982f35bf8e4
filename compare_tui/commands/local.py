"""`compare-tui local up | status | down`: the command line of the embedded default
(`compare_tui/local/`). Exit codes: 0 done, 1 a `LocalError` (the CLI prints it, with its fix,
as every error), 2 bad usage (argparse).
"""

from __future__ import annotations

import argparse
import json
import sys
import textwrap
from dataclasses import asdict

from compare_tui.local import catalogue_writer, cluster
from compare_tui.local.bundled import BUNDLED

_EXAMPLES = """\
examples:
  compare-tui local up                         # all of them: ports 18181-18183
  compare-tui local up --model smollm2-135m    # only one of them
  compare-tui local up --parallel 2 --ctx 8192 --usd-per-hour 0.25
  compare-tui local status
  compare-tui local down

bundled models:
""" + "\n".join(
    textwrap.fill(f"{m.name}: {m.description}, {m.quantisation}", 78, initial_indent="  ", subsequent_indent="    ")
    for m in BUNDLED.values()
)


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> argparse.ArgumentParser:
    """Add the `local` command (with `up`, `status`, `down`) to a CLI's subparsers. The parsed
    namespace carries `handler`: call `args.handler(args)` to get the exit code."""
    local = subparsers.add_parser(
        "local",
        help="run the embedded llama.cpp servers with the bundled small models",
        description="Start, inspect and stop local llama.cpp servers for the bundled models.",
        epilog=_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    actions = local.add_subparsers(dest="local_action", metavar="{up,status,down}", required=True)

    up = actions.add_parser(
        "up",
        help="start the servers and write their models.toml",
        description="Start one llama-server per bundled model on 127.0.0.1, wait until each is\n"
        "healthy, and write a models.toml catalogue with sha256 pins of the GGUF files.",
        epilog=_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    up.add_argument(
        "--model",
        action="append",
        choices=sorted(BUNDLED),
        metavar="NAME",
        help="a bundled model to start (repeatable; default: all)",
    )
    up.add_argument(
        "--parallel",
        type=int,
        metavar="N",
        default=cluster.DEFAULT_PARALLEL,
        help="server slots, i.e. concurrent requests (default: %(default)s)",
    )
    up.add_argument(
        "--ctx",
        type=int,
        metavar="TOKENS",
        default=cluster.DEFAULT_CTX,
        help="context tokens per server, split over the slots (default: %(default)s)",
    )
    up.add_argument(
        "--usd-per-hour",
        type=float,
        metavar="USD",
        default=catalogue_writer.DEFAULT_USD_PER_HOUR,
        help="hardware cost basis written to the catalogue (default: %(default).2f, an assumed CPU box)",
    )
    up.add_argument(
        "--catalogue", metavar="PATH", help="where to write models.toml (default: <state dir>/local/models.toml)"
    )
    up.add_argument(
        "--port",
        type=int,
        help="first port to use; the next models take the next "
        "ports (default: each model its own port, 18181 + its place in the bundled list, "
        "when free, so its endpoint is the same after a restart; else a free port)",
    )
    up.add_argument(
        "--threads",
        type=int,
        metavar="N",
        help="threads per server (default: the usable cores shared between the servers, at least 1)",
    )
    up.add_argument(
        "--default-threads",
        action="store_true",
        help="leave threads to llama.cpp (every server uses every core; slow when several run)",
    )
    up.add_argument(
        "--no-jinja",
        action="store_true",
        help="start without the Jinja chat template engine (requests with tools fail)",
    )

    st = actions.add_parser("status", help="show the servers compare-tui started")
    st.add_argument("--json", action="store_true", help="print JSON instead of a table")

    down = actions.add_parser("down", help="stop the servers compare-tui started")
    down.add_argument("--model", action="append", metavar="NAME", help="only this one (repeatable)")

    local.set_defaults(handler=run)
    return local


def _up(args: argparse.Namespace) -> int:
    result = cluster.up(
        args.model,
        parallel=args.parallel,
        ctx=args.ctx,
        usd_per_hour=args.usd_per_hour,
        catalogue_path=args.catalogue,
        jinja=not args.no_jinja,
        port=args.port,
        threads=args.threads,
        default_threads=args.default_threads,
    )
    for info in result.servers:
        note = "already running" if info.name in result.reused else "started"
        threads = (
            "default threads" if info.threads is None else f"{info.threads} thread{'s' if info.threads > 1 else ''}"
        )
        print(
            f"{info.name:18} {note:15} pid {info.pid:<7} {info.endpoint}  "
            f"(context {info.props.get('n_ctx')} tokens per request, {threads}, log {info.log_path})"
        )
    print(f"catalogue written: {result.catalogue_path}")
    print("stop them with: compare-tui local down")
    return 0


def _format_uptime(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m{secs:02d}s" if hours else f"{minutes}m{secs:02d}s"


def _status(args: argparse.Namespace) -> int:
    rows = cluster.status()
    if args.json:
        print(json.dumps([{**asdict(r), "log_path": str(r.log_path)} for r in rows], indent=2))
        return 0
    if not rows:
        print("no local servers are running (start them with: compare-tui local up)")
        return 0
    print(f"{'model':18} {'pid':>7} {'port':>6} {'uptime':>10}  health")
    for r in rows:
        uptime = _format_uptime(r.uptime_s) if r.running else "-"
        print(f"{r.name:18} {r.pid:>7} {r.port:>6} {uptime:>10}  {r.health}")
    return 0


def _down(args: argparse.Namespace) -> int:
    outcomes = cluster.down(args.model)
    if not outcomes:
        print("nothing to stop: no local servers are recorded")
    explain = {
        "stopped": "stopped",
        "killed": "stopped (needed SIGKILL)",
        "already gone": "was no longer running (entry cleared)",
        "not ours": "pid now belongs to another program: left alone (entry cleared)",
    }
    for o in outcomes:
        print(f"{o.name:18} pid {o.pid:<7} {explain.get(o.outcome, o.outcome)}")
    return 0


def run(args: argparse.Namespace) -> int:
    """Run the parsed `local` command; returns the exit code. A `LocalError` goes up to the CLI."""
    handlers = {"up": _up, "status": _status, "down": _down}
    try:
        return handlers[args.local_action](args)
    except KeyboardInterrupt:
        print("interrupted: servers started by this command were stopped", file=sys.stderr)
        return 130

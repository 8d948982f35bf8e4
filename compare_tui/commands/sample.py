"""`compare-tui sample LOGS… --out DIR --samples N` (turns) or `--whole-runs [--runs N]` (whole
agent runs): a golden set from logged traffic."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from compare_tui.commands.common import CommandError

DESCRIPTION = """\
Turn logged chat traffic (JSONL, plain or gzip) into a golden set a comparison can run.

Individual assistant turns are sampled from the window, newer ones more likely
(half-life = window / 4), at most 5 per conversation spread over its early, middle and
late thirds. Each turn becomes a task: the conversation up to that turn (same tools) as
input, the logged reply as the expected outcome, scored by `tool_call` (exact match) for
tool calls and by --text-scorer (default `human`) for text. E-mail addresses, phone
numbers, API keys and tokens, card numbers, IP addresses and --redact matches are
replaced by [REDACTED:kind] before anything is written. sample.json in the output pins
the source digests, window, seed, counts, sampling rule, redaction counts and skipped lines.

Deterministic: the same logs, options and --seed give the same folder byte for byte. The
window ends at --now, or by default at the newest usable timestamp in the logs (not the
wall clock), so re-running later on the same logs gives the same sample.

Record shapes accepted, one JSON object per line:
  plain      {"request": {messages, tools, model, …}, "response": chat completion | message
             | string, "timestamp": ISO 8601 | epoch seconds, "conversation_id": …}
  batch      OpenAI batch output {"custom_id", "response": {"status_code", "body"}}, with
             the request embedded as "request" or from the batch input file (same
             custom_id) given among LOGS
  litellm    {"messages", "response", "startTime", "model", "metadata", …}
Lines that cannot be used are counted per reason, with the first few file:line places.

--whole-runs samples whole agent runs instead of turns (--runs N, default 20): a run is a
conversation logged as one record per assistant step, with tool calls, each followed by its
tool result, ending in a final text answer. Every step becomes a task carrying
trace = {run, step, of}: its input is exactly the history and tools the agent saw, its
expected outcome the recorded action (a tool call: `tool_call`, arguments matched as
--arguments-match, default subset; the final text: --text-scorer). Runs with a missing step,
no final answer, two different records of one step, a tool call without its result, or a
result whose tool_call_id does not match are skipped whole, counted per reason.
"""

EPILOG = """\
examples:
  compare-tui sample logs/2025-03-*.jsonl.gz --out sets/traffic --samples 200
  compare-tui sample gateway.jsonl --out sets/billing --samples 50 --window 7d --tag billing \\
      --model gpt-4o --seed 7 --redact 'ACME-[0-9]{6}' --now 2025-03-10T00:00:00Z
  compare-tui sample batch_input.jsonl batch_output.jsonl --out sets/batch --samples 100
  compare-tui sample agent.jsonl --whole-runs --runs 30 --out sets/agent-replay --seed 7
"""


DEFAULT_RUNS = 20


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "sample",
        help="build a golden set from logged traffic (recency-weighted, scrubbed, pinned)",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "logs", nargs="+", metavar="LOGS", help="JSONL log files, plain or gzip (told apart by content)"
    )
    parser.add_argument(
        "--out", required=True, metavar="DIR", help="folder for the sampled golden set (must be empty, or see --force)"
    )
    parser.add_argument(
        "--samples",
        type=int,
        metavar="N",
        help="how many turns to sample (fewer if the logs hold fewer); required without --whole-runs",
    )
    parser.add_argument(
        "--whole-runs",
        action="store_true",
        help="sample whole agent runs: every step a task with trace = {run, step, of}",
    )
    parser.add_argument(
        "--runs",
        type=int,
        metavar="N",
        help=f"with --whole-runs: how many runs (default: {DEFAULT_RUNS}; fewer if the logs hold fewer)",
    )
    parser.add_argument(
        "--arguments-match",
        choices=("exact", "subset"),
        help="how tool-call arguments are matched (default: exact for turns, subset for --whole-runs)",
    )
    parser.add_argument(
        "--window",
        default="30d",
        metavar="SPAN",
        help="how far back to sample: 1h to 30d, e.g. 1h, 12h, 1d, 7d (default and maximum: 30d)",
    )
    parser.add_argument(
        "--seed", default="0", metavar="S", help="sampling seed; the same seed gives the same sample (default: 0)"
    )
    parser.add_argument(
        "--tag", action="append", default=[], metavar="T", help="keep turns logged with this tag (repeat: any of them)"
    )
    parser.add_argument(
        "--model",
        action="append",
        default=[],
        metavar="M",
        help="keep turns logged for this model (repeat: any of them)",
    )
    parser.add_argument(
        "--redact",
        action="append",
        default=[],
        metavar="REGEX",
        help="also redact matches of this regular expression (repeatable)",
    )
    parser.add_argument(
        "--now",
        metavar="ISO",
        help="end of the window, e.g. 2025-03-10T00:00:00Z (default: the newest usable timestamp in the logs)",
    )
    parser.add_argument(
        "--text-scorer",
        choices=("human", "exact", "regex"),
        default="human",
        help="scorer for free-text replies (default: human; tool calls always use tool_call)",
    )
    parser.add_argument(
        "--workload-id",
        default="sampled-traffic",
        metavar="ID",
        help="the set's workload_id (default: sampled-traffic)",
    )
    parser.add_argument("--force", action="store_true", help="replace the sampled set already in --out")
    parser.add_argument(
        "--json", action="store_true", help="print sample.json (plus the set's digest) instead of a summary"
    )
    parser.set_defaults(handler=_sample)


def _progress(stage: str, lines: int) -> None:
    print(f"\r{stage}: {lines:,} lines", end="", file=sys.stderr, flush=True)


def _count(args: argparse.Namespace) -> int:
    """How many turns (or, with --whole-runs, runs) to sample; refuses a mixed-up command."""
    if args.whole_runs:
        if args.samples is not None:
            raise CommandError("--samples counts turns; with --whole-runs give --runs N (how many runs)")
        return args.runs if args.runs is not None else DEFAULT_RUNS
    if args.runs is not None:
        raise CommandError("--runs counts whole agent runs: add --whole-runs, or give --samples N for turns")
    if args.samples is None:
        raise CommandError("give --samples N (how many turns), or --whole-runs [--runs N] for whole agent runs")
    return int(args.samples)


def _sample(args: argparse.Namespace) -> int:
    from compare_tui.goldset import GoldenSetError, load_golden_set
    from compare_tui.sampling import SampleOptions, SamplingError, sample_logs, sample_runs, write_sampled_set
    from compare_tui.sampling.writer import check_folder

    options = SampleOptions(
        samples=_count(args),
        window=args.window,
        seed=args.seed,
        models=tuple(args.model),
        tags=tuple(args.tag),
        redact=tuple(args.redact),
        now=args.now,
        text_scorer=args.text_scorer,
        workload_id=args.workload_id,
        tool_match=args.arguments_match,
    )
    sample = sample_runs if args.whole_runs else sample_logs
    out = Path(args.out)
    show_progress = sys.stderr.isatty() and not args.json
    try:
        check_folder(out, args.force)  # refuse before reading a 1 GB log, not after
        sampled = sample(args.logs, options, progress=_progress if show_progress else None)
        write_sampled_set(sampled, out, force=args.force)
    except SamplingError as exc:
        raise CommandError(str(exc)) from None
    finally:
        if show_progress:
            print("\r\033[K", end="", file=sys.stderr, flush=True)
    try:
        goldset = load_golden_set(out)
    except GoldenSetError as exc:  # a bug, not the user's doing: say so plainly
        raise CommandError(f"the sampled set in {out} does not load ({exc}); please report this", exit_code=1) from None
    if args.json:
        print(json.dumps({"path": str(out), "digest": goldset.digest, **sampled.info}, indent=2, ensure_ascii=False))
        return 0
    _summary(sampled.info, out, goldset.digest)
    return 0


def _summary(info: dict[str, Any], out: Path, digest: str) -> None:
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    console = Console(highlight=False)
    counts, window = info["counts"], info["window"]
    runs = info.get("unit") == "run"
    if runs:
        console.print(
            f"[bold]sampled {counts['sampled_runs']} whole agent runs[/] ({counts['sampled_turns']} steps, "
            f"{counts['by_reply']['tool_call']} tool calls, {counts['by_reply']['text']} final answers) → {escape(str(out))}"
        )
    else:
        console.print(
            f"[bold]sampled {counts['sampled_turns']} turns[/] from {counts['sampled_conversations']} conversations → {escape(str(out))}"
        )
    console.print(f"digest   {digest}")
    console.print(f"window   {window['length']}: {window['start']} → {window['end']} (end: {window['end_from']})")
    if runs:
        console.print(
            f"lines    {counts['lines']:,} read, {counts['usable_turns']:,} usable steps; runs: {counts['complete_runs'] + counts['skipped_runs']} "
            f"found, {counts['complete_runs']} complete, {counts['skipped_runs']} skipped; tool-call arguments matched {info['rule']['arguments_match']}"
        )
        if counts["sampled_runs"] < info["requested_samples"]:
            console.print(
                f"[yellow]note[/]     asked for {info['requested_samples']} runs, the window held only {counts['sampled_runs']} complete runs"
            )
    else:
        console.print(
            f"lines    {counts['lines']:,} read, {counts['usable_turns']:,} usable turns, {counts['turns_in_window']:,} in the window; "
            f"thirds early {counts['by_part']['early']} / middle {counts['by_part']['middle']} / late {counts['by_part']['late']}"
        )
        if counts["sampled_turns"] < info["requested_samples"]:
            console.print(
                f"[yellow]note[/]     asked for {info['requested_samples']}, the window held only {counts['sampled_turns']} usable turns (5 per conversation at most)"
            )
    redaction = info["redaction"]["replaced"]
    console.print(
        "redacted " + (", ".join(f"{kind}×{n}" for kind, n in redaction.items()) if redaction else "nothing matched")
    )
    if info["skipped"]:
        table = Table("skipped", "lines / runs" if runs else "lines", "why", "first at", box=None, pad_edge=False)
        for reason, entry in info["skipped"].items():
            table.add_row(reason, f"{entry['count']:,}", entry["meaning"], escape(", ".join(entry["first"])))
        console.print(table)
    console.print(
        "[dim]a pass means agreement with the logged baseline, not ground truth; see golden.toml caveats and sample.json[/]"
    )

"""`compare-tui models add | list | show | verify | remove`: the catalogue's front door.

Pins are computed (the weights are hashed) or discovered (the server's self-description,
a Hugging Face cache snapshot, Ollama's digest), never typed. Exit codes: 0 done, 1
`verify` found drift, 2 bad input or a refusal (nothing written).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from compare_tui.commands.common import CommandError, add_catalogue_option, add_store_option, catalogue_path, open_store

if TYPE_CHECKING:
    from compare_tui.catalogue import Catalogue

_ADD_EXAMPLES = """\
examples:
  # a llama.cpp server and the folder it loads weights from
  compare-tui models add qwen-0.5b --endpoint http://127.0.0.1:8080/v1 \\
      --weights-dir ~/.cache/huggingface/hub/models--Qwen--Qwen2.5-0.5B-Instruct-GGUF/snapshots/<commit> \\
      --usd-per-hour 0.50
  # an Ollama model (the weights file and revision are read from Ollama)
  compare-tui models add llama3.2 --endpoint http://127.0.0.1:11434/v1 --model llama3.2:latest --usd-per-hour 0.30
  # a hosted model behind a LiteLLM gateway, charged by token
  compare-tui models add gpt-4o-mini --kind hosted --endpoint http://127.0.0.1:4000/v1 --gateway litellm \\
      --key-env COMPARE_TUI_KEY --revision 2024-07-18 --price-in 0.15 --price-out 0.60 \\
      --price-date 2026-11-30 --price-source https://openai.com/api/pricing
"""

_EXAMPLES = """\
examples:
  compare-tui models list
  compare-tui models show smollm2-135m
  compare-tui models verify --all
  compare-tui models remove old-candidate
"""


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    group = subparsers.add_parser(
        "models",
        help="add, list, verify and remove catalogue models",
        description="Manage the model catalogue (models.toml) with pins computed "
        "from the weights and read from the server.",
        epilog=_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    group.set_defaults(group_parser=group)
    sub = group.add_subparsers(dest="models_command", metavar="SUBCOMMAND")

    add = sub.add_parser(
        "add",
        help="probe an endpoint, hash its weights and add the model",
        description="Probe the endpoint, hash every weights file (local) and write a "
        "pinned entry into the catalogue, keeping its comments and order. Nothing is "
        "written unless every step succeeds.",
        epilog=_ADD_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add.add_argument("name", help="what users type and see (--model NAME in `run`)")
    add.add_argument(
        "--endpoint", required=True, metavar="URL", help="OpenAI-compatible base URL, e.g. http://127.0.0.1:8080/v1"
    )
    add.add_argument(
        "--model",
        dest="model_id",
        metavar="ID",
        help="the model id the server serves (default: NAME if served, else the only one it serves)",
    )
    add.add_argument(
        "--kind",
        choices=("local", "hosted"),
        default="local",
        help="local: weights hashed here (default); hosted: provenance by host attestation",
    )
    weights = add.add_mutually_exclusive_group()
    weights.add_argument("--weights-dir", metavar="DIR", help="the folder the server loads weights from")
    weights.add_argument("--weights", nargs="+", metavar="FILE", default=[], help="the weights files themselves")
    add.add_argument("--revision", metavar="REV", help="required unless discovered (HF cache snapshot, Ollama digest)")
    add.add_argument("--host-digest", metavar="DIGEST", help="hosted: the digest the host states (sha256:…)")
    add.add_argument("--key-env", metavar="VAR", help="environment variable holding a virtual key")
    add.add_argument("--usd-per-hour", type=float, metavar="X", help="hardware cost basis: the box's $/hour")
    add.add_argument(
        "--gpu-count",
        type=int,
        metavar="N",
        help="GPUs the hourly rate covers (0: a CPU box; default: read from the DCGM exporter of "
        "--note gpu_telemetry=dcgm=HOST:PORT, else from NVML when the endpoint is on this machine)",
    )
    add.add_argument("--price-in", type=float, metavar="USD_PER_MTOK", help="token price of input tokens")
    add.add_argument("--price-out", type=float, metavar="USD_PER_MTOK", help="token price of output tokens")
    add.add_argument("--price-date", metavar="YYYY-MM-DD", help="when the price was read")
    add.add_argument("--price-source", metavar="URL", help="where the price was read")
    add.add_argument(
        "--note",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a stated serving note (stack, tool_parser, quantisation, … or any key)",
    )
    add.add_argument("--gateway", choices=("litellm",), help="the endpoint is a gateway in front of the stack")
    add.add_argument("--replace", action="store_true", help="overwrite an entry of the same name")
    add_catalogue_option(add)
    add.set_defaults(handler=_add)

    listing = sub.add_parser(
        "list",
        help="every entry and whether a run would be refused; with --for SET, priced and measured for that workload",
        description="Every catalogue entry and whether a run would be refused. With --for SET: today's "
        "model for that workload (its price and recent spend), each model's blended price at the "
        "workload's token mix, projected savings, pass rate from this store's past runs, price "
        "groups and the recommended pre-selection.",
    )
    listing.add_argument("--json", action="store_true", help="print JSON instead of a table (same as --format json)")
    listing.add_argument(
        "--for",
        dest="for_set",
        metavar="SET",
        help="a golden set folder: price and measure the models for its workload",
    )
    listing.add_argument(
        "--baseline", metavar="NAME", help="with --for: today's model (default: the workload's promoted baseline)"
    )
    listing.add_argument("--format", choices=("text", "json"), default="text", help="output format (default text)")
    add_catalogue_option(listing)
    add_store_option(listing)
    listing.set_defaults(handler=_list)

    show = sub.add_parser(
        "show", help="one entry in full, with its readiness and the server's live serving settings beside it"
    )
    show.add_argument("name")
    show.add_argument("--json", action="store_true", help="print JSON instead of TOML")
    add_catalogue_option(show)
    show.set_defaults(handler=_show)

    verify = sub.add_parser(
        "verify",
        help="re-hash weights against the pins and ask the server what it loaded and how it is "
        "configured, beside the catalogue's [model.serving] (exit 1 when the weights drifted or the "
        "server loaded others)",
        epilog="example:\n  compare-tui models verify smollm2-135m",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    target = verify.add_mutually_exclusive_group(required=True)
    target.add_argument("name", nargs="?")
    target.add_argument("--all", action="store_true", help="every entry")
    add_catalogue_option(verify)
    verify.set_defaults(handler=_verify)

    remove = sub.add_parser("remove", help="remove an entry, keeping the rest of the file as it is")
    remove.add_argument("name")
    remove.add_argument(
        "--force",
        action="store_true",
        help="remove it even when it is some workload's baseline (the decisions stay in the store)",
    )
    add_catalogue_option(remove)
    add_store_option(remove)
    remove.set_defaults(handler=_remove)


def _path(args: argparse.Namespace) -> Path:
    return catalogue_path(args.models)


def _catalogue(args: argparse.Namespace) -> Catalogue:
    from compare_tui.commands.common import load_catalogue_or_fail

    return load_catalogue_or_fail(args.models)


class _HashProgress:
    """Bytes hashed over all files, as a Rich bar on a terminal, else one line per file, on stderr."""

    def __init__(self) -> None:
        self.done: dict[str, int] = {}
        self.totals: dict[str, int] = {}
        self.bar = None
        if sys.stderr.isatty():
            from rich.console import Console
            from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TransferSpeedColumn

            self.bar = Progress(
                TextColumn("hashing"),
                BarColumn(),
                DownloadColumn(),
                TransferSpeedColumn(),
                console=Console(stderr=True),
                transient=True,
            )
            self.task = self.bar.add_task("hashing", total=None)

    def __enter__(self) -> _HashProgress:
        sys.stdout.flush()  # every line printed before the hashing shows before its progress
        if self.bar is not None:
            self.bar.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.bar is not None:
            self.bar.stop()

    def __call__(self, name: str, done: int, total: int) -> None:
        self.done[name], self.totals[name] = done, total
        if self.bar is not None:
            self.bar.update(self.task, completed=sum(self.done.values()), total=sum(self.totals.values()))
        elif done == total:
            # What stdout holds goes out first: into a pipe it is block-buffered, and a buffer
            # flushed between a line and its newline ran this line on from that one
            # (`…/smollm2-135mhashed model.safetensors`) where both streams share a file.
            sys.stdout.flush()
            print(f"hashed {name} ({total / 2**20:.1f} MiB)", file=sys.stderr, flush=True)


def _add(args: argparse.Namespace) -> int:
    from compare_tui.catalogue import CatalogueError
    from compare_tui.catalogue.adding import AddRequest, add_model
    from compare_tui.vocabulary import ModelKind

    request = AddRequest(
        name=args.name,
        endpoint=args.endpoint,
        model=args.model_id,
        kind=ModelKind(args.kind),
        weights_dir=Path(args.weights_dir).expanduser() if args.weights_dir else None,
        weights=tuple(Path(w).expanduser() for w in args.weights),
        revision=args.revision,
        key_env=args.key_env,
        usd_per_hour=args.usd_per_hour,
        **_gpu_count(args),
        price_in=args.price_in,
        price_out=args.price_out,
        price_date=args.price_date,
        price_source=args.price_source,
        host_digest=args.host_digest,
        notes=tuple(args.note),
        gateway=args.gateway,
        replace=args.replace,
    )
    try:
        with _HashProgress() as progress:
            outcome = add_model(request, _path(args), progress=progress)
    except CatalogueError as exc:
        raise CommandError(f"models add: {exc}; nothing was written") from None
    entry = outcome.entry
    verb = "replaced" if outcome.replaced else "added"
    pinned = (
        f"{len(entry.files)} file(s) pinned, {outcome.bytes_hashed / 2**20:.1f} MiB hashed"
        if entry.files
        else "host attestation"
    )
    print(f"{verb} {entry.name} ({entry.kind}, model {entry.model!r}) in {outcome.path}: {pinned}")
    print(f"  revision {entry.revision}; weights_digest {entry.weights_digest}")
    for finding in outcome.findings:
        print(f"  {finding}")
    print(f"next: compare-tui models verify {entry.name}   then   compare-tui run SET --model {entry.name}")
    return 0


def _gpu_count(args: argparse.Namespace) -> dict[str, Any]:
    """`--gpu-count`, else the count read where the endpoint's GPUs can be seen: its DCGM
    exporter (`--note gpu_telemetry=dcgm=HOST:PORT`), or NVML when the endpoint is on this
    machine; else nothing (the entry then says the count is not stated). Only for a hardware
    cost basis."""
    if args.usd_per_hour is None:
        return {}
    if args.gpu_count is not None:
        if args.gpu_count < 0:
            raise CommandError(f"--gpu-count is a number of GPUs, 0 or more (got {args.gpu_count})")
        return {"gpu_count": args.gpu_count}
    telemetry = next(
        (n.partition("=")[2].strip() for n in args.note if n.partition("=")[0].strip() == "gpu_telemetry"), None
    )
    if telemetry:
        from compare_tui.endpoint.client import probe_client
        from compare_tui.endpoint.dcgm import parse_gpu_telemetry, read_dcgm

        try:
            where = parse_gpu_telemetry(telemetry)
            with probe_client(timeout_s=5.0) as client:
                devices = read_dcgm(where, client)
        except Exception as exc:  # noqa: BLE001 - any failure is the user's to fix, in one line
            raise CommandError(
                f"models add: the GPU count could not be read from {telemetry} ({exc}); give --gpu-count N; "
                "nothing was written"
            ) from None
        return {
            "gpu_count": len(devices),
            "gpu_count_read": f"read from the DCGM exporter at {where.host}:{where.port}",
        }
    if (urlsplit(args.endpoint).hostname or "") in ("127.0.0.1", "localhost", "::1"):
        from compare_tui.engine.gpu import nvml_devices

        count, reason = nvml_devices()
        return {"gpu_count": count, "gpu_count_read": f"read by NVML on this machine{f' ({reason})' if reason else ''}"}
    return {}


def _list(args: argparse.Namespace) -> int:
    from compare_tui.catalogue.readiness import catalogue_rows
    from compare_tui.engine.serving import served_refusal

    as_json = args.json or args.format == "json"
    if args.for_set:
        return _list_for(args, as_json)
    if args.baseline:
        raise CommandError("--baseline goes with --for SET (the workload it is today's model for)")
    rows = catalogue_rows(_catalogue(args), served=served_refusal)
    if as_json:
        print(json.dumps([row.as_json() for row in rows], indent=2))
        return 0
    from rich.console import Console
    from rich.table import Table

    # Two lines a model, so that 80 columns hold the endpoint whole (the bundled models differ
    # only by port): name over endpoint, never cut; the run state wraps on words.
    table = Table(box=None, pad_edge=False)
    table.add_column("model / endpoint", no_wrap=True)
    table.add_column("kind", no_wrap=True)
    table.add_column("files", no_wrap=True, justify="right")
    table.add_column("cost basis")
    table.add_column("run", ratio=1)
    for row in rows:
        entry = row.entry
        state = "ready" if row.readiness.ready else "refused: " + "; ".join(row.readiness.reasons)
        table.add_row(
            f"{entry.name}\n{entry.endpoint}",
            entry.kind + (" (gateway)" if entry.gateway else ""),
            str(len(entry.files)),
            row.cost,
            state,
        )
    Console(soft_wrap=False).print(table)
    return 0


def _list_for(args: argparse.Namespace, as_json: bool) -> int:
    from compare_tui.candidates import load_shortlist, read_gateway_log, shortlist_json
    from compare_tui.candidates.render import render_text
    from compare_tui.commands.common import load_set_or_fail
    from compare_tui.local.gateway import gateway_traffic_log

    golden = load_set_or_fail(args.for_set)
    catalogue = _catalogue(args)
    if args.baseline and args.baseline not in catalogue:
        catalogue.get(args.baseline)  # raises UnknownModel, naming what the catalogue has
    with open_store(args.store) as store:
        shortlist = load_shortlist(
            store,
            catalogue,
            golden.manifest.workload_id,
            digest=golden.digest,
            baseline=args.baseline,
            traffic=read_gateway_log(gateway_traffic_log(), [golden.manifest.workload_id]),
        )
    print(json.dumps(shortlist_json(shortlist), indent=2) if as_json else render_text(shortlist))
    return 0


def _show(args: argparse.Namespace) -> int:
    from compare_tui.catalogue import CatalogueError
    from compare_tui.catalogue.loader import entry_table
    from compare_tui.catalogue.readiness import readiness
    from compare_tui.engine.serving import live_reading, serving_lines

    catalogue = _catalogue(args)
    try:
        entry = catalogue.get(args.name)
    except CatalogueError as exc:
        raise CommandError(str(exc)) from None
    state = readiness(entry)
    table = entry_table(entry)
    reading = live_reading(entry)
    if args.json:
        print(
            json.dumps({"entry": table, "ready": state.ready, "reasons": state.reasons, "serving": reading}, indent=2)
        )
        return 0
    import tomlkit

    print(tomlkit.dumps({"model": [table]}).rstrip())
    print(f"# run: {state.summary() if state.ready else 'refused'}")
    for reason in state.reasons:
        print(f"#   - {reason}")
    for line in serving_lines(entry, reading):
        print(f"# {line}")
    return 0


def _verify(args: argparse.Namespace) -> int:
    from compare_tui.catalogue import CatalogueError
    from compare_tui.catalogue.readiness import verify_entry
    from compare_tui.catalogue.serving_check import LoadedCheck
    from compare_tui.engine.serving import live_reading, serving_lines
    from compare_tui.vocabulary import WeightsCheck

    catalogue = _catalogue(args)
    try:
        entries = list(catalogue.models) if args.all else [catalogue.get(args.name)]
    except CatalogueError as exc:
        raise CommandError(str(exc)) from None
    drift, served_other = 0, 0
    for entry in entries:
        with _HashProgress() as progress:
            outcome = verify_entry(entry, progress=progress)
        reading = live_reading(entry)
        # A server that did not answer checked nothing either way; its serving line says so.
        loaded = None if reading.get("unread") else LoadedCheck.of(reading.get("loaded"))
        print(f"{entry.name}: {outcome.summary(loaded)}")
        if not outcome.matched:
            drift += 1
            for problem in outcome.problems:
                print(f"  - {problem}")
        elif loaded is not None and loaded.status == WeightsCheck.MISMATCH:
            served_other += 1
        for line in serving_lines(entry, reading):
            print(f"  {line}")
    if drift:
        print(
            f"{drift} of {len(entries)} model(s) do not match their pins; restore the weights, or re-pin "
            "with `compare-tui models add NAME … --replace`",
            file=sys.stderr,
        )
    if served_other:
        print(
            f"{served_other} of {len(entries)} model(s) have intact weights but a server that loads other "
            "weights; point the entry at the server that loads its pinned weights, or restart the server "
            "with them (see the loaded weights line above)",
            file=sys.stderr,
        )
    return 1 if drift or served_other else 0


def _remove(args: argparse.Namespace) -> int:
    from compare_tui.catalogue import CatalogueError
    from compare_tui.catalogue.editing import read_for_edit, save, without_entry

    path = _path(args)
    if not path.exists():
        raise CommandError(f"models remove: no model catalogue at {path}")
    if not args.force:
        with open_store(args.store, create=True) as store:
            workloads = store.workloads_with_baseline(args.name)
        if workloads:
            raise CommandError(
                f"models remove: {args.name} is the baseline of workload "
                f"{', '.join(workloads)}; promote another model first, or give --force"
            )
    try:
        document, _ = read_for_edit(path)
        save(without_entry(document, args.name, path=path), path)
    except CatalogueError as exc:
        raise CommandError(f"models remove: {exc}") from None
    print(f"removed {args.name} from {path}")
    return 0

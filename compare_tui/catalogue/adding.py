"""`models add`: from what the user typed, the server said and the weights hash to, one
validated catalogue entry, written only when every step succeeded.

Steps run cheapest first, so a bad flag never costs a hash of 100 GB: arguments, the
existing catalogue (malformed or duplicate name: refused), the key policy, the endpoint
probe, the cheap check that the server loads these files (`serving_check.served_elsewhere`: by
path, names and sizes), then the hashing, then the check that the server loaded the pinned
weights (`serving_check.check_loaded`). A vLLM server that loaded a repository id is resolved
through this machine's Hugging Face cache (`hf_cache`). `add_model` is the one entry point; every failure is a
`CatalogueEditError` (one line) and leaves the file untouched.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import ValidationError

from compare_tui.catalogue.editing import read_for_edit, save, with_entry
from compare_tui.catalogue.errors import CatalogueEditError, ModelRefused
from compare_tui.catalogue.gateway import check_key
from compare_tui.catalogue.hf_cache import CachedSnapshot, NotResolved, resolve_repo
from compare_tui.catalogue.keys import mask_provider_keys, resolve_key
from compare_tui.catalogue.loader import validation_problems
from compare_tui.catalogue.models import ModelEntry, ServingNotes
from compare_tui.catalogue.pinning import WeightPins, hf_snapshot, pin_weights, weight_files
from compare_tui.catalogue.probe import ProbeResult, probe_endpoint
from compare_tui.catalogue.provenance import HOST_ATTESTED
from compare_tui.catalogue.server_facts import READ_FROM_SERVER, ServerFacts
from compare_tui.catalogue.serving_check import check_loaded, served_elsewhere
from compare_tui.catalogue.verify import Progress
from compare_tui.endpoint import key_headers
from compare_tui.paths import hf_hub_cache
from compare_tui.vocabulary import ModelKind, WeightsCheck


@dataclass(frozen=True)
class AddRequest:
    """What `models add` was asked, as typed (validated by `add_model`)."""

    name: str
    endpoint: str
    model: str | None = None
    kind: ModelKind = ModelKind.LOCAL
    weights_dir: Path | None = None
    weights: tuple[Path, ...] = ()
    revision: str | None = None
    key_env: str | None = None
    usd_per_hour: float | None = None
    gpu_count: int | None = None
    """How many GPUs `usd_per_hour` covers, as given or read (NVML, DCGM) by the caller; None:
    not stated, and the entry says so rather than assume one."""
    gpu_count_read: str | None = None
    """Where `gpu_count` was read, for the user to check (None: given with --gpu-count)."""
    price_in: float | None = None
    price_out: float | None = None
    price_date: str | None = None
    price_source: str | None = None
    host_digest: str | None = None
    notes: tuple[str, ...] = ()
    """`key=value` strings: a ServingNotes field (stack, tool_parser, …) or an extra."""
    gateway: Literal["litellm"] | None = None
    replace: bool = False


@dataclass
class AddOutcome:
    """The entry written, and what the user should read about how it was pinned."""

    entry: ModelEntry
    path: Path
    replaced: bool
    findings: list[str] = field(default_factory=list)
    bytes_hashed: int = 0


Probe = Callable[..., ProbeResult]


def add_model(
    request: AddRequest,
    catalogue_path: Path,
    *,
    environ: Mapping[str, str] | None = None,
    progress: Progress | None = None,
    probe: Probe = probe_endpoint,
    today: dt.date | None = None,
) -> AddOutcome:
    """Probe, pin and write `request` into `catalogue_path`; see the module docstring."""
    today = today or dt.date.today()
    cost = _cost(request)
    notes = _parse_notes(request.notes)
    document, existing = read_for_edit(catalogue_path)
    if existing is not None and request.name in existing and not request.replace:
        raise CatalogueEditError(
            f"a model named {request.name!r} is already in {catalogue_path}; pass --replace to overwrite "
            "it, or choose another NAME",
            catalogue_path,
        )
    shell, key = _shell_and_key(request, os.environ if environ is None else environ)
    weights_needed, located = _weights_given(request)
    probed = probe(shell.endpoint, request.model, name=request.name, headers=key_headers(key), gateway=request.gateway)
    facts = probed.facts
    findings = list(facts.notes)
    if weights_needed:
        located = _weights_the_server_named(facts, findings)
    if located is not None:
        # Before hashing: a server that loads other files than these is refused without a read.
        differs = served_elsewhere(located[0], located[1], probed.fingerprint)
        if differs is not None:
            raise CatalogueEditError(f"{request.name!r} not added: {differs}; nothing was hashed", catalogue_path)
    extra = dict(facts.extra)
    revision = _revision(request, located, facts, extra, findings)
    pins, fields = _pinned(request, located, probed, progress, extra, findings)
    entry = _validated(
        {
            "name": request.name,
            "kind": request.kind,
            "endpoint": shell.endpoint,
            "model": probed.model,
            "revision": revision,
            "key_env": request.key_env,
            "serving": _serving(facts, notes, extra, today),
            "cost": cost,
            "gateway": request.gateway,
            **fields,
        },
        request.name,
    )
    loaded = check_loaded(entry, probed.fingerprint)
    if loaded.status == WeightsCheck.MISMATCH:  # the pins would belong to another model than the one served
        raise CatalogueEditError(f"{request.name!r} not added: {loaded.text}", catalogue_path)
    if loaded.status == WeightsCheck.UNCHECKED:
        findings.append(f"the loaded weights could not be checked against the pins: {loaded.text}")
    if cost["basis"] == "hardware":
        findings.append(_gpu_count_finding(request))
    comment = f"added by `compare-tui models add` on {today.isoformat()}"
    document = with_entry(document, entry, replace=request.replace, comment=comment, path=catalogue_path)
    save(document, catalogue_path)
    return AddOutcome(
        entry=entry,
        path=catalogue_path,
        replaced=existing is not None and request.name in existing,
        findings=findings,
        bytes_hashed=pins.bytes_hashed if pins else 0,
    )


def _shell_and_key(request: AddRequest, environ: Mapping[str, str]) -> tuple[ModelEntry, str | None]:
    """The entry as far as the probe needs it, and its key, checked before the probe sends it
    anywhere (a gateway confirms an sk- key first)."""
    shell = _validated(
        {
            "name": request.name,
            "kind": ModelKind.HOSTED,
            "endpoint": request.endpoint,
            "model": request.model or "-",
            "key_env": request.key_env,
            "gateway": request.gateway,
        },
        request.name,
    )
    try:
        key = resolve_key(shell, environ)
        check_key(shell, key)
    except ModelRefused as exc:
        raise CatalogueEditError(mask_provider_keys(str(exc))) from None
    return shell, key


def _weights_given(request: AddRequest) -> tuple[bool, tuple[Path, dict[str, Path]] | None]:
    """Whether a local model's weights are still to be found (none given), and the weights
    given, located; refuses weights given for a hosted model."""
    weights_needed = request.kind == ModelKind.LOCAL and request.weights_dir is None and not request.weights
    if request.kind == ModelKind.HOSTED and (request.weights_dir is not None or request.weights):
        raise CatalogueEditError(
            "--weights-dir/--weights are for --kind local; a hosted model's weights "
            "are not hashed here (its provenance is the host's attestation)"
        )
    if request.kind == ModelKind.LOCAL and not weights_needed:
        return weights_needed, weight_files(request.weights_dir, list(request.weights))
    return weights_needed, None


def _weights_the_server_named(facts: ServerFacts, findings: list[str]) -> tuple[Path, dict[str, Path]]:
    """A local model's weights where the server said it loaded them: its file, its folder, or
    its repository in this machine's Hugging Face cache; refused when none is found."""
    cached = resolve_repo(facts.weights_root, hf_hub_cache()) if facts.weights_root else None
    discovered = Path(facts.weights_file) if facts.weights_file else None
    if discovered is not None and discovered.is_file():
        findings.append(f"weights file {discovered} named by the server ({', '.join(facts.sources)})")
        return weight_files(None, [discovered])
    if facts.weights_root and Path(facts.weights_root).is_dir():
        findings.append(f"weights folder {facts.weights_root} named by the server (vLLM's root)")
        return weight_files(Path(facts.weights_root), [])
    if isinstance(cached, CachedSnapshot):
        located = weight_files(cached.folder, [])
        findings.append(
            f"weights of {cached.repo} named by the server (vLLM's root), found in the Hugging Face cache: "
            f"refs/{cached.ref} → {cached.folder}"
        )
        return located
    raise CatalogueEditError(
        "a local model needs its weights pinned: pass --weights-dir DIR (or --weights FILE…) with "
        "the files the server loads, or --kind hosted if the weights are not on this machine"
        + (
            f" (the server loaded the repository {facts.weights_root}, which could not be resolved: {cached.why})"
            if isinstance(cached, NotResolved)
            else ""
        )
    )


def _revision(
    request: AddRequest,
    located: tuple[Path, dict[str, Path]] | None,
    facts: ServerFacts,
    extra: dict[str, Any],
    findings: list[str],
) -> str:
    """The revision to pin: the one given, else a local model's Hugging Face cache snapshot
    (its repository and refs go to `extra`), else what the server says; refused, before any
    hashing, when none is found."""
    revision = request.revision
    if request.kind == ModelKind.LOCAL:
        assert located is not None
        snapshot = hf_snapshot(located[0])
        if revision is None and snapshot is not None:
            revision = snapshot.commit
            extra["hf_repo"] = snapshot.repo
            if snapshot.refs:
                extra["hf_refs"] = ", ".join(snapshot.refs)
            findings.append(f"revision {snapshot.commit} from the Hugging Face cache snapshot of {snapshot.repo}")
    if revision is None and facts.revision is not None:
        revision = facts.revision
        findings.append(f"revision {revision} from {facts.revision_source}")
    if revision is None:  # checked before hashing: a missing flag should not cost a full read
        where = "a Hugging Face cache snapshot or Ollama digest" if request.kind == ModelKind.LOCAL else "the host"
        raise CatalogueEditError(
            f"no revision could be discovered (not {where}); pass --revision REV (a tag, commit or date)"
        )
    return revision


def _pinned(
    request: AddRequest,
    located: tuple[Path, dict[str, Path]] | None,
    probed: ProbeResult,
    progress: Progress | None,
    extra: dict[str, Any],
    findings: list[str],
) -> tuple[WeightPins | None, dict[str, Any]]:
    """The weights' pins and the entry's fields for them: a local model's files hashed, or a
    hosted model's digest (given, else from the host's listing) attested by the host."""
    if request.kind == ModelKind.LOCAL:
        assert located is not None
        pins = pin_weights(*located, progress=progress)
        return pins, {"weights_dir": str(pins.weights_dir), "files": pins.files, "weights_digest": pins.digest}
    digest = request.host_digest
    if digest is None:
        digest, how = _listing_digest(probed)
        findings.append(how)
    extra["provenance"] = HOST_ATTESTED
    return None, {"weights_digest": digest}


def _serving(facts: ServerFacts, notes: dict[str, str], extra: dict[str, Any], today: dt.date) -> dict[str, Any]:
    """`[model.serving]`: what the server said (marked as read, not verified), then the user's
    `--note`s, each to its serving field or to `extra`."""
    serving: dict[str, Any] = dict(facts.serving)
    if facts.stack:
        serving["stack"] = facts.stack
    read = sorted(k for k in serving if k != "stack") + sorted(f"extra.{k}" for k in facts.extra)
    if facts.sources:
        serving["notes"] = (
            f"{', '.join(read) or 'stack'} {READ_FROM_SERVER} ({', '.join(facts.sources)}) "
            f"on {today.isoformat()}; not verified"
        )
    for key, value in notes.items():
        if key in ServingNotes.model_fields and key not in ("extra", "notes"):
            serving[key] = int(value) if key == "context_size" and value.isdigit() else value
        else:
            extra[key] = value
    if extra:
        serving["extra"] = extra
    return serving


def _validated(table: dict[str, Any], name: str) -> ModelEntry:
    try:
        return ModelEntry.model_validate({k: v for k, v in table.items() if v is not None})
    except ValidationError as exc:
        problems = validation_problems(exc, f"model {name!r}")
        raise CatalogueEditError("; ".join(problems)) from None


def _cost(request: AddRequest) -> dict[str, Any]:
    token = {
        "--price-in": request.price_in,
        "--price-out": request.price_out,
        "--price-date": request.price_date,
        "--price-source": request.price_source,
    }
    given = [flag for flag, value in token.items() if value is not None]
    if request.usd_per_hour is not None and given:
        raise CatalogueEditError(
            "give one cost basis: --usd-per-hour (hardware) or the --price-* flags (token price), not both"
        )
    if request.usd_per_hour is not None:
        if request.kind == ModelKind.HOSTED:
            raise CatalogueEditError(
                "a hosted model is charged by token: give --price-in, --price-out, "
                "--price-date and --price-source instead of --usd-per-hour"
            )
        if request.gpu_count is None:
            return {"basis": "hardware", "usd_per_hour": request.usd_per_hour}
        return {"basis": "hardware", "usd_per_hour": request.usd_per_hour, "gpu_count": request.gpu_count}
    if not given:
        if request.kind == ModelKind.HOSTED:
            raise CatalogueEditError(
                "a hosted model needs its token price and when it was read: give "
                "--price-in, --price-out, --price-date YYYY-MM-DD and --price-source URL"
            )
        raise CatalogueEditError(
            "no cost basis (a report refuses rows without one): give --usd-per-hour X "
            "for the serving box, or --price-in/--price-out/--price-date/--price-source"
        )
    missing = [flag for flag, value in token.items() if value is None]
    if missing:
        raise CatalogueEditError(
            f"a token price needs {', '.join(missing)} too (a price without its "
            "capture date and source cannot be checked later)"
        )
    return {
        "basis": "token_price",
        "usd_per_mtok_input": request.price_in,
        "usd_per_mtok_output": request.price_out,
        "captured": request.price_date,
        "source": request.price_source,
    }


def _gpu_count_finding(request: AddRequest) -> str:
    if request.gpu_count is None:
        return (
            "gpu_count not stated (the report's cost basis will say so): give --gpu-count N, the "
            "GPUs the hourly rate covers (0 for a CPU box)"
        )
    if request.gpu_count_read:
        return f"gpu_count = {request.gpu_count}, {request.gpu_count_read} (give --gpu-count N if the rate covers another number)"
    return f"gpu_count = {request.gpu_count}, as given"


def _parse_notes(notes: tuple[str, ...]) -> dict[str, str]:
    parsed: dict[str, str] = {}
    for note in notes:
        key, sep, value = note.partition("=")
        if not sep or not key.strip() or not value.strip():
            raise CatalogueEditError(f"--note takes key=value (e.g. --note tool_parser=hermes); got {note!r}")
        parsed[key.strip()] = value.strip()
    return parsed


def _listing_digest(probed: ProbeResult) -> tuple[str, str]:
    """A hosted model's stated identity when the host states no digest: sha256 of the
    canonical JSON of the model id the host serves, so a renamed or retired id shows."""
    stated = json.dumps({"id": probed.model}, sort_keys=True, separators=(",", ":"))
    digest = "sha256:" + hashlib.sha256(stated.encode("utf-8")).hexdigest()
    return digest, (
        f"weights_digest {digest[:19]}… is the host's statement of the model id "
        f"{probed.model!r} (pass --host-digest when the host states one): host attestation, "
        "not verified"
    )

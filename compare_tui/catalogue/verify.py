"""Weights verification: hash every pinned file and compare with the catalogue's pins.

Runs before a local model's first request (ARCHITECTURE.md). Files are hashed in parallel
threads: hashlib releases the GIL while it digests a large buffer, so threads scale with
cores and disks without processes. Each file is read sequentially in large chunks into
one reused buffer, which keeps memory flat and matches `sha256sum` throughput.
"""

from __future__ import annotations

import hashlib
import os
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from compare_tui.catalogue.errors import ModelRefused
from compare_tui.catalogue.models import ModelEntry
from compare_tui.catalogue.provenance import HOST_ATTESTED, VERIFIED, ProvenanceLabel
from compare_tui.catalogue.refusals import refuse_if_needed, repin_command
from compare_tui.vocabulary import ModelKind

WEIGHT_SUFFIXES = (".gguf", ".safetensors", ".bin", ".pt", ".pth")
"""Files a serving stack might load as weights; any in weights_dir must be pinned."""
ANSWER_SHAPING_FILES: dict[str, str] = {
    "chat_template.jinja": "the chat template",
    "chat_template.json": "the chat template",
    "tokenizer_config.json": "the tokenizer configuration (and, in older folders, the chat template)",
    "tokenizer.json": "the tokenizer",
    "tokenizer.model": "the tokenizer",
    "vocab.json": "the tokenizer's vocabulary",
    "merges.txt": "the tokenizer's merges",
    "special_tokens_map.json": "the special tokens",
    "added_tokens.json": "the added tokens",
    "generation_config.json": "the default generation settings",
}
"""Files beside the weights that shape answers (what the prompt becomes, how decoding stops and
samples), by name, and what each is: pinned and checked like the weights, so a changed chat
template or tokenizer is named, not verified."""
CHUNK_SIZE = 4 * 1024 * 1024
"""Read size. Past ~1 MiB per read the syscall cost is negligible against hashing."""
PROGRESS_INTERVAL_S = 0.1
"""At most one progress call per file per interval (plus the first and the last)."""

Progress = Callable[[str, int, int], None]
"""`(file, bytes_done, bytes_total)` for one pinned file (name as pinned)."""


@dataclass(frozen=True)
class VerificationResult:
    """A model whose provenance may be reported. Only ever built with a label that is
    true: a failed verification raises `ModelRefused` instead."""

    model: str
    label: ProvenanceLabel
    digests: dict[str, str] = field(default_factory=dict)
    """What was measured: pinned file -> "sha256:<hex>" (empty for hosted models)."""
    bytes_hashed: int = 0
    seconds: float = 0.0


class _Cancelled(Exception):
    """Another worker failed; stop reading early."""


def hash_file(
    path: str | os.PathLike[str],
    *,
    chunk_size: int = CHUNK_SIZE,
    on_bytes: Callable[[int], None] | None = None,
    cancel: threading.Event | None = None,
) -> str:
    """`sha256:<hex>` of the file's bytes, read in `chunk_size` chunks into one buffer.

    `on_bytes(done)` is called after every chunk (callers throttle); `cancel` stops the
    read between chunks."""
    digest = hashlib.sha256()
    buffer = bytearray(chunk_size)
    view = memoryview(buffer)
    done = 0
    with open(path, "rb", buffering=0) as handle:
        if hasattr(os, "posix_fadvise"):
            # Tell the kernel we read once, front to back: it reads ahead further.
            os.posix_fadvise(handle.fileno(), 0, 0, os.POSIX_FADV_SEQUENTIAL)
        while n := handle.readinto(buffer):
            digest.update(view[:n])
            done += n
            if on_bytes is not None:
                on_bytes(done)
            if cancel is not None and cancel.is_set():
                raise _Cancelled
    return "sha256:" + digest.hexdigest()


def is_pinned_kind(name: str) -> bool:
    """Whether a file of this name is pinned: a weights file, or one that shapes answers."""
    base = name.rsplit("/", 1)[-1]
    return base.lower().endswith(WEIGHT_SUFFIXES) or base in ANSWER_SHAPING_FILES


def what_file(name: str) -> str:
    """`tokenizer_config.json (the tokenizer configuration …)`, or the bare name of a weights file."""
    role = ANSWER_SHAPING_FILES.get(name.rsplit("/", 1)[-1])
    return f"{name} ({role})" if role else name


def find_weight_files(weights_dir: Path, *, onerror: Callable[[OSError], None] | None = None) -> set[str]:
    """Every file under `weights_dir` that is pinned (weights, and the files that shape answers:
    `ANSWER_SHAPING_FILES`), recursively, not following symlinked folders, as '/'-separated
    paths relative to it — the same form as the pins. A folder that cannot be listed is
    skipped unless `onerror` (as for `os.walk`) raises."""
    found: set[str] = set()
    for root, _dirs, names in os.walk(weights_dir, onerror=onerror):
        for name in names:
            if is_pinned_kind(name):
                found.add((Path(root) / name).relative_to(weights_dir).as_posix())
    return found


def verify_weights(
    entry: ModelEntry, *, progress: Progress | None = None, workers: int | None = None
) -> VerificationResult:
    """Check `entry`'s pins, then hash its weights and compare.

    Returns label `VERIFIED` only when every pinned file matches and no unpinned weights
    file is present; hosted entries get `HOST_ATTESTED` without hashing. Otherwise raises
    `ModelRefused` listing each changed, missing, unreadable or extra file.

    `progress` is called from hashing threads, but never two calls at once; raising from
    it cancels verification (the exception propagates). `workers` defaults to the number
    of pinned files, capped at the CPU count."""
    refuse_if_needed(entry)
    if entry.kind == ModelKind.HOSTED:
        return VerificationResult(model=entry.name, label=HOST_ATTESTED)
    assert entry.weights_dir is not None  # guaranteed by refuse_if_needed for local models
    root = entry.weights_dir
    if not root.is_dir():
        raise ModelRefused.listing(
            entry.name,
            "its weights cannot be verified",
            [f"weights_dir {root} is not a folder; fix weights_dir or restore the weights"],
            fix=f"`compare-tui models verify {entry.name}` once restored, or `{repin_command(entry)}`",
        )

    started = time.monotonic()
    problems: list[str] = []
    present: dict[str, Path] = {}
    for name in sorted(entry.files):
        path = root / name
        if path.is_file():
            present[name] = path
        else:
            problems.append(f"missing: {name} is pinned but not found in {root}")

    measured = hash_files(present, progress=progress, workers=workers)
    for name, result in sorted(measured.items()):
        if isinstance(result, OSError):
            problems.append(f"unreadable: {name} ({result.strerror or result}); check its permissions")
        elif result != entry.files[name]:
            problems.append(
                f"changed: {what_file(name)} is pinned as {entry.files[name]} but hashes to {result}; "
                "restore the pinned file, or re-pin it (and weights_digest) if the change "
                "is intended"
            )
    for name in sorted(find_weight_files(root) - set(entry.files)):
        kind = "a weights file" if name.lower().endswith(WEIGHT_SUFFIXES) else "a file that shapes answers"
        problems.append(
            f"extra: {what_file(name)} is {kind} in {root} that is not pinned; a server may "
            "load it, so pin it in files (re-pin with `models add … --replace`) or move it out"
        )
    if problems:
        raise ModelRefused.listing(
            entry.name,
            "its weights do not match the pins",
            problems,
            fix=f"restore the files and check with `compare-tui models verify {entry.name}`; if the "
            f"change is intended, re-pin with `{repin_command(entry)}`",
        )

    digests = {name: str(d) for name, d in measured.items()}
    return VerificationResult(
        model=entry.name,
        label=VERIFIED,
        digests=digests,
        bytes_hashed=sum(p.stat().st_size for p in present.values()),
        seconds=time.monotonic() - started,
    )


def hash_files(
    files: dict[str, Path], *, progress: Progress | None = None, workers: int | None = None
) -> dict[str, str | OSError]:
    """Hash `files` (pin name -> path) in parallel: pin name -> "sha256:<hex>", or the
    OSError that made a file unreadable (vanished, denied, a symlink loop). Any other
    exception (including one raised by `progress`) cancels the rest and propagates.

    The one hasher behind both verification and `models add`, so that what `add` pins is
    exactly what `verify_weights` recomputes."""
    if not files:
        return {}
    cancel = threading.Event()
    lock = threading.Lock()

    def report(name: str, done: int, total: int) -> None:
        if progress is not None:
            with lock:
                progress(name, done, total)

    def one(name: str, path: Path) -> str | OSError:
        if cancel.is_set():
            raise _Cancelled
        try:
            total = path.stat().st_size
            report(name, 0, total)
            last = time.monotonic()

            def on_bytes(done: int) -> None:
                nonlocal last
                now = time.monotonic()
                if progress is not None and now - last >= PROGRESS_INTERVAL_S and done < total:
                    last = now
                    report(name, done, total)

            digest = hash_file(path, chunk_size=CHUNK_SIZE, on_bytes=on_bytes, cancel=cancel)
            report(name, total, total)
            return digest
        except OSError as exc:
            return exc
        except BaseException:
            cancel.set()
            raise

    count = workers or min(len(files), os.cpu_count() or 1)
    with ThreadPoolExecutor(max_workers=max(1, count), thread_name_prefix="weights-hash") as pool:
        futures = {name: pool.submit(one, name, path) for name, path in files.items()}
        results: dict[str, str | OSError] = {}
        first_error: BaseException | None = None
        for name, future in futures.items():
            try:
                results[name] = future.result()
            except _Cancelled:
                continue
            except BaseException as exc:  # noqa: BLE001 - re-raised below, after the pool stops
                cancel.set()
                first_error = first_error or exc
        if first_error is not None:
            pool.shutdown(wait=True, cancel_futures=True)
            raise first_error
    return results

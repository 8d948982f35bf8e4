"""Compute a local model's pins from its weights: the files, their digests, the revision.

The hashing is `verify.hash_files` and the combined digest `refusals.combined_digest`, the
same code `verify_weights` runs before every request, so an entry pinned here verifies
exactly when the bytes are unchanged. The set of files pinned is what `verify_weights`
would call "extra" if left out: every weights file under the folder, and every file beside them
that shapes answers (`verify.ANSWER_SHAPING_FILES`: chat template, tokenizer, generation config).
"""

from __future__ import annotations

import errno
import os
from dataclasses import dataclass
from pathlib import Path

from compare_tui.catalogue.errors import CatalogueEditError
from compare_tui.catalogue.refusals import combined_digest
from compare_tui.catalogue.verify import WEIGHT_SUFFIXES, Progress, find_weight_files, hash_files


@dataclass(frozen=True)
class WeightPins:
    """Per-file pins of one weights folder and the digest they combine to."""

    weights_dir: Path
    files: dict[str, str]
    digest: str
    bytes_hashed: int


@dataclass(frozen=True)
class HfSnapshot:
    """A folder inside a Hugging Face cache snapshot: models--ORG--NAME/snapshots/COMMIT/."""

    repo: str
    commit: str
    refs: tuple[str, ...]
    """The refs (e.g. "main") whose file in refs/ names this commit."""


def _io_problem(exc: OSError, what: str) -> str:
    if exc.errno == errno.ELOOP:
        return f"{what} is a symlink loop; point it at a real file or folder"
    if isinstance(exc, FileNotFoundError):
        return f"{what} vanished while it was being read; add it again once the weights are in place"
    return f"{what} cannot be read ({exc.strerror or exc}); check its permissions"


def weight_files(weights_dir: Path | None, weights: list[Path]) -> tuple[Path, dict[str, Path]]:
    """(weights_dir, pin name -> path) for `--weights-dir DIR` or `--weights FILE…`.

    Raises `CatalogueEditError` for a missing folder, a folder with no weights files, a
    symlink loop, or `--weights` files that leave other weights files of their folder
    unpinned (a run would refuse them as extra)."""
    if weights:
        paths = [Path(os.path.abspath(p)) for p in weights]
        for path in paths:
            try:
                os.stat(path)
            except OSError as exc:
                raise CatalogueEditError(_io_problem(exc, f"weights file {path}")) from None
            if not path.is_file():
                raise CatalogueEditError(
                    f"weights file {path} is not a file; give files with --weights or a folder with --weights-dir"
                )
        root = Path(os.path.commonpath([p.parent for p in paths]))
        chosen = {p.relative_to(root).as_posix(): p for p in paths}
    else:
        assert weights_dir is not None
        root = Path(os.path.abspath(weights_dir))
        try:
            os.stat(root)
        except OSError as exc:
            raise CatalogueEditError(_io_problem(exc, f"weights folder {root}")) from None
        if not root.is_dir():
            raise CatalogueEditError(
                f"weights folder {root} is not a folder; give the folder the server loads its weights from"
            )
        chosen = {}
    found = _scan(root)
    if not weights:
        if not any(name.lower().endswith(WEIGHT_SUFFIXES) for name in found):
            raise CatalogueEditError(
                f"no weights files in {root} (looked for {', '.join('*' + s for s in WEIGHT_SUFFIXES)}); "
                "give the folder the server loads its weights from"
            )
        chosen = {name: root / name for name in sorted(found)}
    else:
        # The files that shape answers beside the given weights are pinned with them.
        chosen |= {name: root / name for name in found if not name.lower().endswith(WEIGHT_SUFFIXES)}
        extra = sorted(found - set(chosen))
        if extra:
            raise CatalogueEditError(
                f"{root} also holds weights files not given with --weights ({', '.join(extra[:5])}); "
                "a run would refuse them as unpinned: pin the folder with --weights-dir, or move them out"
            )
    for name, path in chosen.items():
        try:
            os.stat(path)
        except OSError as exc:
            raise CatalogueEditError(_io_problem(exc, f"weights file {name} in {root}")) from None
    return root, chosen


def _scan(root: Path) -> set[str]:
    def fail(exc: OSError) -> None:
        raise CatalogueEditError(_io_problem(exc, f"folder {exc.filename or root}"))

    return find_weight_files(root, onerror=fail)


def pin_weights(
    root: Path, files: dict[str, Path], *, progress: Progress | None = None, workers: int | None = None
) -> WeightPins:
    """Hash `files` (in parallel, streamed) into pins. A file that vanishes or cannot be
    read while hashing raises `CatalogueEditError` naming it."""
    measured = hash_files(files, progress=progress, workers=workers)
    for name in sorted(measured):
        result = measured[name]
        if isinstance(result, OSError):
            raise CatalogueEditError(_io_problem(result, f"weights file {name} in {root}"))
    pins = {name: str(measured[name]) for name in sorted(measured)}
    size = 0
    for path in files.values():
        try:
            size += path.stat().st_size
        except OSError as exc:
            raise CatalogueEditError(_io_problem(exc, f"weights file {path}")) from None
    return WeightPins(weights_dir=root, files=pins, digest=combined_digest(pins), bytes_hashed=size)


def hf_snapshot(folder: Path) -> HfSnapshot | None:
    """The Hugging Face cache snapshot `folder` is (or is inside), else None."""
    folder = Path(os.path.abspath(folder))
    for candidate in (folder, *folder.parents):
        snapshots = candidate.parent
        repo_dir = snapshots.parent
        if snapshots.name == "snapshots" and repo_dir.name.startswith("models--"):
            org_name = repo_dir.name[len("models--") :]
            repo = org_name.replace("--", "/", 1)
            refs = []
            refs_dir = repo_dir / "refs"
            if refs_dir.is_dir():
                for ref in sorted(refs_dir.rglob("*")):
                    try:
                        if ref.is_file() and ref.read_text(encoding="utf-8").strip() == candidate.name:
                            refs.append(ref.relative_to(refs_dir).as_posix())
                    except (OSError, UnicodeDecodeError):
                        continue
            return HfSnapshot(repo=repo, commit=candidate.name, refs=tuple(refs))
    return None

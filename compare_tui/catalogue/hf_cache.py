"""A repository id a server loaded, found in this machine's Hugging Face cache.

vLLM started with `--model ORG/NAME` names the repository id as its `/v1/models` `root`, not a
folder. The files it loaded are then in the hub cache (`paths.hf_hub_cache`), laid out by
`huggingface_hub`: `models--ORG--NAME/refs/<ref>` holds the commit a ref points at, and
`models--ORG--NAME/snapshots/<commit>/` holds the files (links into `blobs/`). A server started
without `--revision` loads `main`, so `refs/main` says which snapshot it loaded.

Nothing is downloaded or written; a repository the cache does not hold is not resolved (`why`
says what was missing), and the caller says the weights were not checked.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

REPO_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*")
COMMIT = re.compile(r"[0-9a-f]{40}")
DEFAULT_REF = "main"


@dataclass(frozen=True, slots=True)
class CachedSnapshot:
    """The snapshot folder a repository id resolves to."""

    repo: str
    ref: str
    commit: str
    folder: Path


@dataclass(frozen=True, slots=True)
class NotResolved:
    """Why a repository id did not resolve to a snapshot here."""

    why: str


def is_repo_id(name: str) -> bool:
    """Whether `name` reads as a hub repository id (`ORG/NAME`), not a path."""
    return REPO_ID.fullmatch(name) is not None


def resolve_repo(repo: str, cache: Path, ref: str = DEFAULT_REF) -> CachedSnapshot | NotResolved:
    """The snapshot of `repo` that `ref` (a ref name or a commit) names in `cache`."""
    if not is_repo_id(repo):
        return NotResolved(f"{repo!r} is not a repository id (ORG/NAME)")
    repo_dir = cache / ("models--" + repo.replace("/", "--"))
    if not repo_dir.is_dir():
        return NotResolved(f"{repo} is not in the Hugging Face cache at {cache}")
    ref_file = repo_dir / "refs" / ref
    try:
        commit = ref_file.read_text(encoding="utf-8").strip() if ref_file.is_file() else None
    except (OSError, UnicodeDecodeError):
        commit = None
    if commit is None and COMMIT.fullmatch(ref):
        commit = ref
    if commit is None or not COMMIT.fullmatch(commit):
        return NotResolved(f"{repo} has no readable refs/{ref} in the Hugging Face cache at {cache}")
    folder = repo_dir / "snapshots" / commit
    if not folder.is_dir():
        return NotResolved(f"{repo}'s refs/{ref} names {commit[:12]}, whose snapshot is not in {cache}")
    return CachedSnapshot(repo, ref, commit, folder)

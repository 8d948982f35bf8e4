"""Which catalogue entries may be run at all (docs/catalogue.md).

These checks need no file system: they look at the pins as written. Hashing the weights
against the pins is `verify.verify_weights`, which applies these checks first.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from compare_tui.catalogue.errors import ModelRefused
from compare_tui.catalogue.models import ModelEntry
from compare_tui.vocabulary import ModelKind

RefusalCode = Literal["no-digest", "no-revision", "no-file-pins", "no-weights-dir", "digest-mismatch"]


@dataclass(frozen=True)
class Refusal:
    """One reason an entry cannot be run; `message` says what to change."""

    code: RefusalCode
    message: str


def combined_digest(files: Mapping[str, str]) -> str:
    """The `weights_digest` a local model's per-file pins imply: `sha256:` + sha256 over
    the UTF-8 lines "<file name> <sha256 hex>\\n", sorted by file name.

    Pins may be given with or without the "sha256:" prefix. The same files always give
    the same digest, whatever order they are listed in."""
    lines = sorted(f"{name} {digest.strip().lower().removeprefix('sha256:')}\n" for name, digest in files.items())
    return "sha256:" + hashlib.sha256("".join(lines).encode("utf-8")).hexdigest()


def check_entry(entry: ModelEntry) -> list[Refusal]:
    """Every reason `entry` must not be run, in a stable order; empty when it may be."""
    refusals: list[Refusal] = []
    if entry.weights_digest is None:
        hint = (
            f'set weights_digest = "{combined_digest(entry.files)}" (computed from its per-file pins)'
            if entry.kind == ModelKind.LOCAL and entry.files
            else 'add weights_digest = "sha256:…"'
        )
        refusals.append(Refusal("no-digest", f"no weights_digest; {hint}"))
    if not (entry.revision or "").strip():
        refusals.append(Refusal("no-revision", 'no revision; add revision = "…" (a date, tag or commit)'))
    if entry.kind == ModelKind.HOSTED:
        # A hosted entry's digest is the host's statement; we cannot recompute it.
        return refusals
    if not entry.files:
        refusals.append(
            Refusal(
                "no-file-pins",
                'a local model needs per-file pins; add files = { "<file>" = '
                '"sha256:<hex from sha256sum>" } for every weights file',
            )
        )
    if entry.weights_dir is None:
        refusals.append(
            Refusal(
                "no-weights-dir",
                "a local model needs weights_dir, the folder its server loads weights from",
            )
        )
    if entry.files and entry.weights_digest is not None:
        expected = combined_digest(entry.files)
        if entry.weights_digest != expected:
            refusals.append(
                Refusal(
                    "digest-mismatch",
                    f"weights_digest is {entry.weights_digest} but the per-file pins "
                    f"combine to {expected} (sha256 over the sorted lines "
                    '"<file> <sha256 hex>\\n"); one of them is wrong: if the per-file '
                    f'pins are right, set weights_digest = "{expected}"',
                )
            )
    return refusals


def refuse_if_needed(entry: ModelEntry) -> None:
    """Raise `ModelRefused` listing every reason from `check_entry`; return if none."""
    refusals = check_entry(entry)
    if refusals:
        raise ModelRefused.listing(
            entry.name,
            "its catalogue entry is not pinned",
            [r.message for r in refusals],
            fix=f"`{repin_command(entry)}` computes them",
        )


def repin_command(entry: ModelEntry) -> str:
    """The `models add` command line that (re)computes `entry`'s pins, for refusal messages."""
    if entry.kind == ModelKind.HOSTED:
        where = "--kind hosted --revision REV --price-in … --price-out … --price-date … --price-source …"
    else:
        where = f"--weights-dir {entry.weights_dir or 'DIR'} --usd-per-hour X"
    return f"compare-tui models add {entry.name} --endpoint {entry.endpoint} {where} --replace"

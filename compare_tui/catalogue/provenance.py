"""The provenance labels (docs/index.md, "Concepts"): `vocabulary.Provenance`, named here for
the catalogue's callers. Every surface shows these exact strings, so they are defined once."""

from __future__ import annotations

from typing import Final, TypeAlias

from compare_tui.vocabulary import WEIGHTS_NOT_CHECKED, Provenance

VERIFIED: Final = Provenance.VERIFIED
"""Weights were hashed this run and every per-file pin matched, with nothing extra."""

HOST_ATTESTED: Final = Provenance.HOST_ATTESTED
"""A hosted model: the revision and digest are what the host states; nothing was hashed."""

ProvenanceLabel: TypeAlias = Provenance

__all__ = ["HOST_ATTESTED", "VERIFIED", "WEIGHTS_NOT_CHECKED", "Provenance", "ProvenanceLabel"]

"""The two provenance labels (docs/index.md, "Concepts"). Every surface shows these exact strings, so
they are defined once here and never spelled out anywhere else."""

from __future__ import annotations

from typing import Final, Literal

VERIFIED: Final = "verified"
"""Weights were hashed this run and every per-file pin matched, with nothing extra."""

HOST_ATTESTED: Final = "provenance by host attestation, not verified"
"""A hosted model: the revision and digest are what the host states; nothing was hashed."""

ProvenanceLabel = Literal["verified", "provenance by host attestation, not verified"]

"""The model catalogue: pinned candidate models, the key policy and weights verification.

Load with `load_catalogue`, look an entry up with `Catalogue.get`, then before the first
request: `verify_weights(entry)` (refuses unpinned or changed weights, labels provenance)
and `resolve_key(entry)` (refuses provider API keys), then `check_key(entry, key)` (the
endpoint accepts the key; a gateway confirms an `sk-` virtual key). `ModelEntry.pins()` is what a run
records about its model.
"""

from compare_tui.catalogue.errors import CatalogueError, ModelRefused, UnknownModel
from compare_tui.catalogue.gateway import check_key
from compare_tui.catalogue.keys import (
    PROVIDER_API_HOSTS,
    PROVIDER_KEY_PATTERNS,
    REDACTED,
    is_provider_host,
    mask_provider_keys,
    provider_key_kind,
    redact,
    resolve_key,
)
from compare_tui.catalogue.loader import load_catalogue, write_catalogue
from compare_tui.catalogue.models import (
    Catalogue,
    CostBasis,
    HardwareCost,
    ModelEntry,
    ServingNotes,
    TokenPriceCost,
)
from compare_tui.catalogue.provenance import HOST_ATTESTED, VERIFIED, ProvenanceLabel
from compare_tui.catalogue.refusals import Refusal, check_entry, combined_digest, refuse_if_needed
from compare_tui.catalogue.verify import (
    WEIGHT_SUFFIXES,
    VerificationResult,
    find_weight_files,
    hash_file,
    verify_weights,
)

__all__ = [
    "HOST_ATTESTED",
    "PROVIDER_API_HOSTS",
    "PROVIDER_KEY_PATTERNS",
    "REDACTED",
    "VERIFIED",
    "WEIGHT_SUFFIXES",
    "Catalogue",
    "CatalogueError",
    "CostBasis",
    "HardwareCost",
    "ModelEntry",
    "ModelRefused",
    "ProvenanceLabel",
    "Refusal",
    "ServingNotes",
    "TokenPriceCost",
    "UnknownModel",
    "VerificationResult",
    "check_entry",
    "check_key",
    "combined_digest",
    "find_weight_files",
    "hash_file",
    "is_provider_host",
    "load_catalogue",
    "mask_provider_keys",
    "provider_key_kind",
    "redact",
    "refuse_if_needed",
    "resolve_key",
    "verify_weights",
    "write_catalogue",
]

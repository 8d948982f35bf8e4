"""The run store: SQLite (the standard library's sqlite3), WAL mode, forward migrations, typed records.

Nothing is opened at import time: call `Store.open(path)`.
"""

from compare_tui.store.bundles import BundleKind, BundleRecord
from compare_tui.store.canaries import CanaryChangeRecord, CanaryPair, CanaryRecord
from compare_tui.store.decisions import DecisionKind, DecisionRecord
from compare_tui.store.errors import AmbiguousIdError, RunNotFoundError, StoreError
from compare_tui.store.experiments import ExperimentNotFoundError, ExperimentRecord
from compare_tui.store.leases import Holder, HolderSeen, Lease, LeaseLostError, RunLeasedError, Takeover, TakeoverRecord
from compare_tui.store.records import (
    PROVENANCE_ATTESTED,
    PROVENANCE_VERIFIED,
    AttemptCells,
    AttemptRecord,
    AuditRow,
    ComparisonRecord,
    ReviewRecord,
    RunRecord,
    SequentialOrder,
    attempt_id,
    new_run_id,
    tool_calls_of,
    utc_now,
)
from compare_tui.store.schema import CURRENT_VERSION
from compare_tui.store.store import Store
from compare_tui.store.summary import NOT_MEASURED_CLASSES, RunSummary, measured, summarise, task_outcome
from compare_tui.vocabulary import RunStatus

__all__ = [
    "CanaryChangeRecord",
    "CanaryPair",
    "CanaryRecord",
    "CURRENT_VERSION",
    "NOT_MEASURED_CLASSES",
    "PROVENANCE_ATTESTED",
    "PROVENANCE_VERIFIED",
    "AmbiguousIdError",
    "AttemptCells",
    "AttemptRecord",
    "AuditRow",
    "BundleKind",
    "BundleRecord",
    "ComparisonRecord",
    "DecisionKind",
    "DecisionRecord",
    "ExperimentNotFoundError",
    "ExperimentRecord",
    "Holder",
    "HolderSeen",
    "Lease",
    "LeaseLostError",
    "ReviewRecord",
    "RunLeasedError",
    "RunNotFoundError",
    "RunRecord",
    "SequentialOrder",
    "RunStatus",
    "RunSummary",
    "Store",
    "StoreError",
    "Takeover",
    "TakeoverRecord",
    "attempt_id",
    "measured",
    "new_run_id",
    "summarise",
    "task_outcome",
    "tool_calls_of",
    "utc_now",
]

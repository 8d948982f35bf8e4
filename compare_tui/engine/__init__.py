"""The async engine: prepare (refusals, verification, estimate), execute (stream, score,
store each attempt), and report through the observer protocol in `events`."""

from compare_tui.engine.events import (
    AttemptFinished,
    BaselineChosen,
    CollectingObserver,
    EngineEvent,
    LeaseTakenOver,
    ModelsResolved,
    ModelsSkipped,
    RunFinished,
    RunObserver,
    RunRefused,
    RunsPrepared,
    RunStarted,
    SessionEnded,
    VerificationProgressed,
)
from compare_tui.engine.prepare import (
    PreparedRun,
    RunRefusedError,
    check_model,
    prepare_resume,
    prepare_run,
)
from compare_tui.engine.reachability import probe_endpoint, refuse_unreachable
from compare_tui.engine.retry import RetryPolicy
from compare_tui.engine.runner import RunExecutor
from compare_tui.engine.session import (
    EngineSession,
    NewRunPlan,
    ResumePlan,
    SessionPlan,
    no_catalogue_reason,
)
from compare_tui.engine.settings import RunOverrides, RunSettings

__all__ = [
    "AttemptFinished",
    "BaselineChosen",
    "ModelsSkipped",
    "CollectingObserver",
    "EngineEvent",
    "EngineSession",
    "LeaseTakenOver",
    "ModelsResolved",
    "NewRunPlan",
    "PreparedRun",
    "ResumePlan",
    "RetryPolicy",
    "RunExecutor",
    "RunFinished",
    "RunObserver",
    "RunOverrides",
    "RunRefused",
    "RunRefusedError",
    "RunSettings",
    "RunStarted",
    "RunsPrepared",
    "SessionEnded",
    "SessionPlan",
    "VerificationProgressed",
    "check_model",
    "no_catalogue_reason",
    "prepare_resume",
    "prepare_run",
    "probe_endpoint",
    "refuse_unreachable",
]

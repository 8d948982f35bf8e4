"""The async engine: prepare (refusals, verification, estimate), execute (stream, score,
store each attempt), and report through the observer protocol in `events`."""

from compare_tui.engine.events import (
    AttemptFinished,
    CollectingObserver,
    EngineEvent,
    RunFinished,
    RunObserver,
    RunRefused,
    RunStarted,
    VerificationProgressed,
)
from compare_tui.engine.prepare import PreparedRun, RunRefusedError, check_model, prepare_resume, prepare_run
from compare_tui.engine.reachability import probe_endpoint, refuse_unreachable
from compare_tui.engine.retry import RetryPolicy
from compare_tui.engine.runner import RunExecutor
from compare_tui.engine.settings import RunOverrides, RunSettings

__all__ = [
    "probe_endpoint",
    "refuse_unreachable",
    "AttemptFinished",
    "CollectingObserver",
    "EngineEvent",
    "PreparedRun",
    "RetryPolicy",
    "RunExecutor",
    "RunFinished",
    "RunObserver",
    "RunOverrides",
    "RunRefused",
    "RunRefusedError",
    "RunSettings",
    "RunStarted",
    "VerificationProgressed",
    "check_model",
    "prepare_resume",
    "prepare_run",
]

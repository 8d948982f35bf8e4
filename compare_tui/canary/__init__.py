"""The quality-gated canary at the managed gateway (`compare-tui canary`, docs/canary.md).

`control` starts a canary and moves its split (compare-and-set against the gateway's config,
a proxy restart, a recorded change); `evidence` pairs B's logged answers with the baseline's
off-path replays, graded by the workload's checks (`judged`: by the canary's pairwise judge
where no check matches); `policy` is the pure assessment every surface
shows (hold, roll back, ready); `watch` is one pass of `canary watch`; `routes` reads and writes
the alias's entries of the gateway's config; `status` is the document `canary status --json`
prints.
"""

from compare_tui.canary.control import (
    DEFAULT_STEPS,
    CanaryError,
    HandEditRefused,
    advance,
    check_routes,
    parse_steps,
    roll_back,
    start,
    stop,
)
from compare_tui.canary.policy import Assessment, Move, assess
from compare_tui.canary.routes import RoutesError
from compare_tui.canary.watch import WatchPass, replay_task_id, watch_once

__all__ = [
    "DEFAULT_STEPS",
    "Assessment",
    "CanaryError",
    "HandEditRefused",
    "Move",
    "RoutesError",
    "WatchPass",
    "advance",
    "assess",
    "check_routes",
    "parse_steps",
    "replay_task_id",
    "roll_back",
    "start",
    "stop",
    "watch_once",
]

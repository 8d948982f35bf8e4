"""Choosing where command scorers run: `--scorers local|ray[=ADDRESS]`, else `COMPARE_TUI_SCORERS`.

Where scorers run is a property of the machine and the team's cluster, not of the golden set
(the same set is scored the same anywhere), so it is a command-line option and an environment
variable, never a manifest field.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from compare_tui.errors import CompareTuiError
from compare_tui.scoring.executor import LocalScorers, ScorerExecutor
from compare_tui.settings import current

SCORERS_ENV = "COMPARE_TUI_SCORERS"
SCORERS_HELP = (
    "where command scorers run: `local` (this machine) or `ray[=ADDRESS]` (a Ray cluster, with the "
    "compare-tui[ray] extra; ADDRESS: `auto`, the default, for one started on this machine, "
    f"`ray://HOST:10001`, or the head's HOST:6379). Default: ${SCORERS_ENV}, else local"
)


class ScorerChoiceError(CompareTuiError):
    """`--scorers` (or its environment variable) names no place scorers can run."""


def parse_scorers(choice: str) -> tuple[str, str | None]:
    """`("local", None)` or `("ray", ADDRESS)`; raises `ScorerChoiceError` for anything else."""
    value = choice.strip()
    if value == "local":
        return "local", None
    if value == "ray":
        return "ray", "auto"
    if value.startswith("ray="):
        address = value.removeprefix("ray=").strip()
        if address:
            return "ray", address
    raise ScorerChoiceError(
        f"--scorers {choice!r}: give `local`, `ray` (a cluster started on this machine) or "
        "`ray=ADDRESS` (ray://HOST:10001, or the head's HOST:6379)"
    )


def scorer_executor(
    choice: str | None, jobs: int | None, environ: Mapping[str, str] | None = None, *, needed: bool = True
) -> ScorerExecutor:
    """The executor the options name, connected (a cluster that cannot be used raises
    `CompareTuiError` before anything is sent). The caller closes it.

    `needed=False` (the golden set has no command scorer): the choice is still checked, but no
    cluster is connected to, and a local executor returned: a set with nothing to send a cluster
    is not refused because the cluster `$COMPARE_TUI_SCORERS` names is down."""
    picked = choice or current(environ).scorers or "local"
    if jobs is not None and jobs < 1:
        raise ScorerChoiceError(f"--scorer-jobs {jobs}: give at least 1")
    kind, address = parse_scorers(picked)
    if kind == "local" or not needed:
        return LocalScorers(jobs)
    from compare_tui.scoring.ray_cluster import RayScorers

    executor = RayScorers(address or "auto", jobs=jobs)
    executor.connect()
    return executor


def where_scorers_run(described: Mapping[str, Any]) -> str:
    """One line saying where command scorers ran, from an executor's `describe()` (as stored
    in a run's environment under `scorers`)."""
    jobs = described.get("jobs")
    if described.get("kind") == "ray":
        nodes = described.get("nodes") or []
        address, gcs = described.get("address"), described.get("gcs_address")
        if gcs and gcs != address:
            address = f"{address} ({gcs})"
        listed = ", ".join(
            f"{n.get('address')} (node {str(n.get('node_id'))[:8]}, {n.get('cpus', 0):g} CPU)" for n in nodes
        )
        return (
            f"command scorers on the Ray cluster at {address}, {len(nodes)} node(s): {listed}; "
            f"{jobs} at once, a lost node's scorers retried {described.get('retries')}x; "
            "each in the same process sandbox on its worker"
        )
    return f"command scorers on this machine, {jobs} at once"

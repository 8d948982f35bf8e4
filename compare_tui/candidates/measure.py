"""What this store has measured of one model on one workload: its token mix, its throughput, its
pass rate with an interval, and what its runs cost in the last 1, 7 and 30 days.

Read from the store's own runs (`runs` and `attempts`); nothing is estimated here. A figure the
store does not hold is None, and the caller says "not measured yet" rather than guessing.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, NamedTuple

from compare_tui.catalogue import TokenPriceCost
from compare_tui.report.cost import run_duration_s
from compare_tui.report.stats import Interval, proportion_interval
from compare_tui.store import RunRecord, Store
from compare_tui.vocabulary import FINISHED_STATUSES, Outcome, measured, task_outcome

SPEND_WINDOWS_DAYS = (1, 7, 30)
"""The windows of recent spend, in days back from now."""


@dataclass(frozen=True, slots=True)
class Quality:
    """A model's pass rate on the workload's golden set, from its latest finished run."""

    passed: int
    measured: int
    """Tasks with a measured outcome (pass or fail; errors and tasks awaiting review are not)."""
    interval: Interval
    """Exact (Clopper–Pearson) 95 % interval of `passed / measured`."""
    run_id: str
    date: str
    """When that run finished (YYYY-MM-DD)."""
    same_version: bool
    """The run was on the golden set's current digest (else an earlier version of it)."""

    @property
    def rate(self) -> float:
        return self.passed / self.measured


@dataclass(frozen=True, slots=True)
class Throughput:
    """Tokens (prompt + completion) a second on this workload, from one finished run."""

    tokens_per_s: float
    run_id: str
    concurrency: int | None
    """The run's concurrency: throughput is at that load."""


@dataclass(frozen=True, slots=True)
class ModelMeasures:
    """Everything the store measured of one model on one workload."""

    model: str
    runs: int
    requests_with_usage: int
    prompt_tokens: int
    completion_tokens: int
    quality: Quality | None
    throughput: Throughput | None


def _finished(runs: list[RunRecord]) -> list[RunRecord]:
    return [run for run in runs if run.status in FINISHED_STATUSES]


def measures_of(store: Store, workload_id: str, model: str, digest: str | None = None) -> ModelMeasures:
    """`model`'s measures on `workload_id` (every finished run; quality from the latest run on
    `digest` when there is one, else the latest run at all)."""
    runs = _finished(store.list_runs(goldset_id=workload_id, model=model))
    prompt = completion = with_usage = 0
    throughput: Throughput | None = None
    for run in runs:  # newest first
        run_tokens = 0
        for row in store.attempt_columns(run.id, ["prompt_tokens", "completion_tokens"]):
            if row["prompt_tokens"] is None and row["completion_tokens"] is None:
                continue  # the server reported no usage: not counted as zero
            with_usage += 1
            prompt += row["prompt_tokens"] or 0
            completion += row["completion_tokens"] or 0
            run_tokens += (row["prompt_tokens"] or 0) + (row["completion_tokens"] or 0)
        duration = run_duration_s(run.started_at, run.finished_at)
        if throughput is None and duration and run_tokens:
            throughput = Throughput(run_tokens / duration, run.id, run.settings.get("concurrency"))
    # Quality from the newest run on the set's current version, else the newest at all; a run
    # that decided no task (stopped before its first, or every task left to a person) measured
    # nothing, so the one before it counts.
    ordered = sorted(runs, key=lambda run: (run.goldset_digest != digest, -_stamp(run.finished_at)))
    quality = next((q for run in ordered if (q := _quality(store, run, digest)) is not None), None)
    return ModelMeasures(model, len(runs), with_usage, prompt, completion, quality, throughput)


def _stamp(value: str | None) -> float:
    return datetime.fromisoformat(value).timestamp() if value else 0.0


def _quality(store: Store, run: RunRecord, digest: str | None) -> Quality | None:
    outcomes: dict[str, list[str]] = defaultdict(list)
    for row in store.attempt_columns(run.id, ["task_id", "outcome", "error_class"]):
        if measured(row["outcome"], row["error_class"]):
            outcomes[row["task_id"]].append(row["outcome"])
    verdicts = {task: review.verdict for task, review in store.reviews_for_run(run.id).items()}
    tasks = [task_outcome(found, verdicts.get(task)) for task, found in outcomes.items()]
    decided = [outcome for outcome in tasks if outcome in (Outcome.PASS, Outcome.FAIL)]
    interval = proportion_interval(sum(o is Outcome.PASS for o in decided), len(decided))
    if interval is None:
        return None
    return Quality(
        passed=sum(o is Outcome.PASS for o in decided),
        measured=len(decided),
        interval=interval,
        run_id=run.id,
        date=(run.finished_at or run.created_at)[:10],
        same_version=digest is None or run.goldset_digest == digest,
    )


def run_spend(store: Store, run: RunRecord) -> list[tuple[str, float]]:
    """What one run cost, as (when, amount) pieces: each attempt's tokens at the run's recorded
    token price, or the run's duration at its hourly rate (stamped when it finished)."""
    basis = run.cost_basis or {}
    if basis.get("basis") == "hardware":
        duration = run_duration_s(run.started_at, run.finished_at)
        if duration is None or run.finished_at is None:
            return []
        return [(run.finished_at, float(basis["usd_per_hour"]) * duration / 3600)]
    if basis.get("basis") != "token_price":
        return []
    price_in, price_out = float(basis["usd_per_mtok_input"]), float(basis["usd_per_mtok_output"])
    pieces = []
    for row in store.attempt_columns(run.id, ["prompt_tokens", "completion_tokens", "finished_at"]):
        amount = (price_in * (row["prompt_tokens"] or 0) + price_out * (row["completion_tokens"] or 0)) / 1e6
        pieces.append((row["finished_at"] or run.created_at, amount))
    return pieces


def recent_spend(store: Store, workload_id: str, model: str, now: datetime | None = None) -> dict[int, float]:
    """What `model`'s runs on `workload_id` cost in each of `SPEND_WINDOWS_DAYS` back from `now`."""
    now = now or datetime.now(UTC)
    starts = {days: now - timedelta(days=days) for days in SPEND_WINDOWS_DAYS}
    totals = dict.fromkeys(SPEND_WINDOWS_DAYS, 0.0)
    for run in store.list_runs(goldset_id=workload_id, model=model):
        for when, amount in run_spend(store, run):
            moment = datetime.fromisoformat(when)
            for days, start in starts.items():
                if start <= moment <= now:
                    totals[days] += amount
    return totals


class GatewayRequest(NamedTuple):
    """One request of the managed gateway's traffic log, as the spend windows read it (a named
    tuple: a log holds a request per line, and each is made once per view)."""

    model_group: str | None
    """The alias the request asked for."""
    model: str | None
    at: float
    """When it ended (else started), in epoch seconds."""
    response_cost: float | None
    """USD as LiteLLM priced it (None: not priced)."""
    prompt_tokens: int | None
    completion_tokens: int | None


def read_gateway_log(log: Path | None, aliases: Iterable[str]) -> tuple[GatewayRequest, ...] | None:
    """The dated requests to `aliases` (workload ids) in the managed gateway's traffic log (one
    JSON line a request), read and parsed once for a whole view: mirrored (shadow) copies are not
    a workload's traffic and are left out, as are lines cut short by a crash of the proxy. None
    when there is no log (`log` None: no managed gateway here) or it cannot be read.

    A line that does not hold any alias as a JSON string is skipped unparsed: a workload id is
    ASCII letters, digits, `.`, `_` and `-` (the set format's pattern), which JSON writes as
    they are, so no request to an alias is skipped, and the log's other traffic costs no parse."""
    if log is None:
        return None
    try:
        lines = log.read_text(encoding="utf-8").splitlines()
    except OSError:
        return None
    quoted = [json.dumps(alias) for alias in aliases]
    requests = []
    for line in lines:
        if not any(alias in line for alias in quoted):
            continue
        try:
            record = json.loads(line)
        except ValueError:
            continue  # a line cut short by a crash of the proxy
        if not isinstance(record, dict) or record.get("is_silent_experiment"):
            continue
        at = _epoch(record.get("endTime") or record.get("startTime"))
        if at is None:
            continue
        group, model = record.get("model_group"), record.get("model")
        cost, prompt, completion = (
            record.get("response_cost"),
            record.get("prompt_tokens"),
            record.get("completion_tokens"),
        )
        requests.append(
            GatewayRequest(
                group if isinstance(group, str) else None,
                model if isinstance(model, str) else None,
                at,
                float(cost) if isinstance(cost, int | float) and not isinstance(cost, bool) else None,
                prompt if isinstance(prompt, int) else None,
                completion if isinstance(completion, int) else None,
            )
        )
    return tuple(requests)


def gateway_spend(
    requests: Iterable[GatewayRequest], alias: str, price: TokenPriceCost | None, now: datetime | None = None
) -> dict[int, float] | None:
    """What the traffic through the managed gateway's `alias` cost in each of
    `SPEND_WINDOWS_DAYS` back from `now`, from its traffic log's `requests`
    (`read_gateway_log`): each request's `response_cost` when LiteLLM priced it, else its tokens
    at `price`. None when the log holds no request of the alias (the store's runs are then the
    only source)."""
    end = (now or datetime.now(UTC)).timestamp()
    starts = {days: end - timedelta(days=days).total_seconds() for days in SPEND_WINDOWS_DAYS}
    totals = dict.fromkeys(SPEND_WINDOWS_DAYS, 0.0)
    seen = False
    for request in requests:
        if alias != request.model_group and alias != request.model:
            continue
        cost = _request_cost(request, price)
        if cost is None:
            continue
        seen = True
        for days, start in starts.items():
            if start <= request.at <= end:
                totals[days] += cost
    return totals if seen else None


def _epoch(value: Any) -> float | None:
    """A log time in epoch seconds: LiteLLM writes epoch seconds; an ISO stamp is read too."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, str):
        try:
            moment = datetime.fromisoformat(value)
        except ValueError:
            return None
        return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).timestamp()
    return None


def _request_cost(request: GatewayRequest, price: TokenPriceCost | None) -> float | None:
    if request.response_cost is not None:
        return request.response_cost
    prompt, completion = request.prompt_tokens, request.completion_tokens
    if price is None or prompt is None or completion is None:
        return None
    return (prompt * price.usd_per_mtok_input + completion * price.usd_per_mtok_output) / 1e6

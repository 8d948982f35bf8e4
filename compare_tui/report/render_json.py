"""The report as JSON, schema `compare-tui/report` version 3 (documented in SCHEMA.md).

The field names here are the schema: they are written out one by one (not derived from the
dataclasses) so that renaming a Python field can never silently change the file format.
Shares are 0–1 numbers, times are milliseconds, memory is bytes, money is in `currency`.
"""

from __future__ import annotations

import json
from typing import Any, TypedDict

from compare_tui.endpoint.fingerprint import Difference
from compare_tui.report.cost import Cost
from compare_tui.report.figures import ModelFigures
from compare_tui.report.model import Report
from compare_tui.report.paired import PairedComparison
from compare_tui.report.prompt_cache import CacheCondition
from compare_tui.report.sequential import Look
from compare_tui.report.sequential_replay import ORDER_RULE, sequential_replays
from compare_tui.report.sequential_run import METHOD, SequentialRun, candidate_words
from compare_tui.report.server_latency import LatencyCrossCheck
from compare_tui.report.serving import ServingSummary
from compare_tui.report.stats import PAIRED_METHOD, Interval, Percentiles
from compare_tui.report.trajectories import Trajectories

SCHEMA = "compare-tui/report"
SCHEMA_VERSION = 3


class BoundsPp(TypedDict):
    """A confidence sequence's bounds on B − A, in percentage points."""

    low: float
    high: float


class LookJson(TypedDict):
    """One look of a sequential verdict."""

    tasks: int
    cs_pp: BoundsPp
    verdict: str
    settled: bool
    curtailed: bool
    missed: bool


class PromptCacheJson(TypedDict):
    """A run's prompt-cache condition: asked, held, and what the server reported reusing."""

    asked: str
    how: str | None
    held: bool
    cached_tokens: int
    prompt_tokens: int
    requests: int
    share: float | None


class DifferenceJson(TypedDict):
    """One serving setting that differs: its key, label and both sides as reported."""

    field: str
    label: str
    before: object
    after: object


class PercentilesJson(TypedDict):
    """Latency percentiles (ms) over `n` measured requests; None without enough of them."""

    n: int
    p50: float | None
    p95: float | None
    p99: float | None


class CrossCheckJson(TypedDict):
    """The server's TTFT beside the client's for one run (`report.server_latency`)."""

    run_id: str
    model: str
    source: str
    measures: str
    requests: int
    executions: int
    executions_total: int
    server_ttft_p50_ms: float
    server_ttft_bucket_ms: list[float] | None
    server_ttft_mean_ms: float
    client_ttft_p50_ms: float
    client_ttft_mean_ms: float
    difference_ms: float
    large: bool
    other_requests: int


def render_json(report: Report) -> str:
    """The report as a JSON document (UTF-8 text, two-space indent, ending in a newline)."""
    return json.dumps(report_document(report), indent=2, ensure_ascii=False) + "\n"


def report_document(report: Report) -> dict[str, Any]:
    """The report as plain JSON-ready data, in the documented schema."""
    rec = report.recommendation
    serving = {s.run_id: s for s in report.serving}
    cache = {c.label: c for c in report.prompt_cache}
    return {
        "schema": SCHEMA,
        "schema_version": SCHEMA_VERSION,
        "title": report.title,
        "comparison_id": report.comparison_id,
        "goldset": {
            "workload_id": report.goldset.workload_id,
            "name": report.goldset.name,
            "version": report.goldset.version,
            "digest": report.goldset.digest,
        },
        "run_ids": list(report.run_ids),
        "task_ids": list(report.task_ids),
        "recommendation": {
            "winner": rec.winner,
            "tied": list(rec.tied),
            "runner_up": rec.runner_up,
            "lead_points": rec.lead_points,
            "confidence": rec.confidence,
            "reasons": list(rec.reasons),
            "summary": rec.summary,
            "label": rec.label,
            "rating_note": report.rating_note,
        },
        "models": [
            _model(row)
            | {"serving": _serving(serving.get(row.run_id)), "prompt_cache": _prompt_cache(cache.get(row.label))}
            for row in report.models
        ],
        "refused": [
            {"run_id": r.run_id, "model": r.model_name, "label": r.label, "reason": r.reason} for r in report.refused
        ],
        "paired": [_paired(p) for p in report.paired],
        "server_latency": [_cross_check(c) for c in report.server_latency],
        "decision": _decision(report),
        "sequential": _sequential(report),
        "caveats": [{"code": c.code, "text": c.text} for c in report.caveats],
        "latency_distributions": [
            {
                "metric": d.metric,
                "title": d.title,
                "edges_ms": list(d.edges),
                "series": [
                    {"model": s.label, "n": s.n, "counts": list(s.counts), "quantiles_ms": list(s.quantiles)}
                    for s in d.series
                ],
            }
            for d in report.latency_distributions
        ],
        "trajectories": [_trajectories(t) for t in report.trajectories],
        "step_grading": None
        if report.step_grading is None
        else {
            "judge": report.step_grading.judge,
            "rubric": report.step_grading.rubric,
            "pass_at": report.step_grading.pass_at,
            "calibration": report.step_grading.calibration or None,
            "labels": report.step_grading.calibration_labels,
            "verified": report.step_grading.verified,
        },
    }


def _sequential(report: Report) -> dict[str, Any] | None:
    """A `--stop-when-settled` comparison's sequences look by look (`report.sequential_run`), else
    the look back of the anytime-valid test (`report.sequential_replay`); None without a decision."""
    if report.sequential is not None:
        return _sequential_run(report.sequential)
    replays = sequential_replays(report)
    if not replays:
        return None
    return {
        "mode": "look_back",
        "kind": "confidence sequence (anytime-valid), looked back on the finished comparison",
        "order": ORDER_RULE,
        "candidates": [
            {
                "candidate": r.candidate,
                "tasks": r.tasks,
                "settled_at": r.look.tasks if r.look.settled else None,
                "settled_early": r.settled_early,
                "verdict": str(r.look.verdict),
                "curtailed": r.look.curtailed,
                "missed": r.look.missed,
                "level": r.level,
                "cs_pp": {"low": r.look.low * 100, "high": r.look.high * 100},
                "words": r.words,
            }
            for r in replays
        ],
    }


def _look(look: Look) -> LookJson:
    return {
        "tasks": look.tasks,
        "cs_pp": {"low": look.low * 100, "high": look.high * 100},
        "verdict": str(look.verdict),
        "settled": look.settled,
        "curtailed": look.curtailed,
        "missed": look.missed,
    }


def _sequential_run(seq: SequentialRun) -> dict[str, Any]:
    return {
        "mode": "stopped_when_settled",
        "kind": "confidence sequence (anytime-valid); each candidate's requests stopped once its verdict settled",
        "method": METHOD,
        "seed": seq.seed,
        "order": list(seq.order),
        "total": seq.total,
        "level": seq.level,
        "settled": seq.settled,
        "settled_after": seq.settled_after,
        "requests_not_sent": seq.requests_not_sent,
        "not_sent": dict(seq.not_sent),
        "not_spent": seq.not_spent,
        "currency": seq.currency,
        "words": seq.words,
        "candidates": [
            {
                "candidate": c.candidate,
                "settled_at": c.look.tasks if c.look is not None and c.look.settled else None,
                "verdict": None if c.look is None else str(c.look.verdict),
                "cs_pp": None if c.look is None else {"low": c.look.low * 100, "high": c.look.high * 100},
                "curtailed": c.look is not None and c.look.curtailed,
                "words": candidate_words(c, seq.total, seq.level),
                "looks": [] if c.sequence is None else [_look(look) for look in c.sequence.looks],
            }
            for c in seq.candidates
        ],
    }


def _trajectories(t: Trajectories) -> dict[str, Any]:
    return {
        "model": t.label,
        "runs_driven": {"driven": t.driven, "decided": t.decided, "rate": t.rate, "ci95": _interval(t.interval)},
        "runs_lost": t.lost,
        "runs_undecided": t.undecided,
        "steps": {
            "kept": t.steps_kept,
            "lost": t.steps_lost,
            "not_measured": t.steps_not_measured,
            "by_grade": t.steps_by_grade,
            "rate": t.step_rate,
            "ci95": _interval(t.step_interval),
        },
        "runs": [
            {
                "run": s.run,
                "task_ids": list(s.task_ids),
                "statuses": list(s.statuses),
                "verdict": s.verdict,
                "first_lost_step": s.first_lost,
                "not_measured_steps": list(s.not_measured),
                "by_grade_steps": list(s.by_grade),
            }
            for s in t.runs
        ],
    }


def _serving(summary: ServingSummary | None) -> dict[str, Any] | None:
    if summary is None or not summary.read:
        return None
    return {
        "fingerprint": dict(summary.fingerprint),
        "rows": [{"label": label, "value": value} for label, value in summary.rows],
        "block": None
        if summary.block is None
        else [{"label": f.label, "value": f.value, "checked": f.checked} for f in summary.block.facts],
        "loaded_check": dict(summary.loaded) if summary.loaded else None,
        "unread": summary.unread,
        "catalogue_differences": [_difference(d) for d in summary.catalogue_differences],
        "changes": [{"at": c.at, "differences": [_difference(d) for d in c.differences]} for c in summary.changes],
    }


def _prompt_cache(condition: CacheCondition | None) -> PromptCacheJson | None:
    if condition is None:
        return None
    return {
        "asked": condition.asked,
        "how": condition.how,
        "held": condition.held,
        "cached_tokens": condition.cached_tokens,
        "prompt_tokens": condition.prompt_tokens,
        "requests": condition.requests,
        "share": None if condition.share is None else round(condition.share, 6),
    }


def _difference(d: Difference) -> DifferenceJson:
    return {"field": d.key, "label": d.label, "before": d.before, "after": d.after}


def _interval(value: Interval | None) -> dict[str, float] | None:
    return None if value is None else {"low": value.low, "high": value.high}


def _percentiles(p: Percentiles) -> PercentilesJson:
    return {"n": p.n, "p50": p.p50, "p95": p.p95, "p99": p.p99}


def _cross_check(check: LatencyCrossCheck) -> CrossCheckJson:
    return {
        "run_id": check.run_id,
        "model": check.label,
        "source": check.source,
        "measures": check.measure,
        "requests": check.requests,
        "executions": check.executions,
        "executions_total": check.executions_total,
        "server_ttft_p50_ms": round(check.server_p50_ms, 3),
        "server_ttft_bucket_ms": list(check.server_bucket_ms) if check.server_bucket_ms else None,
        "server_ttft_mean_ms": round(check.server_mean_ms, 3),
        "client_ttft_p50_ms": round(check.client_p50_ms, 3),
        "client_ttft_mean_ms": round(check.client_mean_ms, 3),
        "difference_ms": round(check.difference_ms, 3),
        "large": check.large,
        "other_requests": check.other_requests,
    }


def _model(row: ModelFigures) -> dict[str, Any]:
    counts, tokens, gpu = row.counts, row.tokens, row.gpu
    return {
        "run_id": row.run_id,
        "model": row.model_name,
        "label": row.label,
        "kind": row.model_kind,
        "provenance": row.provenance,
        "run_status": row.run_status,
        "completed": row.completed,
        "pass_rate": {
            "rate": row.pass_rate.rate,
            "passed": row.pass_rate.passed,
            "scored": row.pass_rate.scored,
            "errored": row.pass_rate.errored,
            "ci95": _interval(row.pass_rate.interval),
        },
        "counts": {
            "pass": counts.passed,
            "fail": counts.failed,
            "review": counts.review,
            "error": counts.errored,
            "missing": counts.missing,
            "human": counts.human,
            "human_decided": counts.human_decided,
            "human_passed": counts.human_passed,
            "human_failed": counts.human_failed,
            "overridden": counts.overridden,
            "planned": counts.planned,
            "attempts": counts.attempts,
        },
        "latency": {
            "ttft_ms": _percentiles(row.latency.ttft_ms),
            "e2e_ms": _percentiles(row.latency.e2e_ms),
            "includes_network": row.latency.includes_network,
        },
        "tokens": {
            "prompt_per_completed_task": tokens.prompt_per_task,
            "completion_per_completed_task": tokens.completion_per_task,
            "prompt_total": tokens.prompt_total,
            "completion_total": tokens.completion_total,
            "attempts": tokens.attempts,
            "attempts_without_usage": tokens.attempts_without_usage,
            "note": tokens.note,
        },
        "gpu_memory": {
            "applicable": gpu.applicable,
            "measured": gpu.measured,
            "peak_bytes": gpu.peak_bytes,
            "baseline_bytes": gpu.baseline_bytes,
            "devices": gpu.devices,
            "reason": gpu.reason,
            "notes": list(gpu.notes),
            "source": gpu.source,
            "host": gpu.host,
            "device_names": list(gpu.device_names),
            "uuids": list(gpu.uuids),
            "kv_cache_peak": gpu.kv_cache_peak,
        },
        "cost": _cost(row.cost),
        "missing_figures": list(row.missing),
        "awaiting_review": list(row.awaiting_review),
        "error_classes": dict(row.error_classes),
        "not_measured": dict(row.not_measured),
        "text_calls": {
            "failed": row.text_calls.failed,
            "as_text": row.text_calls.as_text,
            "right": row.text_calls.right,
            "unknown": row.text_calls.unknown,
            "passed_as_text": row.text_calls.passed_as_text,
        },
        "tasks": [
            {
                "id": b.task_id,
                "status": b.status,
                "human": b.human,
                "verdict": b.verdict,
                "scorer_status": b.scorer_status,
                "detail": b.detail,
            }
            for b in row.blocks
        ],
    }


def _cost(cost: Cost) -> dict[str, Any]:
    out: dict[str, Any] = {
        "basis": cost.basis,
        "currency": cost.currency,
        "total": cost.total,
        "per_completed_task": cost.per_task,
        "note": cost.note,
    }
    if cost.basis == "hardware":
        out |= {
            "per_hour": cost.usd_per_hour,
            "gpu_count": cost.gpu_count,
            "duration_s": cost.duration_s,
            "utilisation": [{"utilisation": p.utilisation, "per_completed_task": p.per_task} for p in cost.utilisation],
        }
    else:
        out |= {
            "per_mtok_input": cost.price_input,
            "per_mtok_output": cost.price_output,
            "per_mtok_cached": cost.price_cached,
            "captured": cost.captured,
            "source": cost.source,
        }
    return out


def _paired(p: PairedComparison) -> dict[str, Any]:
    return {
        "model_a": p.model_a,
        "run_a": p.run_a,
        "model_b": p.model_b,
        "run_b": p.run_b,
        "tasks": p.tasks,
        "flips": {"both": p.both, "only_a": p.only_a, "only_b": p.only_b, "neither": p.neither},
        "difference": p.difference,
        "ci95": _interval(p.interval),
        "level": p.level,
        "mcnemar_p": p.mcnemar_p,
        "ci_method": PAIRED_METHOD,
        "within_noise": p.within_noise,
        "tasks_needed": p.tasks_needed,
        "more_tasks": p.more_tasks,
        "sentence": p.sentence,
        "left_out": dict(p.left_out),
    }


def _decision(report: Report) -> dict[str, Any] | None:
    decision = report.decision
    if decision is None:
        return None if report.decision_note is None else {"baseline": None, "note": report.decision_note}
    return {
        "baseline": decision.baseline,
        "baseline_source": decision.baseline_source,
        "margin_pp": decision.margin_pp,
        "recorded_margin_pp": decision.recorded_margin_pp,
        "margin_after_data": decision.margin_after_data,
        "level": decision.level,
        "multiplicity": decision.multiplicity,
        "rule": decision.rule,
        "summary": decision.summary,
        "action": str(decision.action),
        "chosen": decision.chosen,
        "note": None,
        "versus": [
            {
                "candidate": v.candidate,
                "run_id": v.run_id,
                "verdict": None if v.verdict is None else str(v.verdict),
                "delta_pp": v.delta_pp,
                "ci95_pp": None
                if v.interval95 is None
                else {"low": v.interval95.low * 100, "high": v.interval95.high * 100},
                "level": v.level,
                "ci_pp": None if v.interval_pp is None else {"low": v.interval_pp[0], "high": v.interval_pp[1]},
                "verdict_words": None if v.verdict is None else v.verdict_words(decision.margin_pp),
                "sequential": None
                if v.sequential is None
                else {
                    "settled": v.sequential.settled,
                    "tasks": v.sequential.tasks,
                    "total": v.sequential.total,
                    "cs_pp": {"low": v.sequential.low_pp, "high": v.sequential.high_pp},
                },
                "mcnemar_p": v.paired.mcnemar_p,
                "tasks": v.paired.tasks,
                "tasks_needed": v.tasks_needed,
                "needed": [
                    {
                        "goal": n.goal,
                        "tasks": n.tasks,
                        "power": n.power,
                        "reason": n.reason,
                        "discordance": n.discordance,
                        "observed": n.observed,
                    }
                    for n in v.needed
                ],
                "left_out": dict(v.paired.left_out),
                "ttft_p50_pct": v.ttft_p50_pct,
                "e2e_p50_pct": v.e2e_p50_pct,
                "e2e_p95_pct": v.e2e_p95_pct,
                "tokens_per_task_pct": v.tokens_per_task_pct,
                "tokens_paired_pct": v.tokens_paired_pct,
                "tokens_tasks": v.tokens_tasks,
                "latency_tasks": v.latency_tasks,
                "cost": {
                    "baseline_per_task": v.cost.baseline_per_task,
                    "candidate_per_task": v.cost.candidate_per_task,
                    "baseline_basis": v.cost.baseline_basis,
                    "candidate_basis": v.cost.candidate_basis,
                    "currency": v.cost.currency,
                    "comparable": v.cost.comparable,
                    "change_pct": v.cost.change_pct,
                    "savings": v.cost.savings,
                    "note": v.cost.note,
                },
            }
            for v in decision.versus
        ],
    }

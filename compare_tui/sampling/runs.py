"""Whole agent runs → golden-set tasks with `trace` (`compare-tui sample --whole-runs`).

An agent run is one conversation logged as one record per assistant step: step k's request
holds exactly the history (and tools) the agent saw, and its reply is the action it took.
Callers can rely on:
- a run is sampled whole or not at all: every step 1..`of` becomes a task carrying
  `trace = {run, step, of}`, its input the logged request of that step (scrubbed), its
  expected outcome the logged action: a tool call (`tool_call` scorer, arguments matched
  `subset` unless asked otherwise) or the final text (`--text-scorer`, default `human`);
- runs are skipped whole, one reason counted per run (`skips.REASONS`, `run_*`): a missing
  step or no final text answer (`run_incomplete`), two different records of one step or a
  history that is not the previous step's history plus its action (`run_interleaved`), a
  tool call with no tool result after it (`run_missing_tool_result`), a tool result whose
  `tool_call_id` is not its call's id (`run_tool_id_mismatch`), no tool call at all
  (`run_without_tool_calls`), a step outside the window (`run_outside_window`). A step the
  line-level reader already skipped (e.g. several tool calls in one reply) leaves its run
  incomplete;
- deterministic as turn sampling: a run's key is `selection.recency_key` of its first step's
  hash-derived `u` and its last step's time, so the sample depends neither on line nor file
  order nor on the wall clock; the N best keys are taken;
- memory: one 64-byte record per usable turn in the window (the runs' steps), plus the
  parsed turns of at most `CHUNK` runs at a time.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .chat import ChatMessage
from .errors import SamplingError
from .options import SampleOptions
from .passes import Progress, Ref, Seen, candidates, fetch, place
from .pipeline import MAX_SAMPLES, open_logs
from .records import LoggedTurn
from .sampled import RunCounts, SampledSet, StepProvenance, describe
from .selection import recency_key
from .skips import SkipReport
from .sources import Source
from .tasks import StepTrace, build_task, task_id
from .window import iso, window_label

CHUNK = 256
"""Runs whose lines are parsed together while checking them."""

RUN_RULE = {
    "unit": "one whole agent run (a conversation logged as one record per assistant step)",
    "weight": "2 ** (-age / half_life), age of the run's last step back from the window's end, half_life = window / 4",
    "key": "u ** (1 / weight), u from sha256(seed, conversation, first step); best keys first (Efraimidis-Spirakis)",
    "whole": "every step of a chosen run becomes a task with trace = {run, step, of}; a run that fails a check is skipped whole",
    "duplicates": "a step logged twice identically counts once; two different records of one step skip the run (interleaved)",
}
REPLAY_CAVEAT = (
    "Each task replays one step of a recorded agent run: its input is exactly the history and tools the agent saw at "
    "that step (earlier actions and tool results are the logged model's, never the candidate's)."
)
"""The set's own caveat; the report adds the replay's boundary (`report.trajectories.CAVEAT`) to
every report of a set with traced tasks, so it is not repeated here."""


def run_id(conversation_hash: int) -> str:
    """The run's id in `trace.run`: its steps' task ids start with it."""
    return task_id(conversation_hash, 0).split("-")[0]


@dataclass
class _Run:
    conversation: int
    steps: dict[int, list[Seen]]

    def first_place(self, names: Sequence[str]) -> str:
        first = min((s.refs[0] for seens in self.steps.values() for s in seens), key=lambda r: (r[0], r[1]))
        return place(names, first)

    def key(self, half_life: float) -> float:
        last = max(s.timestamp for s in self.steps[max(self.steps)])
        return recency_key(self.steps[0][0].log_exp, last, half_life)


def _same(a: LoggedTurn, b: LoggedTurn) -> bool:
    return (a.request.messages, a.request.tools, a.reply) == (b.request.messages, b.request.tools, b.reply)


def _text(content: Any) -> str:
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return content or ""


def _action_matches(message: ChatMessage, turn: LoggedTurn) -> bool:
    """Whether the assistant message in the next step's history is this step's logged reply."""
    if message.get("role") != "assistant":
        return False
    reply = turn.reply
    calls = message.get("tool_calls") or []
    if reply.tool_name is None:
        return not calls and _text(message.get("content")).strip() == (reply.text or "").strip()
    if len(calls) != 1 or calls[0]["function"]["name"] != reply.tool_name:
        return False
    try:
        arguments = json.loads(calls[0]["function"]["arguments"] or "{}")
    except ValueError:
        return False
    return bool(arguments == (reply.tool_arguments or {}))


def check_run(steps: Sequence[LoggedTurn]) -> str | None:
    """The skip reason for a run given as its steps in order (one record each), else None."""
    if steps[-1].reply.tool_name is not None:
        return "run_incomplete"  # it ends on a tool call: no final answer
    if all(s.reply.tool_name is None for s in steps):
        return "run_without_tool_calls"
    for before, after in zip(steps, steps[1:]):
        seen, history = before.request.messages, after.request.messages
        if history[: len(seen)] != seen or len(history) <= len(seen) or not _action_matches(history[len(seen)], before):
            return "run_interleaved"
        if before.reply.tool_name is None:
            continue
        call_id = history[len(seen)]["tool_calls"][0]["id"]
        results = []
        for message in history[len(seen) + 1 :]:
            if message["role"] != "tool":
                break
            results.append(message)
        if not results:
            return "run_missing_tool_result"
        if any(r.get("tool_call_id") != call_id for r in results):
            return "run_tool_id_mismatch"
    return None


def _ordered(run: _Run, turns: dict[tuple[Ref, ...], LoggedTurn]) -> list[LoggedTurn] | str:
    """The run's steps in order (one record each), or the reason to skip it."""
    out = []
    for position in range(len(run.steps)):
        records = [turns[s.refs] for s in run.steps[position]]
        if any(not _same(records[0], other) for other in records[1:]):
            return "run_interleaved"
        out.append(records[0])
    return out


def _group(plan_start: float, plan_end: float, scanned: Any, names: Sequence[str], skips: SkipReport) -> list[_Run]:
    """Every conversation whose steps are 0..n-1 and all in the window, as a candidate run."""
    by_conversation: dict[int, dict[int, list[Seen]]] = {}
    for seen in candidates(scanned):
        by_conversation.setdefault(seen.conversation, {}).setdefault(seen.position, []).append(seen)
    runs = []
    for conversation in sorted(by_conversation):
        run = _Run(conversation, by_conversation[conversation])
        if set(run.steps) != set(range(len(run.steps))):
            skips.add("run_incomplete", run.first_place(names))
        elif any(not plan_start <= s.timestamp <= plan_end for seens in run.steps.values() for s in seens):
            skips.add("run_outside_window", run.first_place(names))
        else:
            runs.append(run)
    return runs


def _checked(runs: list[_Run], sources: Sequence[Source], names: Sequence[str], skips: SkipReport) -> list[_Run]:
    """The runs that pass `check_run`, parsed `CHUNK` runs at a time."""
    kept = []
    for start in range(0, len(runs), CHUNK):
        chunk = runs[start : start + CHUNK]
        turns = fetch(sources, [s for run in chunk for seens in run.steps.values() for s in seens])
        for run in chunk:
            ordered = _ordered(run, turns)
            reason = ordered if isinstance(ordered, str) else check_run(ordered)
            if reason is None:
                kept.append(run)
            else:
                skips.add(reason, run.first_place(names))
    return kept


def sample_runs(paths: Sequence[Path | str], options: SampleOptions, progress: Progress | None = None) -> SampledSet:
    """Sample `options.samples` whole agent runs from the logs at `paths`."""
    if not 1 <= options.samples <= MAX_SAMPLES:
        raise SamplingError(f"--runs {options.samples}: give a number from 1 to {MAX_SAMPLES}")
    logs = open_logs(paths, options, progress)
    window_s, redactor, sources, names, scanned = logs.window_s, logs.redactor, logs.sources, logs.names, logs.scanned
    try:
        anchor = logs.anchor()
        skips = scanned.skips
        line_skips = skips.total
        runs = _group(anchor - window_s, anchor, scanned, names, skips)
    finally:
        scanned.close()
    half_life = window_s / 4
    complete = _checked(runs, sources, names, skips)
    if not complete:
        run_skips = {r: n for r, n in skips.counts.items() if r.startswith("run_")}
        why = "; ".join(f"{n} × {r}" for r, n in sorted(run_skips.items())) or "no conversation found"
        raise SamplingError(
            f"no complete agent run in the {window_label(window_s)} window ending {iso(anchor)} ({why}); "
            "see `compare-tui sample --help` for what a whole run needs"
        )
    chosen = sorted(complete, key=lambda r: (r.key(half_life), r.conversation))[: options.samples]
    turns = fetch(sources, [s for run in chosen for seens in run.steps.values() for s in seens])
    tool_match = options.tool_match or "subset"
    tasks = []
    provenance: list[StepProvenance] = []
    for run in chosen:
        ordered = _ordered(run, turns)
        assert not isinstance(ordered, str)  # checked above; the files are checked unchanged by `fetch`
        of = len(ordered)
        for step, turn in enumerate(ordered, start=1):
            trace: StepTrace = {"run": run_id(run.conversation), "step": step, "of": of}
            tasks.append(
                build_task(
                    turn, run.conversation, None, redactor, options.text_scorer, tool_match=tool_match, trace=trace
                )
            )
            seen = run.steps[step - 1][0]
            provenance.append(
                {
                    "task": task_id(run.conversation, step - 1),
                    "run": trace["run"],
                    "step": step,
                    "of": of,
                    "logged_at": [place(names, ref) for ref in seen.refs],
                    "timestamp": iso(seen.timestamp),
                }
            )
    tasks.sort(key=lambda t: t["id"])
    provenance.sort(key=lambda p: str(p["task"]))
    counts: RunCounts = {
        "lines": sum(scanned.lines),
        "skipped_lines": line_skips - skips.counts["outside_window"],
        "usable_turns": scanned.usable,
        "candidate_runs": len(runs),
        "complete_runs": len(complete),
        "skipped_runs": sum(n for r, n in skips.counts.items() if r.startswith("run_")),
        "sampled_runs": len(chosen),
        "sampled_turns": len(tasks),
        "sampled_conversations": len(chosen),
        "by_reply": {
            "tool_call": sum(1 for t in tasks if "tool_call" in t["expected"]),
            "text": sum(1 for t in tasks if "text" in t["expected"]),
        },
    }
    return describe(
        tasks=tasks,
        options=options,
        sources=[
            (name, s, digest, lines) for name, s, digest, lines in zip(names, sources, scanned.digests, scanned.lines)
        ],
        window_s=window_s,
        anchor=anchor,
        anchor_from=logs.anchor_from,
        counts=counts,
        skips=skips.as_dict(),
        redaction=redactor.summary(),
        provenance=provenance,
        rule={**RUN_RULE, "arguments_match": tool_match},
        sampled_what=f"{len(chosen)} whole agent runs ({len(tasks)} steps)",
        replay_caveat=REPLAY_CAVEAT,
        extra={"unit": "run"},
    )

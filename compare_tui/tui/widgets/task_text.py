"""How a task and its attempts read on screen: the input, the expected outcome, and each attempt
with its answer (tool calls in canonical form), scorer detail, timings and tokens. Text only."""

from __future__ import annotations

from rich.text import Text

from compare_tui.report.formatting import DASH, MARK_WORDS, MARKS
from compare_tui.store import AttemptRecord
from compare_tui.tui.task_facts import RunAttempts, TaskFacts


def task_header(facts: TaskFacts) -> Text:
    text = Text()
    text.append(f"task {facts.task_id}", style="bold")
    if facts.task is not None and facts.task.tags:
        text.append(f"  tags: {', '.join(facts.task.tags)}")
    text.append(f"\nscorer: {facts.scorer_text or DASH}")
    if facts.set_problem:
        text.append(f"\n✗ {facts.set_problem}")
    return text


def _ms(value: float | None) -> str:
    return DASH if value is None else f"{value:.0f} ms"


def _tokens(attempt: AttemptRecord) -> str:
    if attempt.prompt_tokens is None and attempt.completion_tokens is None:
        return "not reported"
    return (
        f"{attempt.prompt_tokens if attempt.prompt_tokens is not None else DASH} + "
        f"{attempt.completion_tokens if attempt.completion_tokens is not None else DASH}"
    )


def attempt_text(attempt: AttemptRecord) -> Text:
    outcome = str(attempt.outcome)
    text = Text()
    text.append(f"#{attempt.attempt} {MARKS.get(outcome, '?')} {MARK_WORDS.get(outcome, outcome)}", style="bold")
    text.append(
        f"\nTTFT {_ms(attempt.ttft_ms)} · E2E {_ms(attempt.e2e_ms)} · tokens {_tokens(attempt)}"
        f" · retries {attempt.retries} · finish {attempt.finish_reason or DASH}"
    )
    answer = attempt.answer().rendered()
    text.append("\nanswer: ", style="bold")
    text.append(answer if answer else "(empty)")
    if attempt.reasoning:
        text.append(f"\nreasoning: {attempt.reasoning[:500]}")
    if attempt.score_detail:
        text.append(f"\nscorer: {attempt.score_detail}")
    if attempt.error:
        text.append(f"\nerror ({attempt.error_class or 'unclassified'}): {attempt.error}")
    return text


def run_text(row: RunAttempts) -> Text:
    run = row.run
    text = Text()
    text.append(f"{run.model_name}", style="bold")
    text.append(f"  run {run.id[:8]} · {run.provenance or 'no provenance label'}")
    if row.review is not None:
        r = row.review
        note = f" · “{r.note}”" if r.note else ""
        text.append(f"\nreviewed: {r.verdict} by {r.reviewer or 'unknown'} at {r.at[:19].replace('T', ' ')} UTC{note}")
    if not row.attempts:
        text.append("\nno attempt recorded for this task")
    for attempt in row.attempts:
        text.append("\n")
        text.append_text(attempt_text(attempt))
    return text


def step_action_text(row: RunAttempts) -> Text:
    """A run's action at a replayed step: its first attempt's answer (tool calls in canonical
    form) with the outcome's mark and words."""
    if not row.attempts:
        return Text(f"{MARKS['missing']} {MARK_WORDS['missing']}")
    attempt = row.attempts[0]
    outcome = str(attempt.outcome)
    text = Text()
    text.append(f"{MARKS.get(outcome, '?')} {MARK_WORDS.get(outcome, outcome)}\n", style="bold")
    text.append(attempt.answer().rendered() or "(empty)")
    return text

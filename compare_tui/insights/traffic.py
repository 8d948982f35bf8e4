"""Problems found in the traffic: for a set sampled from logged traffic (`compare-tui sample`),
the same reading of the baseline's own logged replies (the tasks' expected outcomes), where
today's model already fails, before any candidate is compared.

Two sources, both already on disk: the logged replies kept as expected outcomes (a refusal by
`causes.REFUSAL_PATTERNS`, a reply in another language than the request by `language`), and
what the sampler counted in `sample.json`'s `skipped` over every log line it read (replies cut
at the token limit, failed requests, empty or missing replies): those never became tasks.
Pure: `traffic_problems` reads values, not files.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from compare_tui.insights.causes import is_refusal
from compare_tui.insights.language import detect_language, language_name

EXAMPLES = 3
LOGGED_PROBLEMS = {
    "truncated_reply": "replies cut at the token limit",
    "failed_request": "failed requests (error, non-200 status or content filter)",
    "empty_reply": "empty replies",
    "no_reply": "responses with no reply",
}
"""`sample.json` skip reasons that are the logged model's own problems, in words."""


@dataclass(frozen=True, slots=True)
class LoggedReply:
    """One sampled task's logged reply (its expected text) and what was asked."""

    task_id: str
    reply: str
    request: str


@dataclass(frozen=True, slots=True)
class TrafficProblem:
    kind: str
    """`refusal`, `wrong_language`, or a `LOGGED_PROBLEMS` reason."""
    words: str
    count: int
    examples: tuple[str, ...] = ()
    """Task ids (sampled replies); empty for what the sampler skipped (no task was made)."""


@dataclass(frozen=True, slots=True)
class TrafficProblems:
    sampled: int
    """Sampled tasks with a logged text reply (the ones read here)."""
    problems: tuple[TrafficProblem, ...]


def traffic_problems(replies: Sequence[LoggedReply], skipped: Mapping[str, int]) -> TrafficProblems:
    """The baseline's own problems in the sampled replies and the sampler's skips."""
    refusals = [r.task_id for r in replies if is_refusal(r.reply)]
    languages: dict[str, list[str]] = {}
    for reply in replies:
        asked = detect_language(reply.request)
        answered = detect_language(reply.reply) if asked is not None else None
        if asked is not None and answered is not None and answered != asked:
            words = f"replies in {language_name(answered)} to requests in {language_name(asked)}"
            languages.setdefault(words, []).append(reply.task_id)
    problems = []
    if refusals:
        problems.append(TrafficProblem("refusal", "refusals", len(refusals), tuple(sorted(refusals)[:EXAMPLES])))
    for words, tasks in sorted(languages.items(), key=lambda item: (-len(item[1]), item[0])):
        problems.append(TrafficProblem("wrong_language", words, len(tasks), tuple(sorted(tasks)[:EXAMPLES])))
    for reason, words in LOGGED_PROBLEMS.items():
        if skipped.get(reason):
            problems.append(TrafficProblem(reason, f"{words} (skipped by the sampler)", int(skipped[reason])))
    return TrafficProblems(len(replies), tuple(problems))

"""The insights of a comparison, computed once from `InsightInputs` (pure; no store, no clock).

Three readings of the stored attempts:
- **failure groups**: every failed attempt (outcome `fail` or `error`) in exactly one group,
  keyed by its `Cause`; counts per model, each model's share of its own failed attempts, and a
  few example tasks;
- **against the baseline, by tag**: each candidate's discordant tasks (one passes, the other
  fails, by `vocabulary.task_outcome`) counted per task tag;
- **suspect tasks**: tasks every model failed for one same cause, tasks every model failed with
  answers none of which resembles the expected text, and tasks a model both passed and failed
  across attempts. The first two say the expected outcome may be wrong, which holds only where
  a capable model failed too: with no model passing `CAPABLE_SHARE` of its measured tasks, the
  tasks every model failed are listed apart as `unpassed` (no model passes them), not suspect.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field

from compare_tui.insights.causes import Cause, FailedAttempt, classify, clip
from compare_tui.insights.traffic import LoggedReply, TrafficProblems, traffic_problems
from compare_tui.vocabulary import Outcome, SuspectReason, task_outcome

EXAMPLES = 3
"""Example task ids shown per group."""
DIRECTIONAL_UNDER = 10
"""A tag with fewer discordant tasks than this is marked directional: a few tasks show a
direction, not a difference."""
UNTAGGED = "(untagged)"
CAPABLE_SHARE = 0.5
"""A model passing at least this share of its measured tasks (pass or fail) is capable: a task it
fails with every other model points at the expected outcome. Below it everywhere, the models are
the likelier cause."""


@dataclass(frozen=True, slots=True)
class ModelAttempts:
    """One model's run, as the insights read it."""

    model: str
    """The name shown (the catalogue name; with the run id's start when a model ran twice)."""
    run_id: str
    outcomes: Mapping[str, tuple[Outcome, ...]]
    """task id → its attempts' outcomes, in attempt order."""
    failed: tuple[FailedAttempt, ...] = ()
    """Every attempt whose outcome is `fail` or `error`."""
    verdicts: Mapping[str, str] = field(default_factory=dict)
    """task id → a person's latest verdict (it decides the task's outcome as in the report)."""


@dataclass(frozen=True, slots=True)
class InsightInputs:
    """Everything the insights are computed from (filled by `insights.load`)."""

    ref: str
    """The comparison id (else the run id) that opens this comparison again."""
    models: tuple[ModelAttempts, ...]
    baseline: str | None = None
    comparison_name: str = ""
    task_tags: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """task id → its tags from the golden set (empty when it could not be read)."""
    notes: tuple[str, ...] = ()
    logged: tuple[LoggedReply, ...] | None = None
    """A set sampled from traffic: its tasks' logged replies (None: not a sampled set)."""
    logged_skips: Mapping[str, int] = field(default_factory=dict)
    """A sampled set: `sample.json`'s skip counts (reason → lines)."""


@dataclass(frozen=True, slots=True)
class Member:
    """One failed attempt in a group."""

    model: str
    failed: FailedAttempt


@dataclass(frozen=True, slots=True)
class FailureGroup:
    number: int
    """1-based, in the order shown: most failed attempts first, then by cause."""
    cause: Cause
    counts: Mapping[str, int]
    """model → failed attempts in this group (every model, 0 included)."""
    shares: Mapping[str, float | None]
    """model → the group's share of that model's failed attempts (None: it failed none)."""
    examples: tuple[str, ...]
    members: tuple[Member, ...]

    @property
    def total(self) -> int:
        return len(self.members)


@dataclass(frozen=True, slots=True)
class TagSplit:
    """One candidate against the baseline on the tasks of one tag."""

    candidate: str
    tag: str
    losses: int
    """Tasks the baseline passed and the candidate failed."""
    wins: int
    """Tasks the candidate passed and the baseline failed."""
    lost_examples: tuple[str, ...]
    won_examples: tuple[str, ...]

    @property
    def directional(self) -> bool:
        return self.losses + self.wins < DIRECTIONAL_UNDER


@dataclass(frozen=True, slots=True)
class Suspect:
    task_id: str
    reason: SuspectReason
    detail: str
    """The shared cause, or which model passed how many attempts."""


@dataclass(frozen=True, slots=True)
class Insights:
    ref: str
    comparison_name: str
    baseline: str | None
    models: tuple[str, ...]
    attempts: Mapping[str, int]
    """model → attempts stored."""
    failed: Mapping[str, int]
    """model → failed attempts (the sum of its counts over the groups)."""
    groups: tuple[FailureGroup, ...]
    tag_splits: tuple[TagSplit, ...]
    suspects: tuple[Suspect, ...]
    notes: tuple[str, ...] = ()
    traffic: TrafficProblems | None = None
    """A set sampled from traffic: the logged model's own problems (`insights.traffic`)."""
    pass_shares: Mapping[str, float | None] = field(default_factory=dict)
    """model → the share of its measured tasks (pass or fail) it passed (None: none measured)."""
    unpassed: tuple[str, ...] = ()
    """Tasks every model failed when no model is capable (`CAPABLE_SHARE`): no model passes them,
    and they are not suspect (else empty: those tasks are judged as suspects)."""

    def open_command(self, group: FailureGroup) -> str:
        """The command that lists a group's tasks with their answers."""
        return f"compare-tui insights {self.ref} --group {group.number}"


def build_insights(inputs: InsightInputs) -> Insights:
    """The insights of `inputs` (see the module docstring)."""
    names = tuple(m.model for m in inputs.models)
    by_cause: dict[Cause, list[Member]] = defaultdict(list)
    causes: dict[str, dict[str, list[Cause]]] = {}
    for model in inputs.models:
        per_task = causes[model.model] = defaultdict(list)
        for failed in model.failed:
            cause = classify(failed)
            by_cause[cause].append(Member(model.model, failed))
            per_task[failed.task_id].append(cause)
    failed_counts = {m.model: len(m.failed) for m in inputs.models}
    shares = {m.model: _pass_share(m) for m in inputs.models}
    capable = any(share is not None and share >= CAPABLE_SHARE for share in shares.values())
    ordered = sorted(by_cause.items(), key=lambda item: (-len(item[1]), item[0]))
    groups = tuple(
        _group(number, cause, members, names, failed_counts) for number, (cause, members) in enumerate(ordered, 1)
    )
    return Insights(
        ref=inputs.ref,
        comparison_name=inputs.comparison_name,
        baseline=inputs.baseline,
        models=names,
        attempts={m.model: sum(len(o) for o in m.outcomes.values()) for m in inputs.models},
        failed=failed_counts,
        groups=groups,
        tag_splits=_tag_splits(inputs),
        suspects=(_sorted(_same_failures(inputs, causes) + _unlike_expected(inputs, causes)) if capable else ())
        + _flaky(inputs),
        notes=inputs.notes,
        traffic=traffic_problems(inputs.logged, inputs.logged_skips) if inputs.logged is not None else None,
        pass_shares=shares,
        unpassed=() if capable else _failed_by_all(inputs),
    )


def _pass_share(model: ModelAttempts) -> float | None:
    measured = [o for o in _outcomes(model).values() if o in (Outcome.PASS, Outcome.FAIL)]
    return measured.count(Outcome.PASS) / len(measured) if measured else None


def _failed_by_all(inputs: InsightInputs) -> tuple[str, ...]:
    """Tasks every model (two or more) failed."""
    if len(inputs.models) < 2:
        return ()
    outcomes = [_outcomes(m) for m in inputs.models]
    return tuple(sorted(t for t in outcomes[0] if all(out.get(t) is Outcome.FAIL for out in outcomes)))


def _group(
    number: int, cause: Cause, members: list[Member], names: tuple[str, ...], failed: Mapping[str, int]
) -> FailureGroup:
    counts = Counter(member.model for member in members)
    members.sort(key=lambda m: (m.failed.task_id, names.index(m.model), m.failed.attempt))
    return FailureGroup(
        number=number,
        cause=cause,
        counts={name: counts[name] for name in names},
        shares={name: counts[name] / failed[name] if failed[name] else None for name in names},
        examples=tuple(dict.fromkeys(m.failed.task_id for m in members))[:EXAMPLES],
        members=tuple(members),
    )


def _outcomes(model: ModelAttempts) -> dict[str, Outcome]:
    return {task: task_outcome(outs, model.verdicts.get(task)) for task, outs in model.outcomes.items()}


def _tag_splits(inputs: InsightInputs) -> tuple[TagSplit, ...]:
    base = next((m for m in inputs.models if m.model == inputs.baseline), None)
    if base is None:
        return ()
    base_out = _outcomes(base)
    splits = []
    for candidate in inputs.models:
        if candidate is base:
            continue
        lost: dict[str, list[str]] = defaultdict(list)
        won: dict[str, list[str]] = defaultdict(list)
        for task, outcome in sorted(_outcomes(candidate).items()):
            theirs = base_out.get(task)
            pair = (theirs, outcome)
            if pair not in ((Outcome.PASS, Outcome.FAIL), (Outcome.FAIL, Outcome.PASS)):
                continue
            side = lost if outcome is Outcome.FAIL else won
            for tag in inputs.task_tags.get(task) or (UNTAGGED,):
                side[tag].append(task)
        for tag in sorted(set(lost) | set(won), key=lambda t: (-len(lost[t]) - len(won[t]), t)):
            splits.append(
                TagSplit(
                    candidate.model,
                    tag,
                    losses=len(lost[tag]),
                    wins=len(won[tag]),
                    lost_examples=tuple(lost[tag][:EXAMPLES]),
                    won_examples=tuple(won[tag][:EXAMPLES]),
                )
            )
    return tuple(splits)


def _same_failures(inputs: InsightInputs, causes: Mapping[str, Mapping[str, list[Cause]]]) -> tuple[Suspect, ...]:
    if len(inputs.models) < 2:
        return ()
    outcomes = [_outcomes(m) for m in inputs.models]
    suspects = []
    for task in sorted(causes[inputs.models[0].model]):
        if any(out.get(task) is not Outcome.FAIL for out in outcomes):
            continue
        seen = {cause for per_task in causes.values() for cause in per_task.get(task, ())}
        if len(seen) == 1:
            (cause,) = seen
            suspects.append(Suspect(task, SuspectReason.SAME_FAILURE, cause.words()))
    return tuple(suspects)


def _sorted(suspects: tuple[Suspect, ...]) -> tuple[Suspect, ...]:
    return tuple(sorted(suspects, key=lambda s: s.task_id))


def _plain(text: str) -> str:
    return " ".join("".join(c if c.isalnum() else " " for c in text.casefold()).split())


def _resembles(expected: str, got: str) -> bool:
    """Whether an answer is near the expected text: one holds the other once case, punctuation
    and spacing are set aside."""
    want, have = _plain(expected), _plain(got)
    return bool(want) and bool(have) and (want in have or have in want)


def _unlike_expected(inputs: InsightInputs, causes: Mapping[str, Mapping[str, list[Cause]]]) -> tuple[Suspect, ...]:
    """Tasks every model failed, with an expected text (an `exact` scorer's) that no answer
    resembles; a task already suspect for one same failure is not listed twice."""
    if len(inputs.models) < 2:
        return ()
    outcomes = [_outcomes(m) for m in inputs.models]
    expected: dict[str, str] = {}
    answers: dict[str, list[str]] = defaultdict(list)
    for model in inputs.models:
        for failed in model.failed:
            data = failed.score_data
            if "expected" in data and "got" in data:
                expected.setdefault(failed.task_id, str(data["expected"]))
                answers[failed.task_id].append(str(data["got"]))
    found = []
    for task, want in sorted(expected.items()):
        if any(out.get(task) is not Outcome.FAIL for out in outcomes):
            continue
        if len({c for per_task in causes.values() for c in per_task.get(task, ())}) == 1:
            continue  # listed as one same failure
        if not any(_resembles(want, got) for got in answers[task]):
            found.append(
                Suspect(task, SuspectReason.UNLIKE_EXPECTED, f'no answer resembles the expected "{clip(want, 40)}"')
            )
    return tuple(found)


def _flaky(inputs: InsightInputs) -> tuple[Suspect, ...]:
    found: dict[str, list[str]] = defaultdict(list)
    for model in inputs.models:
        for task, outs in model.outcomes.items():
            passed = outs.count(Outcome.PASS)
            if passed and Outcome.FAIL in outs:
                found[task].append(f"{model.model} passed {passed} of {len(outs)} attempts")
    return tuple(Suspect(task, SuspectReason.FLAKY, "; ".join(found[task])) for task in sorted(found))

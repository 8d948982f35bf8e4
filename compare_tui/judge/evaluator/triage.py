"""The triage queue: where a judge disagrees with a person, with the executable scorer, with
itself (inconsistent orderings), or with the current evaluator — and the labels people give.

`load_triage` reads one judging from the store and returns a `TriageView`: the items (both
answers and both rationales of each), the figures and (for an evaluator comparison) the
badge, all recomputed from stored rows, so a saved label shows in the figures at once.
`save_label` stores a person's label with who and when: on a pair in `pair_labels`, on a
single answer as a review (the human label the report and the evaluator comparison use).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from compare_tui.judge.evaluator.compare import FAILED_CALL, BadgeName
from compare_tui.judge.evaluator.load import load_comparison
from compare_tui.judge.evaluator.render import decision_text
from compare_tui.judge.pair.figures import FAILED, INCONSISTENT, RESULT_WORDS
from compare_tui.judge.pair.render import percent
from compare_tui.judge.pair.report import judge_side, load_pair_report, scorer_preference
from compare_tui.judge.prompt.answers import StoredAnswer, expected_text, judged_answers
from compare_tui.judge.run.prepare import JudgingRefused, load_run_set
from compare_tui.store import ReviewRecord, RunRecord, Store
from compare_tui.store.judgements import JudgementRecord, JudgingKind, PairLabel, PairLabelRecord
from compare_tui.vocabulary import Outcome, ReviewVerdict


class Disagreement(StrEnum):
    """Why an item is in the triage queue (the TUI's filter keys 1–5, in this order)."""

    VS_LABEL = "judge vs label"
    VS_SCORER = "judge vs scorer"
    INCONSISTENT = "inconsistent"
    VS_CURRENT = "current vs candidate"
    FAILED = "failed call"


VS_LABEL, VS_SCORER, VS_CURRENT = Disagreement.VS_LABEL, Disagreement.VS_SCORER, Disagreement.VS_CURRENT
INCONSISTENT_KIND, FAILED_KIND = Disagreement.INCONSISTENT, Disagreement.FAILED
KINDS = tuple(Disagreement)
LABEL_KEYS = ("pass", "fail", "tie", "skip")
PAIR_LABELS: dict[str, PairLabel] = {"pass": "candidate", "fail": "baseline", "tie": "tie", "skip": "skip"}
"""On a pair, pass = the candidate's answer is better, fail = the baseline's is, tie = neither."""


@dataclass(frozen=True, slots=True)
class TriageItem:
    task_id: str
    kinds: tuple[Disagreement, ...]
    summary: str
    answers: tuple[tuple[str, str], tuple[str, str]]
    """(title, text) of the two answers side by side (grade: the answer and the expected outcome)."""
    rationales: tuple[tuple[str, str], tuple[str, str]]
    label: str | None = None
    label_by: str = ""
    label_at: str = ""
    label_note: str = ""

    @property
    def triaged(self) -> bool:
        """A person has labelled it (a skip counts: they looked and moved on)."""
        return self.label is not None


@dataclass(frozen=True, slots=True)
class TriageView:
    kind: JudgingKind
    """`pair` or `grade`."""
    judging_id: str
    run_id: str
    other_run_id: str | None
    title: str
    items: tuple[TriageItem, ...]
    figures: tuple[str, ...]
    badge: BadgeName | None = None

    def progress(self) -> tuple[int, int]:
        """(items triaged, items in the queue)."""
        return sum(1 for item in self.items if item.triaged), len(self.items)


def filtered(items: tuple[TriageItem, ...], kind: Disagreement | None) -> list[TriageItem]:
    """The items of one kind of disagreement (None: all)."""
    return [item for item in items if kind is None or kind in item.kinds]


def load_triage(store: Store, judging_ref: str, current: str | None = None) -> TriageView:
    """The triage view of a judging (id, prefix or `latest`). For a grade judging, `current` is
    `scorer` or a judging id (default: what evaluator-compare last compared it with)."""
    judging = store.get_judging(judging_ref)
    if judging.kind == "pair":
        return _pair_view(store, judging.id)
    return _grade_view(store, judging.id, current or judging.current or "scorer")


def _pair_view(store: Store, judging_id: str) -> TriageView:
    report = load_pair_report(store, judging_id)
    items = []
    for row in report.rows:
        kinds, side = [], judge_side(row.result)
        label = row.label.label if row.label else None
        if label not in (None, "skip") and side is not None and side != label:
            kinds.append(VS_LABEL)
        base, cand = (
            (row.baseline.outcome if row.baseline else None),
            (row.candidate.outcome if row.candidate else None),
        )
        preference = scorer_preference(base, cand)
        if preference is not None and side is not None and side != preference:
            kinds.append(VS_SCORER)
        if row.result == INCONSISTENT:
            kinds.append(INCONSISTENT_KIND)
        if row.result == FAILED:
            kinds.append(FAILED_KIND)
        if not kinds:
            continue
        rationales = (
            (f"judge, baseline shown first: {_verdict(row.ab)}", _rationale(row.ab)),
            (f"judge, candidate shown first: {_verdict(row.ba)}", _rationale(row.ba)),
        )
        items.append(
            TriageItem(
                row.task_id,
                tuple(kinds),
                f"judge: {RESULT_WORDS[row.result]} · scorer: baseline {base or '—'}, candidate {cand or '—'}",
                (
                    (f"baseline · {report.baseline.model_name}", _text(row.baseline)),
                    (f"candidate · {report.candidate.model_name}", _text(row.candidate)),
                ),
                rationales,
                label,
                *_label_meta(row.label),
            )
        )
    f = report.figures
    ci = "—" if f.interval is None else f"{percent(f.interval.low)}–{percent(f.interval.high)}"
    figures = (
        f"candidate wins {f.wins} · baseline wins {f.losses} · ties {f.all_ties} ({f.inconsistent} "
        f"inconsistent) · failed {f.failed} · win rate {percent(f.win_rate)} [{ci}] → {f.conclusion}",
        f"judge agrees with people on {report.agreed} of {report.labelled} labelled pairs",
    )
    title = f"{report.judging.judge_model} judging {report.candidate.model_name} vs {report.baseline.model_name}"
    return TriageView("pair", judging_id, report.baseline.id, report.candidate.id, title, tuple(items), figures)


def _grade_view(store: Store, judging_id: str, current: str) -> TriageView:
    current_judging = None if current == "scorer" else store.get_judging(current)
    loaded = load_comparison(store, judging_id, current_judging)
    c = loaded.comparison
    expected = _expected_texts(loaded.run)
    outcomes = judged_answers(store.attempts_for_run(loaded.run.id))
    reviews = store.reviews_for_run(loaded.run.id)
    items = []
    for row in c.rows:
        kinds = []
        if row.label is not None and row.candidate.level is not None and row.candidate.level != row.label:
            kinds.append(VS_LABEL)
        answer = outcomes.get(row.task_id)
        scorer = answer.outcome if answer else None
        if scorer in (Outcome.PASS, Outcome.FAIL) and row.candidate.level is not None and row.candidate.level != scorer:
            kinds.append(VS_SCORER)
        if row.changed:
            kinds.append(VS_CURRENT)
        if row.candidate.status == FAILED_CALL:
            kinds.append(FAILED_KIND)
        if not kinds:
            continue
        review = reviews.get(row.task_id)
        items.append(
            TriageItem(
                row.task_id,
                tuple(kinds),
                f"current: {decision_text(row.current)} · candidate: {decision_text(row.candidate)} · "
                f"scorer: {scorer or '—'}",
                (
                    (f"answer · {loaded.run.model_name}", _text(answer)),
                    ("expected outcome", expected.get(row.task_id, "(golden set not available)")),
                ),
                (
                    (f"current · {c.current_name}: {decision_text(row.current)}", row.current.rationale),
                    (f"candidate · {c.candidate_name}: {decision_text(row.candidate)}", row.candidate.rationale),
                ),
                review.verdict if review else None,
                review.reviewer if review else "",
                review.at if review else "",
                review.note if review else "",
            )
        )
    figures = (
        f"agreement {c.agreed} of {c.comparable} · labelled {c.labelled} (badge needs {c.min_labelled}) · "
        f"correct: current {c.current_correct}, candidate {c.candidate_correct} · failed calls {c.failed_calls}",
        f"badge: {c.badge.name} — {'; '.join(c.badge.reasons)}",
    )
    title = f"{c.candidate_name} vs {c.current_name} on {loaded.run.model_name}"
    return TriageView("grade", judging_id, loaded.run.id, None, title, tuple(items), figures, c.badge.name)


def save_label(store: Store, view: TriageView, task_id: str, key: str, *, reviewer: str, note: str = "") -> str:
    """Store a person's label (`pass`/`fail`/`tie`/`skip`) now; returns what was saved, in words.
    Raises ValueError for `tie` on a single answer (a tie needs two answers)."""
    if key not in LABEL_KEYS:
        raise ValueError(f"unknown label {key!r}: use one of {', '.join(LABEL_KEYS)}")
    if view.kind == "pair":
        saved = store.add_pair_label(
            PairLabelRecord(
                run_id=view.run_id,
                other_run_id=view.other_run_id or "",
                task_id=task_id,
                label=PAIR_LABELS[key],
                note=note,
                reviewer=reviewer,
            )
        )
        words = saved.label if saved.label in ("tie", "skip") else f"{saved.label} better"
        return f"{words} on {task_id} by {saved.reviewer} at {saved.at}"
    if key == "tie":
        raise ValueError("tie applies to a pair of answers; label a single answer pass, fail or skip")
    review = store.add_review(
        ReviewRecord(run_id=view.run_id, task_id=task_id, verdict=ReviewVerdict(key), note=note, reviewer=reviewer)
    )
    return f"{review.verdict} on {task_id} by {review.reviewer} at {review.at}"


def _verdict(judgement: JudgementRecord | None) -> str:
    if judgement is None:
        return "not judged"
    return f"failed ({judgement.error_class})" if judgement.failed else f"{judgement.verdict} → {judgement.preferred}"


def _rationale(judgement: JudgementRecord | None) -> str:
    if judgement is None:
        return "not judged"
    if judgement.failed:  # the error first; an unparseable reply's text after it
        return f"✗ {judgement.error}" + (f"\n{judgement.rationale}" if judgement.rationale else "")
    return judgement.rationale


def _text(answer: StoredAnswer | None) -> str:
    if answer is None:
        return "(no attempt)"
    return answer.text if answer.text is not None else f"(no answer: {answer.detail})"


def _label_meta(label: PairLabelRecord | None) -> tuple[str, str, str]:
    return (label.reviewer, label.at, label.note) if label else ("", "", "")


def _expected_texts(run: RunRecord) -> dict[str, str]:
    # The expected outcome is shown beside a graded answer; a moved golden set only loses that.
    try:
        goldset = load_run_set(run, None)
    except JudgingRefused:
        return {}
    return {task.id: expected_text(task) for task in goldset.tasks}

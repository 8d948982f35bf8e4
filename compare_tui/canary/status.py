"""A canary's status as one document: what `canary status` prints (text and JSON), the exit code
a rollout controller reads, and what the TUI's Live switches screen lays out. Computed here
once; every surface renders it."""

from __future__ import annotations

from typing import Any

from compare_tui.canary.control import check_routes
from compare_tui.canary.policy import Assessment, Move, assess
from compare_tui.canary.routes import RoutesError
from compare_tui.judge.calibration.figures import NOT_ENOUGH
from compare_tui.judge.calibration.load import load_calibration, workload_judges
from compare_tui.judge.grade.scale import load_scale_rubric
from compare_tui.judge.run.family import same_family_caveat
from compare_tui.report.decision import Verdict
from compare_tui.store import CanaryRecord, Store
from compare_tui.vocabulary import CanaryJudgeRubric, CanaryState

EXIT_READY = 0
EXIT_HOLD = 3
EXIT_WORSE = 4
EXIT_HAND_EDIT = 5
EXIT_STOPPED = 6


def exit_code(canary: CanaryRecord, assessment: Assessment, hand_edit: str | None) -> int:
    """0 ready or promoted, 3 hold, 4 worse, 5 a hand edit, 6 stopped (docs/canary.md)."""
    if canary.state is CanaryState.PROMOTED:
        return EXIT_READY
    if canary.state is CanaryState.ROLLED_BACK:
        return EXIT_WORSE
    if canary.state is CanaryState.STOPPED:
        return EXIT_STOPPED
    if hand_edit:
        return EXIT_HAND_EDIT
    return {Move.READY: EXIT_READY, Move.ROLL_BACK: EXIT_WORSE}.get(assessment.move, EXIT_HOLD)


def hand_edit(canary: CanaryRecord) -> str | None:
    """What differs from the routes the canary last wrote (None: nothing, or it has ended)."""
    if not canary.active:
        return None
    try:
        return check_routes(canary)
    except RoutesError as exc:
        return str(exc)


def status_document(store: Store, canary: CanaryRecord) -> dict[str, Any]:
    """Step, weight, verdict, move and its reason, the evidence, any hand edit, the last change
    and the exit code, as JSON-ready values."""
    assessment = assess(canary, store.canary_pairs(canary.id))
    edit = hand_edit(canary)
    changes = [c for c in store.canary_changes(canary.workload_id) if c.canary_id == canary.id]
    last = changes[0] if changes else None
    return {
        "canary_id": canary.id,
        "workload_id": canary.workload_id,
        "alias": canary.alias,
        "baseline": canary.baseline,
        "candidate": canary.candidate,
        "state": canary.state.value,
        "steps": list(canary.steps),
        "step": canary.step,
        "weight": canary.weight,
        "verdict": assessment.look.verdict.value,
        "move": assessment.move.value,
        "reason": assessment.reason,
        "evidence": assessment.evidence(),
        "judge": canary.judge,
        "judge_notes": judge_notes(store, canary, assessment),
        "hand_edit": edit,
        "last_change": None if last is None else last.model_dump(mode="json"),
        "exit_code": exit_code(canary, assessment, edit),
    }


def judge_notes(store: Store, canary: CanaryRecord, assessment: Assessment) -> list[str]:
    """What to know about the judged evidence: with no judge, how many requests lacked a check
    and how to add one; with one, its calibration against people's labels on the workload (a
    sentence from `judge.calibration`, or that there is none): the pair verdicts stay raw."""
    no_check = int(assessment.graders.get("no_check", 0))
    if not canary.judge:
        if not no_check:
            return []
        return [
            f"{no_check} request{'' if no_check == 1 else 's'} matched no task of the golden set and "
            f"{'was' if no_check == 1 else 'were'} not graded: give the canary a judge "
            f"(`compare-tui canary watch {canary.workload_id} --judge MODEL`, a catalogue model) to grade such "
            "requests pairwise, both orders asked"
        ]
    notes = [
        caveat
        for contestant, role in ((canary.baseline, "baseline"), (canary.candidate, "candidate"))
        if (caveat := same_family_caveat([canary.judge], contestant, [contestant], role))
    ]
    digests = [digest for judge, digest in workload_judges(store, canary.workload_id) if judge == canary.judge]
    if not digests:
        notes.append(
            f"judge {canary.judge} has no calibration against your labels on {canary.workload_id} "
            "(`compare-tui label`): its verdicts here are raw, not verified"
        )
        return notes
    # A similarity judge's own rubric, where people's labels calibrated it; else the judge's latest.
    own = load_scale_rubric("similarity", structured=canary.judge_structured).digest
    digest = own if canary.judge_rubric is CanaryJudgeRubric.SIMILARITY and own in digests else digests[0]
    calibration = load_calibration(store, canary.judge, digest, canary.workload_id).calibration
    enough = "" if calibration.enough else f"; {NOT_ENOUGH.split(':')[0]}"
    notes.append(
        f"judge {canary.judge}'s calibration on {canary.workload_id} (its single-answer grades against your "
        f"labels): {calibration.sentence()}{enough}; the canary's judged evidence is raw, not corrected by it"
    )
    return notes


def where_words(document: dict[str, Any]) -> str:
    """Where the canary stands, in words: shadow, its step and weight, or where it ended."""
    if document["state"] not in (CanaryState.SHADOW.value, CanaryState.STEPPING.value):
        return f"{document['candidate']} at {document['weight']:g}% since it ended"
    if document["step"] < 0:
        return f"{document['candidate']} gets mirrored copies"
    return (
        f"step {document['step'] + 1} of {len(document['steps'])}, {document['candidate']} at {document['weight']:g}%"
    )


def verdict_words(verdict: str) -> str:
    """A verdict as the canary's lines say it: an inconclusive one is "not yet"."""
    return "not yet" if verdict == Verdict.INCONCLUSIVE else verdict

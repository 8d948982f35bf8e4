"""`compare-tui report COMPARISON_OR_RUN|latest`: the report, on the terminal or as a file,
with an optional CI gate."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from compare_tui.commands.common import CommandError, add_store_option, margin_points, open_store, say

if TYPE_CHECKING:
    from collections.abc import Sequence

    from compare_tui.assembly import AssembledReport
    from compare_tui.judge import GradeReport
    from compare_tui.report.gate import GateResult

FORMATS = ("text", "json", "md", "junit")
EPILOG = """\
examples:
  compare-tui report latest
  compare-tui report 3f9a --format md --out report.md
  # CI: may we switch? Exit 3 unless a candidate is no worse than the baseline by the paired test
  compare-tui report latest --baseline gemma3-270m --require-verdict no-worse --format junit --out results.xml
  compare-tui report latest --fail-under 80% --require-confidence medium --fail-on-disagreement
  compare-tui report latest --steps-by-grade gemma3-270m:similarity --pass-at 4

exit codes:
  0  the report was produced, and every gate given was met
  2  bad input: no such comparison or run (or an ambiguous prefix), a bad option value,
     a store or output file that cannot be used
  3  a gate failed (--require-verdict, --fail-under, --require-confidence, --require-winner);
     the reasons are printed on stderr, and the report is still printed or written

--require-verdict better|no-worse is the gate that acts on the paired test: against the
baseline, a candidate's (or --candidate's) verdict must be at least that. --fail-under checks
the best pass rate in the report (the recommended model's, or the only model's): 0.8, 80 and
80% all mean 80 %. --require-confidence and --require-winner follow the report's own rating by
its fixed rule, not a test: when one is met while the paired test disagrees (the lead within
noise, or a decision that goes with another model) it warns on stderr and in the JSON (`gate`)
and JUnit (`gate` suite) output, and with --fail-on-disagreement it fails instead.

--baseline MODEL judges every other model against MODEL (the comparison's own baseline, else
the workload's promoted one, is used when it is not given). Verdict, with the paired 95 %
interval (L, U) of candidate − baseline in points (at 1 − 0.05/K with K candidates,
Bonferroni) and margin M (--margin, else the manifest's [decision] margin_pp, else 5; the
margin recorded when the comparison ran is the one fixed before the data, and another is
labelled as chosen after it): better when L > 0; no worse when L > −M; worse when U < 0;
inconclusive otherwise.

--steps-by-grade JUDGE[:RUBRIC] (whole-run replay, opt-in): a step that waits for a person
(a recorded final text scored `human`) is kept when JUDGE's stored grade of the answer
(`compare-tui grade RUN --judge JUDGE --rubric similarity`) is at least --pass-at, else lost.
A person's review always wins; the report names the judge and counts those steps in a caveat.
"""


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "report",
        help="show or export the report of a comparison or run",
        description="The report of a comparison (or a single run): recommendation and confidence, "
        "pass rates, latency, tokens, cost, GPU memory, paired statistics and caveats.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_store_option(parser)
    parser.add_argument(
        "ref", metavar="COMPARISON_OR_RUN", help="a comparison id, a run id (a unique prefix is enough), or `latest`"
    )
    parser.add_argument("--format", choices=FORMATS, default="text", help="output format (default: text)")
    parser.add_argument("--out", metavar="FILE", help="write the report to FILE instead of the terminal")
    parser.add_argument(
        "--require-verdict",
        choices=("better", "no-worse"),
        help="gate by the paired test: exit 3 unless a candidate (or --candidate) is at least this against the baseline",
    )
    parser.add_argument("--candidate", metavar="MODEL", help="the candidate --require-verdict checks")
    parser.add_argument(
        "--fail-under",
        metavar="PASS_RATE",
        help="gate: exit 3 when the best pass rate is under PASS_RATE (0-1 or a percentage)",
    )
    parser.add_argument(
        "--baseline", metavar="MODEL", help="judge the other models against MODEL (re-frames any stored comparison)"
    )
    parser.add_argument(
        "--margin",
        metavar="POINTS",
        type=margin_points,
        help=(
            "the verdict's non-inferiority margin in points (default: the manifest's, else the one "
            "recorded when the comparison ran, else 5); another than the recorded one is labelled "
            "as chosen after the data"
        ),
    )
    parser.add_argument(
        "--require-confidence",
        choices=("medium", "high"),
        help="gate by the seed's rule, not a test (prefer --require-verdict): exit 3 when the rule's "
        "confidence is lower than this; warns when the paired test finds the lead within noise",
    )
    parser.add_argument(
        "--require-winner",
        metavar="MODEL",
        help="gate by the seed's rule, not a test (prefer --require-verdict): exit 3 unless the rule "
        "recommends MODEL; warns when the paired test or the decision disagrees",
    )
    parser.add_argument(
        "--fail-on-disagreement",
        action="store_true",
        help="with --require-confidence or --require-winner: exit 3, instead of warning, when the "
        "paired test disagrees with the rule's rating or winner",
    )
    parser.add_argument(
        "--steps-by-grade",
        metavar="JUDGE[:RUBRIC]",
        help="whole-run replay: decide steps waiting for a person by JUDGE's stored grades "
        "(`compare-tui grade`; RUBRIC default similarity); a person's review wins",
    )
    parser.add_argument(
        "--pass-at",
        metavar="N",
        type=_pass_at,
        default=None,
        help="with --steps-by-grade: a grade from N up keeps the step (default 4)",
    )
    parser.set_defaults(handler=_report)


def _pass_at(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expects a grade from 1 to 5 (got {text!r})") from None
    if not 1 <= value <= 5:
        raise argparse.ArgumentTypeError(f"expects a grade from 1 to 5 (got {text!r})")
    return value


def _report(args: argparse.Namespace) -> int:
    from compare_tui.assembly import ReportChoices, assemble_report
    from compare_tui.judge.grade.steps import StepGradingError
    from compare_tui.judge.prompt.rubric import RubricError
    from compare_tui.report import ReportNotFoundError, check_gate, parse_pass_rate
    from compare_tui.report.model import BaselineError
    from compare_tui.store import StoreError

    try:
        threshold = parse_pass_rate(args.fail_under) if args.fail_under is not None else None
    except ValueError as exc:
        raise CommandError(str(exc)) from None
    if args.pass_at is not None and args.steps_by_grade is None:
        raise CommandError(
            "--pass-at sets the grade that keeps a step decided by --steps-by-grade: "
            "give --steps-by-grade JUDGE[:RUBRIC] too"
        )
    if args.candidate is not None and args.require_verdict is None:
        raise CommandError("--candidate names the model --require-verdict checks: give --require-verdict too")
    if args.fail_on_disagreement and args.require_confidence is None and args.require_winner is None:
        raise CommandError(
            "--fail-on-disagreement applies to --require-confidence and --require-winner: give one of them too"
        )
    choices = ReportChoices(args.baseline, args.margin, args.steps_by_grade, args.pass_at)
    with open_store(args.store) as store:
        try:
            # JUnit carries neither grades nor insights.
            view = assemble_report(
                store, args.ref, choices, grades=args.format != "junit", insights=args.format != "junit"
            )
        except (ReportNotFoundError, StoreError, StepGradingError, RubricError, BaselineError) as exc:
            raise CommandError(str(exc)) from None
    gate = check_gate(
        view.report,
        fail_under=threshold,
        require_confidence=args.require_confidence,
        require_winner=args.require_winner,
        require_verdict=args.require_verdict,
        candidate=args.candidate,
        strict=args.fail_on_disagreement,
    )
    _emit(view, args.format, args.out, gate if gate.checks else None)
    for warning in gate.warnings:
        say(f"compare-tui: gate warning: {warning}", file=sys.stderr)
    if gate.checks:
        for line in _judged_rates(view.grades):
            say(f"compare-tui: gate note: {line}", file=sys.stderr)
    for reason in gate.reasons:
        say(f"compare-tui: gate failed: {reason}", file=sys.stderr)
    return gate.exit_code


def _judged_rates(grades: Sequence[GradeReport]) -> list[str]:
    """Each judge's pass rates raw and corrected beside a gate's result (the gate checks the
    scorers' figures; a judge's are shown so a CI log never carries a raw judge rate alone)."""
    from compare_tui.judge.calibration.render import rate_sentence

    lines = []
    for g in grades:
        if g.calibration is None:
            continue
        rates = "; ".join(rate_sentence(r.run.model_name, g.calibration.rate(r.run.id)) for r in g.runs)
        lines.append(f"judge {g.judge} (not gated): {g.calibration.calibration.sentence()}; {rates}")
    return lines


def _emit(view: AssembledReport, fmt: str, out: str | None, gate: GateResult | None) -> None:
    """The report in `fmt`, then (text, Markdown) or within it (JSON, `grades`) the stored
    grades' figures, rendered from the same `GradeReport`s; JSON and JUnit carry the `gate`
    when one was checked (its warnings and failures); text and Markdown end with `insights`,
    JSON carries them as `insights` (as a published bundle's report.json)."""
    from compare_tui.judge.grade.render import render_grade_md, render_grade_summary

    report, grades, insights = view.report, view.grades, view.insights

    if fmt == "text":
        from rich.console import Console

        from compare_tui.report.render_text import render_text

        tail = "".join("\n" + render_grade_summary(g) for g in grades)
        if insights is not None:
            from compare_tui.insights import render_text as render_insights_text

            tail += "\n" + render_insights_text(insights)
        if out is None:
            Console().print(render_text(report))
            sys.stdout.write(tail)
            return
        try:
            with open(out, "w", encoding="utf-8") as handle:
                # A file gets plain text (no colour codes); the marks still carry every status.
                Console(file=handle, width=120, no_color=True, force_terminal=False).print(render_text(report))
                handle.write(tail)
        except OSError as exc:
            raise CommandError(f"cannot write the report to {out}: {exc.strerror or exc}") from None
        return
    from compare_tui.report import render_junit, render_md

    if fmt == "json":
        # Without a gate, byte for byte the document a published bundle carries as report.json.
        text = json.dumps(view.document(gate), indent=2, ensure_ascii=False) + "\n"
    elif fmt == "md":
        text = render_md(report) + "".join("\n" + render_grade_md(g) for g in grades)
        if insights is not None:
            from compare_tui.insights import render_md as render_insights_md

            text += "\n" + render_insights_md(insights)
    else:
        text = render_junit(report, gate)
    if out is None:
        sys.stdout.write(text)
        return
    try:
        Path(out).write_text(text, encoding="utf-8")
    except OSError as exc:
        raise CommandError(f"cannot write the report to {out}: {exc.strerror or exc}") from None

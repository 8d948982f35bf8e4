"""`Store`: the run store, one SQLite file holding runs, attempts, the audit ledger, reviews, comparisons,
experiments, judge verdicts, baseline decisions, published bundles, run leases and the buyer's choices (models skipped, selections saved)."""

from __future__ import annotations

from compare_tui.store.attempts import AttemptAccessors
from compare_tui.store.audit_ledger import AuditLedgerAccessors
from compare_tui.store.bundles import BundleAccessors
from compare_tui.store.canaries import CanaryAccessors
from compare_tui.store.choices import ChoiceAccessors
from compare_tui.store.comparisons import ComparisonAccessors
from compare_tui.store.decisions import DecisionAccessors
from compare_tui.store.experiments import ExperimentAccessors
from compare_tui.store.judgements import JudgementAccessors
from compare_tui.store.leases import LeaseAccessors
from compare_tui.store.reviews import ReviewAccessors
from compare_tui.store.runs import RunAccessors
from compare_tui.store.summary import RunSummary, summarise


class Store(
    RunAccessors,
    AttemptAccessors,
    AuditLedgerAccessors,
    ReviewAccessors,
    ComparisonAccessors,
    ExperimentAccessors,
    JudgementAccessors,
    DecisionAccessors,
    BundleAccessors,
    LeaseAccessors,
    ChoiceAccessors,
    CanaryAccessors,
):
    """The run store. Open with `Store.open(path)`; use as a context manager or `close()` it.

    Every accessor takes and returns domain records (`compare_tui.store.records`). Every
    failure is a `StoreError` whose message says what to do. Writes are short transactions
    that wait out another process's writes instead of failing with "database is locked".
    """

    def pass_rate_summary(self, run_id: str) -> RunSummary:
        """Per-task tallies of a run (pass / fail / review / error / not done), human verdicts applied."""
        run = self.get_run_exact(run_id)
        attempts = [
            (row["task_id"], row["outcome"], row["error_class"])
            for row in self._read("SELECT task_id, outcome, error_class FROM attempts WHERE run_id = ?", [run_id])
        ]
        verdicts = {task: review.verdict for task, review in self.reviews_for_run(run_id).items()}
        return summarise(attempts, verdicts, run.task_count)

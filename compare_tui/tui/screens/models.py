"""Models: the catalogue, whether a run of each entry would be refused and why, and `v` to
re-hash a model's weights against its pins with progress.

The rows are `catalogue.readiness.catalogue_rows` and a verification is
`catalogue.readiness.verify_entry`, the same facts `models list` and `models verify` print.
Reading and hashing run in thread workers; the hashing threads only record bytes done in a
`HashProgress`, which the screen reads on a timer (a 100 GB model is not a message per chunk).
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widgets import DataTable, Footer, Header, ProgressBar, Static

from compare_tui.tui import messages
from compare_tui.tui.plain_text import plain, plain_row
from compare_tui.tui.screen_base import CompareScreen

if TYPE_CHECKING:
    from textual.worker import Worker

    from compare_tui.catalogue import ModelEntry
    from compare_tui.catalogue.readiness import CatalogueRow, VerifyOutcome

REPAINT_S = 0.25
"""How often the progress of a verification is repainted."""


class VerifyCancelled(Exception):
    """The screen closed while a verification was hashing; the rest is not read."""


class HashProgress:
    """Bytes hashed so far per file of the model being verified. Written by the hashing threads
    (`__call__` is a `catalogue.verify.Progress`), read by the UI's timer; raises
    `VerifyCancelled` into the hashing once `cancel` is set."""

    def __init__(self, cancel: threading.Event) -> None:
        self._lock = threading.Lock()
        self._done: dict[str, int] = {}
        self._total: dict[str, int] = {}
        self._cancel = cancel
        self.model: str | None = None
        """The model being hashed now (None between models)."""

    def start(self, model: str | None) -> None:
        with self._lock:
            self.model = model
            self._done.clear()
            self._total.clear()

    def __call__(self, name: str, done: int, total: int) -> None:
        if self._cancel.is_set():
            raise VerifyCancelled
        with self._lock:
            self._done[name], self._total[name] = done, total

    def snapshot(self) -> tuple[str | None, int, int]:
        """(model, bytes done, bytes known so far) over its files."""
        with self._lock:
            return self.model, sum(self._done.values()), sum(self._total.values())


def shown_path(path: Path) -> str:
    """`path` relative to the current folder when it is inside it (as the user would type it),
    else with the home folder as `~`, else whole."""
    here = Path.cwd()
    if path == here or here in path.parents:
        return path.relative_to(here).as_posix() or "."
    home = Path.home()
    if home != Path("/") and home in path.parents:
        return "~/" + path.relative_to(home).as_posix()
    return str(path)


class ModelsScreen(CompareScreen):
    CSS_PATH = "models.tcss"
    BINDINGS: ClassVar[list[Binding | tuple[str, str] | tuple[str, str, str]]] = [
        Binding("v", "verify", "Verify", tooltip="Verify the highlighted model's weights"),
        Binding("V", "verify_all", "Verify all", tooltip="Verify every model, one after another"),
        Binding("g", "refresh", "Refresh", tooltip="Read the catalogue again"),
        Binding("escape", "back", "Back"),
    ]

    def __init__(self, highlight: str | None = None) -> None:
        super().__init__()
        self.highlight = highlight
        """The model to put the cursor on once the catalogue is read."""
        self.rows: list[CatalogueRow] = []
        """`CatalogueRow`s as last read, in the table's order."""
        self.problem: str | None = None
        self.outcomes: dict[str, VerifyOutcome] = {}
        """Model name → its `VerifyOutcome` from this screen's verifications."""
        self.queued: list[str] = []
        """Models waiting to be verified (the one being hashed first)."""
        self._cancel = threading.Event()
        self.progress = HashProgress(self._cancel)

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("", id="models-problem", markup=False)
        yield DataTable(id="catalogue-table", cursor_type="row", zebra_stripes=True)
        yield ProgressBar(id="verify-progress", show_eta=False)
        with VerticalScroll(id="model-facts"):
            yield Static("", id="model-facts-text", markup=False)
        yield Footer()

    def on_mount(self) -> None:
        self.sub_title = f"Models · {shown_path(self.workspace.catalogue_path)}"
        table = self.query_one("#catalogue-table", DataTable)
        # What decides a run first; the cost basis (long) last, and whole in the facts below.
        table.add_columns("model", "kind", "run")
        table.add_column("weights", key="weights")
        table.add_columns("files", "cost basis")
        self.query_one("#verify-progress").display = False
        self.query_one("#models-problem").display = False
        self.set_interval(REPAINT_S, self._repaint_progress)
        self.action_refresh()

    def on_unmount(self) -> None:
        self._cancel.set()  # a hashing thread stops at its next chunk

    # ------------------------------------------------------------------ reading

    def action_refresh(self) -> None:
        if self.queued:
            self.notify("Wait for the verification to finish, then press g.", severity="warning")
            return
        self.query_one("#catalogue-table").loading = True
        self.read()

    @work(thread=True, exit_on_error=False, group="models-read", exclusive=True, description="reading the catalogue")
    def read(self) -> None:
        from compare_tui.catalogue.readiness import catalogue_rows

        read = self.workspace.read_catalogue()
        rows = catalogue_rows(read.catalogue, os.environ) if read.catalogue is not None else []
        self.post_message(messages.ModelsRead(rows, read.problem))

    def on_models_read(self, message: messages.ModelsRead) -> None:
        self.rows, self.problem = list(message.rows), message.problem
        self.outcomes = {name: o for name, o in self.outcomes.items() if any(r.entry.name == name for r in self.rows)}
        table = self.query_one("#catalogue-table", DataTable)
        table.loading = False
        table.clear()
        for row in self.rows:
            entry = row.entry
            kind = entry.kind + (" (gateway)" if entry.gateway else "")
            files = str(len(entry.files)) if entry.files else "—"
            table.add_row(
                *plain_row(entry.name, kind, self._run_cell(row), self._weights_cell(entry.name), files, row.cost),
                key=entry.name,
            )
        problem = self.query_one("#models-problem", Static)
        problem.update(f"✗ {self.problem}" if self.problem else "")
        problem.display = bool(self.problem)
        names = [r.entry.name for r in self.rows]
        if self.highlight in names:
            table.move_cursor(row=names.index(self.highlight))
            self.highlight = None
        table.focus()
        self._show_facts()

    def worker_failed(self, worker: Worker[None]) -> None:
        self.query_one("#catalogue-table").loading = False
        if worker.group == "models-verify":
            self.queued.clear()
            self.progress.start(None)
            self.query_one("#verify-progress").display = False

    # ------------------------------------------------------------------ cells and facts

    @staticmethod
    def _run_cell(row: CatalogueRow) -> str:
        if row.readiness.ready:
            return "✓ ready"
        return f"✗ refused ({len(row.readiness.reasons)})"

    def _weights_cell(self, name: str) -> str:
        if name in self.queued:
            if name != self.queued[0]:
                return "queued"
            model, done, total = self.progress.snapshot()
            return f"hashing {100 * done // total}%" if model == name and total else "hashing…"
        outcome = self.outcomes.get(name)
        if outcome is None:
            return "not checked"
        if not outcome.matched:
            return f"✗ refused ({len(outcome.problems)})"
        return "✓ verified" if outcome.files else "host attested"

    def _selected(self) -> CatalogueRow | None:
        table = self.query_one("#catalogue-table", DataTable)
        if not self.rows or not 0 <= table.cursor_row < len(self.rows):
            return None
        return self.rows[table.cursor_row]

    @on(DataTable.RowHighlighted, "#catalogue-table")
    def _highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._show_facts()

    def _show_facts(self) -> None:
        text = self.query_one("#model-facts-text", Static)
        row = self._selected()
        if row is None:
            text.update("" if self.problem else "The catalogue has no models: add one with `compare-tui models add`.")
            return
        entry = row.entry
        lines = [
            (
                f"{entry.name} · {entry.kind} · {entry.endpoint} · model {entry.model!r} · "
                f"revision {entry.revision or '—'}"
            )
        ]
        if entry.weights_dir is not None:
            lines.append(
                f"weights: {len(entry.files)} file(s) in {shown_path(entry.weights_dir)} · "
                f"{(entry.weights_digest or '—')[:19]}…"
            )
        elif entry.weights_digest:
            lines.append(f"weights digest {entry.weights_digest[:19]}… (stated, not hashed here)")
        lines.append(f"cost basis: {row.cost}")
        if row.readiness.ready:
            lines.append("run: ✓ ready (nothing refuses it without hashing)")
        else:
            lines.append("run: ✗ refused")
            lines += [f"  - {reason}" for reason in row.readiness.reasons]
        lines += self._verify_lines(entry.name)
        shown = "\n".join(lines)
        if entry.weights_dir is not None:  # in reasons and fixes too, the folder as the user types it
            shown = shown.replace(str(entry.weights_dir), shown_path(entry.weights_dir))
        text.update(shown)

    def _verify_lines(self, name: str) -> list[str]:
        if name in self.queued:
            if name != self.queued[0]:
                return ["weights: queued for verification"]
            model, done, total = self.progress.snapshot()
            if model != name or not total:
                return ["weights: hashing…"]
            return [f"weights: hashing, {done / 2**20:.1f} of {total / 2**20:.1f} MiB"]
        outcome = self.outcomes.get(name)
        if outcome is None:
            return ["weights: not verified here yet (v re-hashes them against the pins)"]
        if outcome.matched:
            return [f"weights: ✓ {outcome.summary()}"]
        lines = ["weights: ✗ refused by verification"] + [f"  - {p}" for p in outcome.problems]
        if outcome.fix:
            lines.append(f"  fix: {outcome.fix}")
        return lines

    # ------------------------------------------------------------------ verifying

    def action_verify(self) -> None:
        row = self._selected()
        if row is None:
            self.notify("No model to verify.", severity="warning")
            return
        self._verify_models([row.entry.name])

    def action_verify_all(self) -> None:
        self._verify_models([r.entry.name for r in self.rows])

    def _verify_models(self, names: list[str]) -> None:
        if self.queued:
            self.notify(f"Already verifying {self.queued[0]}; wait for it to finish.", severity="warning")
            return
        entries = [r.entry for r in self.rows if r.entry.name in names]
        if not entries:
            return
        self.queued = [e.name for e in entries]
        for entry in entries:
            self.outcomes.pop(entry.name, None)
            self._update_weights_cell(entry.name)
        bar = self.query_one("#verify-progress", ProgressBar)
        bar.update(total=None, progress=0)
        bar.display = True
        self._show_facts()
        self.verify(entries)

    @work(thread=True, exit_on_error=False, group="models-verify", description="verifying weights")
    def verify(self, entries: list[ModelEntry]) -> None:
        from compare_tui.catalogue.readiness import verify_entry

        for entry in entries:
            self.progress.start(entry.name)
            try:
                outcome = verify_entry(entry, progress=self.progress)
            except VerifyCancelled:
                return
            self.post_message(messages.ModelVerified(outcome))

    def on_model_verified(self, message: messages.ModelVerified) -> None:
        outcome = message.outcome
        if outcome.name in self.queued:
            self.queued.remove(outcome.name)
        self.outcomes[outcome.name] = outcome
        self._update_weights_cell(outcome.name)
        if not self.queued:
            self.progress.start(None)
            self.query_one("#verify-progress").display = False
            refused = [name for name, o in self.outcomes.items() if not o.matched]
            if refused:
                self.notify(f"Verification refused {', '.join(refused)}: see each model's reasons.", severity="error")
        self._show_facts()

    def _update_weights_cell(self, name: str) -> None:
        table = self.query_one("#catalogue-table", DataTable)
        if name in table.rows:
            table.update_cell(name, "weights", plain(self._weights_cell(name)), update_width=True)

    def _repaint_progress(self) -> None:
        model, done, total = self.progress.snapshot()
        if not self.queued or model is None:
            return
        bar = self.query_one("#verify-progress", ProgressBar)
        bar.update(total=total or None, progress=done)
        self._update_weights_cell(model)
        row = self._selected()
        if row is not None and row.entry.name == model:
            self._show_facts()

    def action_back(self) -> None:
        self.app.pop_screen()

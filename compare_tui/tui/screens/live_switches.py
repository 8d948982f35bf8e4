"""Live switches: every workload's latest canary (`compare-tui canary`), its step and weight, the
anytime-valid verdict on B − A with its bounds and pairs, what the evidence allows next, and
any hand edit of the gateway's routes.

It lays out `canary.status.status_document` (the document `canary status --json` prints), read
in a worker: the screen computes no figure of its own. `a` takes the highlighted canary's next
step after a confirmation, by running `compare-tui canary advance WORKLOAD` in a child process
(the proxy restarts: seconds), then reads again; the evidence must allow it, as on the CLI.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.message import Message
from textual.widgets import DataTable, Footer, Header, Static

from compare_tui.store import Store
from compare_tui.tui.screens.confirm import ConfirmScreen
from compare_tui.tui.screens.experiments import Launcher, run_command
from compare_tui.tui.screens.store_reader import StoreReaderScreen
from compare_tui.vocabulary import LIVE_CANARY_STATES

EMPTY = "No canary yet: start one with `compare-tui canary start WORKLOAD --set DIR --model B` (docs: canary)."


def read_switches(store: Store) -> list[dict[str, Any]]:
    """The status document of each workload's latest canary, active ones first (worker thread)."""
    from compare_tui.canary.status import status_document

    documents = [status_document(store, canary) for canary in store.latest_canaries()]
    return sorted(documents, key=lambda d: (d["state"] not in LIVE_CANARY_STATES, d["workload_id"]))


@dataclass
class AdvanceEnded(Message):
    """`compare-tui canary advance WORKLOAD` ended."""

    workload: str
    code: int
    last_line: str


class LiveSwitchesScreen(StoreReaderScreen[list[dict[str, Any]]]):
    """The canaries, one row each; the highlighted one's reason, hand edit and last change below."""

    CSS_PATH = "live_switches.tcss"
    LOADING_ID = "switches-table"
    WHAT = "the canaries"
    BINDINGS = [Binding("a", "advance", "Advance", tooltip="Take the next step (the evidence must allow it)")]

    def __init__(self, launcher: Launcher = run_command) -> None:
        super().__init__()
        self.launcher = launcher
        self.documents: list[dict[str, Any]] = []
        self.current: dict[str, Any] | None = None

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("", id="switches-empty", markup=False)
        yield DataTable(id="switches-table", cursor_type="row", zebra_stripes=True)
        yield Static("", id="switch-edit", markup=False)
        yield Static("", id="switch-detail", markup=False)
        yield Footer()

    def on_mount(self) -> None:
        self.sub_title = "Live switches"
        self.query_one("#switches-table", DataTable).add_columns(
            "workload", "B", "share", "verdict", "B − A pts", "pairs", "next"
        )
        self.query_one("#switch-edit", Static).display = False
        self.action_refresh()

    def read_store(self) -> list[dict[str, Any]]:
        return read_switches(self.store)

    def show_read(self, data: list[dict[str, Any]]) -> None:
        from compare_tui.canary.policy import bounds_words, verdict_words

        self.documents = data
        table = self.query_one("#switches-table", DataTable)
        table.clear()
        for d in data:
            e = d["evidence"]
            share = "shadow" if d["step"] < 0 else f"{d['weight']:g}%"
            table.add_row(
                Text(d["workload_id"]),
                Text(d["candidate"]),
                Text(share if d["state"] in LIVE_CANARY_STATES else d["state"], justify="right"),
                Text(verdict_words(d["verdict"])),
                Text(bounds_words(e["low_pp"], e["high_pp"], 0), justify="right"),
                Text(str(e["pairs"]), justify="right"),
                Text("refused" if d["hand_edit"] else d["move"]),
            )
        empty = self.query_one("#switches-empty", Static)
        empty.update(EMPTY)
        empty.display = not data
        self._show(data[0] if data else None)

    @on(DataTable.RowHighlighted, "#switches-table")
    def _highlighted(self, event: DataTable.RowHighlighted) -> None:
        if 0 <= event.cursor_row < len(self.documents):
            self._show(self.documents[event.cursor_row])

    def _show(self, d: dict[str, Any] | None) -> None:
        from compare_tui.canary.policy import graders_words
        from compare_tui.canary.status import where_words

        self.current = d
        edit = self.query_one("#switch-edit", Static)
        edit.display = bool(d and d["hand_edit"])
        edit.update(f"Refusing any change: {d['hand_edit']}" if d and d["hand_edit"] else "")
        if d is None:
            self.query_one("#switch-detail", Static).update("")
            return
        lines = [
            f"{d['workload_id']}: {d['state']}, {where_words(d)} vs {d['baseline']}; alias {d['alias']!r}; "
            f"{d['evidence']['new_pairs_at_step']} new pairs at this step",
            f"{d['move']}: {d['reason']}",
        ]
        graders = d["evidence"].get("graders") or {}
        if graders.get("judges"):
            lines.append(f"evidence: {graders_words(graders)}")
        skipped = d["evidence"]["skipped"]
        if skipped:
            lines.append("not paired: " + ", ".join(f"{k} {v}" for k, v in skipped.items()))
        if d["last_change"]:
            c = d["last_change"]
            lines.append(f"last change {c['at'][:19]}: {c['change']} {c['from_weight']:g}% → {c['to_weight']:g}%")
        self.query_one("#switch-detail", Static).update("\n".join(lines))

    def action_advance(self) -> None:
        d = self.current
        if d is None or d["state"] not in LIVE_CANARY_STATES:
            self.notify("No active canary is highlighted.", severity="warning")
            return
        if d["move"] != "ready" or d["hand_edit"]:
            self.notify(f"Not advancing: {d['hand_edit'] or d['reason']}", severity="warning", timeout=8)
            return
        workload = d["workload_id"]

        def confirmed(yes: bool | None) -> None:
            if yes:
                self._advance(workload)

        body = f"{d['reason']}\nThe gateway restarts to apply it: requests in flight then are dropped."
        self.app.push_screen(ConfirmScreen(f"Take the next step of {workload}'s canary?", body, "Advance"), confirmed)

    @work(thread=True, exit_on_error=False, group="canary-advance", description="canary advance")
    def _advance(self, workload: str) -> None:
        import sys

        argv = [sys.executable, "-m", "compare_tui", "canary", "advance", workload, "--store", str(self.store.path)]
        argv += ["--models", str(self.workspace.catalogue_path)]
        code, last = self.launcher(argv)
        self.post_message(AdvanceEnded(workload, code, last))

    def on_advance_ended(self, message: AdvanceEnded) -> None:
        if message.code == 0:
            self.notify(f"{message.workload}: advanced.")
        else:
            self.notify(
                f"{message.workload}: {message.last_line or 'canary advance failed'}", severity="error", timeout=10
            )
        self.action_refresh()

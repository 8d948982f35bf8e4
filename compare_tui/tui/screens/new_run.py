"""New run: choose a golden set and one or more models, the attempts, concurrency, max tokens and
a spend cap; the estimate and every refusal show before anything is sent."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Button, Footer, Header, Input, Label, Select, SelectionList, Static
from textual.widgets.selection_list import Selection

from compare_tui.catalogue import Catalogue, check_entry
from compare_tui.engine import RunOverrides
from compare_tui.engine.settings import DEFAULT_CONCURRENCY
from compare_tui.goldset import GoldenSet, GoldenSetError, discover_golden_sets
from compare_tui.tui.engine_bridge import NewRunPlan
from compare_tui.tui.screen_base import CompareScreen
from compare_tui.tui.screens.refusal import RefusalScreen
from compare_tui.tui.spend_preview import SpendPreview, dollars, preview
from compare_tui.tui.widgets.model_choices import ModelChoices

if TYPE_CHECKING:
    from textual.worker import Worker

    from compare_tui.catalogue import ModelEntry


@dataclass(frozen=True, slots=True)
class _Choices:
    sets: tuple[GoldenSet, ...]
    catalogue: Catalogue | None
    problem: str | None
    promoted: dict[str, str] = field(default_factory=dict)
    """Workload id → its promoted baseline (`compare-tui promote`), for the sets listed."""


class NewRunScreen(CompareScreen):
    CSS_PATH = "new_run.tcss"
    BINDINGS = [
        Binding("ctrl+s", "start", "Start run"),
        Binding("escape", "back", "Back"),
    ]

    def __init__(self, set_path: str | None = None) -> None:
        super().__init__()
        self.set_path = set_path
        self.choices: _Choices | None = None
        self.current: SpendPreview | None = None

    def compose(self) -> ComposeResult:
        yield Header()
        with VerticalScroll(id="new-run-form"):
            yield Label("Golden set", classes="section-title")
            yield Select([], prompt="choose a golden set", id="set-select", allow_blank=True)
            yield Label("Models (space toggles)", classes="section-title")
            yield ModelChoices(id="model-list")
            yield Label("Baseline: the model you run today (optional)", classes="section-title")
            yield Select([], prompt="none: no versus-baseline verdicts", id="baseline-select", allow_blank=True)
            with Horizontal(id="settings-row"):
                fields: tuple[tuple[str, str, Literal["integer", "number"]], ...] = (
                    ("attempts", "attempts", "integer"),
                    ("concurrency", "concurrency", "integer"),
                    ("max-tokens", "max tokens", "integer"),
                    ("max-cost", "spend cap $", "number"),
                )
                for field_id, label, kind in fields:
                    with Vertical(classes="setting"):
                        yield Label(label)
                        yield Input(id=field_id, type=kind, placeholder="")
            yield Static("", id="estimate", markup=False)
            yield Button("Start run (ctrl+s)", id="start", variant="primary")
        yield Footer()

    def on_mount(self) -> None:
        self.sub_title = "new run"
        self.query_one("#concurrency", Input).value = str(DEFAULT_CONCURRENCY)
        self.query_one("#max-cost", Input).placeholder = "none"
        self.query_one("#new-run-form").loading = True
        self.load()

    @work(thread=True, exit_on_error=False, description="reading golden sets and the catalogue")
    def load(self) -> None:
        sets = []
        for path in discover_golden_sets(self.workspace.sets_dir):
            try:
                sets.append(self.workspace.golden_set(path))
            except (GoldenSetError, OSError):
                continue  # invalid sets are listed, with their problems, on Home
        if self.set_path and all(not _same(s.root, self.set_path) for s in sets):
            try:
                sets.insert(0, self.workspace.golden_set(self.set_path))
            except (GoldenSetError, OSError):
                pass
        read = self.workspace.read_catalogue()
        promoted = {}
        for workload in {s.manifest.workload_id for s in sets}:
            current = self.workspace.store.current_baseline(workload)
            if current is not None:
                promoted[workload] = current.model
        self.app.call_from_thread(self._loaded, _Choices(tuple(sets), read.catalogue, read.problem, promoted))

    def worker_failed(self, worker: Worker[Any]) -> None:
        self.query_one("#new-run-form").loading = False

    def _loaded(self, choices: _Choices) -> None:
        self.choices = choices
        self.query_one("#new-run-form").loading = False
        select = self.query_one("#set-select", Select)
        select.set_options(
            [(f"{s.manifest.name} {s.manifest.version} ({len(s.tasks)} tasks)", str(s.root)) for s in choices.sets]
        )
        wanted = next((str(s.root) for s in choices.sets if self.set_path and _same(s.root, self.set_path)), None)
        if wanted is None and choices.sets:
            wanted = str(choices.sets[0].root)
        if wanted is not None:
            select.value = wanted
        models = self.query_one("#model-list", SelectionList)
        if choices.catalogue is not None:
            for entry in choices.catalogue.models:
                models.add_option(Selection(_model_prompt(entry, False), entry.name, False))
        if models.option_count:
            models.highlighted = 0
        self._update()
        # Focus without scrolling: the form stays at its top (the set first). Scrolling the focused
        # list into view centred it whenever the estimate had already grown the form, so the
        # screen opened at one of two positions depending on timing.
        models.focus(scroll_visible=False)

    # ------------------------------------------------------------------ the preview

    @on(Select.Changed)
    @on(Input.Changed)
    def _changed(self, event: Select.Changed | Input.Changed) -> None:
        self._update()

    @on(SelectionList.SelectedChanged)
    def _models_changed(self, event: SelectionList.SelectedChanged[str]) -> None:
        # The checkbox differs only by colour; the prompt says "chosen" in words too.
        models = event.selection_list
        chosen = set(models.selected)
        if self.choices is not None and self.choices.catalogue is not None:
            for index, entry in enumerate(self.choices.catalogue.models):
                models.replace_option_prompt_at_index(index, _model_prompt(entry, entry.name in chosen))
        self._offer_baselines(list(models.selected))
        self._update()

    @on(Select.Changed, "#set-select")
    def _set_changed(self, event: Select.Changed) -> None:
        self._offer_baselines(list(self.query_one("#model-list", SelectionList).selected))

    def _promoted(self) -> str | None:
        """The chosen set's workload's promoted baseline, if it has one."""
        goldset = self._goldset()
        if goldset is None or self.choices is None:
            return None
        return self.choices.promoted.get(goldset.manifest.workload_id)

    def _offer_baselines(self, names: list[str]) -> None:
        """The baseline is one of the chosen models: keep the pick while it is still chosen; with
        none picked, the workload's promoted baseline once it is chosen (as `compare-tui run` does)."""
        select = self.query_one("#baseline-select", Select)
        promoted = self._promoted()
        kept = select.value if isinstance(select.value, str) and select.value in names else None
        if kept is None and promoted in names:
            kept = promoted
        select.set_options([(f"{name} (promoted)" if name == promoted else name, name) for name in names])
        if kept is not None:
            select.value = kept

    def _goldset(self) -> GoldenSet | None:
        value = self.query_one("#set-select", Select).value
        if self.choices is None or not isinstance(value, str):  # Select.NULL: nothing chosen
            return None
        return next((s for s in self.choices.sets if str(s.root) == value), None)

    def _overrides(self) -> tuple[RunOverrides | None, float | None, str | None]:
        values: dict[str, float | None] = {}
        for field_id in ("attempts", "concurrency", "max-tokens", "max-cost"):
            text = self.query_one(f"#{field_id}", Input).value.strip()
            if not text:
                values[field_id] = None
                continue
            try:
                values[field_id] = float(text) if field_id == "max-cost" else int(text)
            except ValueError:
                return None, None, f"{field_id.replace('-', ' ')}: {text!r} is not a number"
        for field_id in ("attempts", "concurrency", "max-tokens"):
            value = values[field_id]
            if value is not None and value < 1:
                return None, None, f"{field_id.replace('-', ' ')} must be at least 1"
        attempts = values["attempts"]
        if attempts is not None and attempts > 20:
            return None, None, "attempts must be at most 20"
        counts = {k: None if v is None else int(v) for k, v in values.items() if k != "max-cost"}  # ints as parsed
        overrides = RunOverrides(
            attempts=counts["attempts"],
            max_tokens=counts["max-tokens"],
            concurrency=counts["concurrency"] or DEFAULT_CONCURRENCY,
        )
        return overrides, values["max-cost"], None

    def _update(self) -> None:
        estimate = self.query_one("#estimate", Static)
        if self.choices is None:
            return
        goldset = self._goldset()
        if goldset is not None:
            run = goldset.manifest.run
            self.query_one("#attempts", Input).placeholder = f"set: {run.attempts}"
            self.query_one("#max-tokens", Input).placeholder = f"set: {run.max_tokens or 256}"
        lines = []
        if self.choices.problem:
            lines.append(f"✗ {self.choices.problem}")
        if not self.choices.sets:
            lines.append(f"✗ no valid golden set under {self.workspace.sets_dir} (Home lists the problems)")
        names = self.query_one("#model-list", SelectionList).selected
        overrides, cap, problem = self._overrides()
        self.current = None
        if problem:
            lines.append(f"✗ {problem}")
        elif goldset is None or not names or overrides is None or self.choices.catalogue is None:
            lines.append("Choose a golden set and at least one model to see the estimate.")
        else:
            entries = [self.choices.catalogue.get(name) for name in names]
            self.current = preview(goldset, entries, overrides, cap)
            lines += _preview_lines(self.current, cap)
        estimate.update("\n".join(lines))
        self.query_one("#start", Button).disabled = self.current is None or self.current.refused

    # ------------------------------------------------------------------ starting

    @on(Button.Pressed, "#start")
    def _start_pressed(self) -> None:
        self.action_start()

    def action_start(self) -> None:
        self._update()
        current, goldset = self.current, self._goldset()
        if current is None or goldset is None:
            self.notify("Choose a golden set and at least one model first.", severity="warning")
            return
        if current.refused:
            reasons = (
                [current.problem] if current.problem else [f"{m.name}: {r}" for m in current.models for r in m.refusals]
            )
            self.app.push_screen(
                RefusalScreen("The engine would refuse this run; nothing was sent.", "\n".join(reasons))
            )
            return
        overrides, cap, _ = self._overrides()
        if overrides is None:  # never: `_update` just made `current` from these settings
            return
        picked = self.query_one("#baseline-select", Select).value
        names = tuple(m.name for m in current.models)
        baseline = picked if isinstance(picked, str) and picked in names else None
        if baseline is not None:  # the baseline runs first, as with `compare-tui run --baseline`
            names = (baseline, *(n for n in names if n != baseline))
        plan = NewRunPlan(goldset.root, names, overrides, cap, baseline=baseline)
        self.app.pop_screen()
        self.nav.open_live(plan)

    def action_back(self) -> None:
        self.app.pop_screen()


def _model_prompt(entry: ModelEntry, chosen: bool) -> str:
    refused = ", refused: see below" if check_entry(entry) else ""
    return f"{'✓ chosen: ' if chosen else ''}{entry.name} ({entry.kind}{refused})"


def _same(a: str | Path, b: str | Path) -> bool:
    return Path(a).resolve() == Path(b).resolve()


def _preview_lines(current: SpendPreview, cap: float | None) -> list[str]:
    if current.problem:
        return [f"✗ {current.problem}"]
    lines = [current.settings]
    for model in current.models:
        lines.append(f"{model.name}: estimate {model.estimate}")
        lines += [f"  ✗ refused: {reason}" for reason in model.refusals]
    digits = current.decimals
    total = (
        "unknown (a model has no cost basis)"
        if current.total_usd is None
        else f"≤ {dollars(current.total_usd, digits)}"
    )
    lines.append(f"Total estimate {total} · spend cap {dollars(cap, digits) if cap is not None else 'none'}")
    return lines

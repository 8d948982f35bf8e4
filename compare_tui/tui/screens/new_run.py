"""New run: choose a golden set and one or more models, the attempts, concurrency, max tokens and
a spend cap; the estimate and every refusal show before anything is sent.

Chosen like a buyer (`candidates`): today's model for the set's workload with its blended price
and recent spend; the catalogue grouped cheaper / about the same / dearer with each model's
price, savings and measured pass rate; the recommended set pre-selected, or the selection saved
for the workload last time (ctrl+r returns to the recommended); the footer counts the chosen
models and spans their blended prices against today's; and the daily eval budget says what a
run would skip."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Literal

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Button, Footer, Header, Input, Label, Select, SelectionList, Static
from textual.widgets.selection_list import Selection

from compare_tui.candidates import Shortlist
from compare_tui.catalogue import ModelEntry
from compare_tui.engine import RunOverrides
from compare_tui.engine.budget import (
    BudgetPlan,
    plan_within_budget,
    reset_sentence,
)
from compare_tui.engine.estimate import SpendEstimate
from compare_tui.engine.settings import DEFAULT_CONCURRENCY
from compare_tui.goldset import GoldenSet
from compare_tui.report.formatting import plural
from compare_tui.tui.candidate_rows import ListRow, budget_lines, list_rows, selection_footer, today_panel
from compare_tui.tui.engine_bridge import NewRunPlan
from compare_tui.tui.new_run_choices import NewRunChoices, read_choices, same_path
from compare_tui.tui.screen_base import CompareScreen
from compare_tui.tui.screens.refusal import RefusalScreen
from compare_tui.tui.spend_preview import SpendPreview, dollars, preview
from compare_tui.tui.widgets.model_choices import ModelChoices

if TYPE_CHECKING:
    from textual.worker import Worker


class NewRunScreen(CompareScreen):
    CSS_PATH = "new_run.tcss"
    BINDINGS = [
        Binding("ctrl+s", "start", "Start run"),
        Binding("ctrl+r", "recommended", "Reset to recommended"),
        Binding("escape", "back", "Back"),
    ]

    def __init__(self, set_path: str | None = None) -> None:
        super().__init__()
        self.set_path = set_path
        self.choices: NewRunChoices | None = None
        self.current: SpendPreview | None = None
        self.rows: list[ListRow] = []
        """The model list's lines: group headings (no name) and models."""
        self.applied: set[str] = set()
        """The selection last put in the list or saved: a change from it is saved for the workload."""
        self.blocked: str | None = None
        """Why ctrl+s would start nothing now, in words (None: it would start the run)."""

    def compose(self) -> ComposeResult:
        yield Header()
        with VerticalScroll(id="new-run-form"):
            yield Label("Golden set", classes="section-title")
            yield Select([], prompt="choose a golden set", id="set-select", allow_blank=True)
            yield Static("", id="today", markup=False)
            yield Label("Models (space toggles; ★ recommended)", classes="section-title")
            yield ModelChoices(id="model-list")
            yield Static("", id="selection-footer", markup=False)
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
        # Always on screen above the footer: why ctrl+s would start nothing, where the estimate
        # (at the form's end) is below the fold at 80x24.
        yield Static("", id="start-status", markup=False)
        yield Footer()

    def on_mount(self) -> None:
        self.sub_title = "new run"
        self.query_one("#concurrency", Input).value = str(DEFAULT_CONCURRENCY)
        self.query_one("#max-cost", Input).placeholder = "none"
        self.query_one("#new-run-form").loading = True
        self.load()

    @work(thread=True, exit_on_error=False, description="reading golden sets and the catalogue")
    def load(self) -> None:
        choices = read_choices(self.workspace, self.set_path)
        self.app.call_from_thread(self._loaded, choices)

    def worker_failed(self, worker: Worker[Any]) -> None:
        self.query_one("#new-run-form").loading = False

    def _loaded(self, choices: NewRunChoices) -> None:
        self.choices = choices
        self.query_one("#new-run-form").loading = False
        select = self.query_one("#set-select", Select)
        select.set_options(
            [(f"{s.manifest.name} {s.manifest.version} ({len(s.tasks)} tasks)", str(s.root)) for s in choices.sets]
        )
        wanted = next((str(s.root) for s in choices.sets if self.set_path and same_path(s.root, self.set_path)), None)
        if wanted is None and choices.sets:
            wanted = str(choices.sets[0].root)
        if wanted is not None:
            select.value = wanted
        models = self.query_one("#model-list", SelectionList)
        self._fill_models()
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
        for index, row in enumerate(list_rows(self._shortlist(), self._entries(), chosen)):
            if index < len(self.rows) and row.name is not None:
                models.replace_option_prompt_at_index(index, row.prompt)
        self._offer_baselines(list(models.selected))
        self._show_selection()
        self._update()
        goldset = self._goldset()
        if goldset is not None and chosen != self.applied:
            self.applied = chosen
            self._remember(goldset.manifest.workload_id, tuple(models.selected))

    @work(thread=True, exit_on_error=False, group="save-selection", description="saving the model selection")
    def _save_selection(self, workload_id: str, models: tuple[str, ...] | None) -> None:
        """Remember the workload's selection in the store (None: forget it, so the recommended
        set applies); the screen's own copy was changed on the UI thread before."""
        if models is None:
            self.workspace.store.forget_selection(workload_id)
        else:
            self.workspace.store.save_selection(workload_id, models)

    def _remember(self, workload_id: str, models: tuple[str, ...] | None) -> None:
        if self.choices is not None:
            if models is None:
                self.choices.saved.pop(workload_id, None)
            else:
                self.choices.saved[workload_id] = models
        self._save_selection(workload_id, models)

    @on(Select.Changed, "#set-select")
    def _set_changed(self, event: Select.Changed) -> None:
        self._fill_models()
        self._offer_baselines(list(self.query_one("#model-list", SelectionList).selected))

    # ------------------------------------------------------------------ the grouped catalogue

    def _entries(self) -> tuple[ModelEntry, ...]:
        catalogue = self.choices.catalogue if self.choices else None
        return catalogue.models if catalogue is not None else ()

    def _names(self) -> list[str]:
        return [entry.name for entry in self._entries()]

    def _shortlist(self) -> Shortlist | None:
        goldset = self._goldset()
        if goldset is None or self.choices is None:
            return None
        return self.choices.shortlists.get(goldset.manifest.workload_id)

    def _starting_selection(self) -> list[str]:
        """The workload's saved selection (the models still in the catalogue), else the recommended."""
        goldset, names = self._goldset(), self._names()
        if goldset is None or self.choices is None:
            return []
        saved = self.choices.saved.get(goldset.manifest.workload_id)
        if saved is not None:
            return [name for name in saved if name in names]
        shortlist = self._shortlist()
        return [name for name in shortlist.recommended if name in names] if shortlist else []

    def _fill_models(self, chosen: list[str] | None = None) -> None:
        """The model list for the chosen set's workload, grouped by price, with `chosen` (else
        the starting selection) picked."""
        models = self.query_one("#model-list", SelectionList)
        picked = self._starting_selection() if chosen is None else chosen
        self.rows = list_rows(self._shortlist(), self._entries(), picked)
        self.applied = set(picked)
        models.clear_options()
        models.add_options(
            [
                Selection(row.prompt, row.name, row.name in picked)
                if row.name is not None
                else Selection(row.prompt, f"heading:{index}", False, disabled=True)
                for index, row in enumerate(self.rows)
            ]
        )
        first = next((index for index, row in enumerate(self.rows) if row.name is not None), None)
        if first is not None:
            models.highlighted = first
        shortlist = self._shortlist()
        goldset = self._goldset()
        today = self.query_one("#today", Static)
        today.display = goldset is not None and self.choices is not None and self.choices.catalogue is not None
        if goldset is not None:
            today.update(today_panel(shortlist, goldset.manifest.workload_id))
        self._show_selection()

    def _show_selection(self) -> None:
        chosen = list(self.query_one("#model-list", SelectionList).selected)
        self.query_one("#selection-footer", Static).update(selection_footer(self._shortlist(), chosen))

    def action_recommended(self) -> None:
        """Back to the recommended set; the saved selection is forgotten."""
        shortlist, goldset = self._shortlist(), self._goldset()
        if shortlist is None or goldset is None:
            self.notify("No recommendation: this workload has no baseline to price against.", severity="warning")
            return
        self._fill_models([name for name in shortlist.recommended if name in self._names()])
        self._remember(goldset.manifest.workload_id, None)
        self._offer_baselines(list(self.query_one("#model-list", SelectionList).selected))
        self._update()

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
        plan: BudgetPlan | None = None
        if problem:
            lines.append(f"✗ {problem}")
        elif goldset is None or not names or overrides is None or self.choices.catalogue is None:
            lines.append("Choose a golden set and at least one model to see the estimate.")
        else:
            entries = [self.choices.catalogue.get(name) for name in names]
            self.current = preview(goldset, entries, overrides, cap)
            lines += _preview_lines(self.current, cap)
            now = datetime.now(UTC)
            plan = self._budget_plan(goldset, self.current, now)
            lines += self._budget_lines(plan, now)
        estimate.update("\n".join(lines))
        self.query_one("#start", Button).disabled = self.current is None or self.current.refused
        self._show_status(goldset, list(names), problem, plan)

    def _show_status(
        self, goldset: GoldenSet | None, names: list[str], problem: str | None, plan: BudgetPlan | None
    ) -> None:
        """The status line: the first thing that stops ctrl+s, else what it would start."""
        self.blocked = self._blocker(goldset, names, problem, plan)
        status = self.query_one("#start-status", Static)
        status.set_class(self.blocked is not None, "-blocked")
        if self.blocked is not None:
            status.update(f"✗ Not ready: {self.blocked}")
        elif self.current is not None and self.current.refused:
            status.update("✗ The engine would refuse this run: ctrl+s says why")
        else:
            status.update(f"Ready: ctrl+s starts {plural(len(names), 'model')}")

    def _blocker(
        self, goldset: GoldenSet | None, names: list[str], problem: str | None, plan: BudgetPlan | None
    ) -> str | None:
        """Why ctrl+s starts nothing, first reason first: the catalogue, the sets, the settings,
        the models, then today's eval budget (the engine's own refusals open their own screen)."""
        choices = self.choices
        if choices is None:
            return "still reading the golden sets and the catalogue"
        if choices.problem or choices.catalogue is None:
            return choices.problem or "no catalogue"
        if not choices.sets:
            return f"no valid golden set under {self.workspace.sets_dir} (Home's Sets tab lists the problems)"
        if goldset is None:
            return "choose a golden set"
        if problem:
            return problem
        if not names:
            return "choose at least one model (space ticks the highlighted one)"
        if plan is not None and self.current is not None and not self.current.refused and plan.kept == ():
            return f"today's eval budget leaves nothing for {plural(len(names), 'chosen model')}; {reset_sentence(datetime.now(UTC))}"
        return None

    def _budget_plan(self, goldset: GoldenSet, current: SpendPreview, now: datetime) -> BudgetPlan | None:
        """The models today's eval budget keeps (the baseline weighed first); None: no budget set."""
        choices = self.choices
        if choices is None or not choices.budget.set or current.problem:
            return None
        workload = goldset.manifest.workload_id
        baseline = self._picked_baseline([m.name for m in current.models])
        ordered = sorted(current.models, key=lambda m: m.name != baseline)
        return plan_within_budget(
            [(m.name, SpendEstimate(m.usd, "", "")) for m in ordered],
            budget=choices.budget,
            spent=choices.spent,
            spent_workload=choices.spent_by_workload.get(workload, 0.0),
            workload_id=workload,
            now=now,
        )

    def _budget_lines(self, plan: BudgetPlan | None, now: datetime) -> list[str]:
        """Today's eval budget, and the models this run would skip."""
        if plan is None or self.choices is None:
            return []
        return budget_lines(self.choices.budget, self.choices.spent, plan, reset_sentence(now))

    def _picked_baseline(self, names: list[str]) -> str | None:
        picked = self.query_one("#baseline-select", Select).value
        return picked if isinstance(picked, str) and picked in names else None

    # ------------------------------------------------------------------ starting

    @on(Button.Pressed, "#start")
    def _start_pressed(self) -> None:
        self.action_start()

    def action_start(self) -> None:
        self._update()
        current, goldset = self.current, self._goldset()
        if self.blocked is not None or current is None or goldset is None:
            self.notify(f"Nothing started: {self.blocked or 'choose a golden set and a model'}.", severity="warning")
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
        names = tuple(m.name for m in current.models)
        baseline = self._picked_baseline(list(names))
        if baseline is not None:  # the baseline runs first, as with `compare-tui run --baseline`
            names = (baseline, *(n for n in names if n != baseline))
        budget = self.choices.budget if self.choices is not None and self.choices.budget.set else None
        plan = NewRunPlan(goldset.root, names, overrides, cap, baseline=baseline, budget=budget)
        self.app.pop_screen()
        self.nav.open_live(plan)

    def action_back(self) -> None:
        self.app.pop_screen()


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

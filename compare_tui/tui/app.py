"""The Textual app: `create_app` builds it over injected dependencies; `CompareApp` only wires
screens together (each screen does its own work); `run_app` is `compare-tui` with no arguments.
"""

from __future__ import annotations

import gc
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from rich.console import RenderableType
from textual import events
from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.screen import Screen
from textual.theme import Theme

from compare_tui.paths import user_config_path
from compare_tui.reviewer import reviewer_name
from compare_tui.settings import current
from compare_tui.store import Store, StoreError
from compare_tui.tui.engine_bridge import NewRunPlan, ResumePlan
from compare_tui.tui.health import probe_endpoint
from compare_tui.tui.preferences import read_preferences, save_theme
from compare_tui.tui.screens.confirm import ConfirmScreen
from compare_tui.tui.screens.diff import DiffScreen
from compare_tui.tui.screens.experiments import ExperimentsScreen
from compare_tui.tui.screens.help import HelpScreen
from compare_tui.tui.screens.home import HomeScreen
from compare_tui.tui.screens.live import RUN_STOP_TEXT, LiveScreen
from compare_tui.tui.screens.live_switches import LiveSwitchesScreen
from compare_tui.tui.screens.models import ModelsScreen
from compare_tui.tui.screens.new_run import NewRunScreen
from compare_tui.tui.screens.report import ReportScreen
from compare_tui.tui.screens.review import ReviewScreen
from compare_tui.tui.screens.run_picker import RunPair, RunPickerScreen
from compare_tui.tui.screens.task_detail import TaskDetailScreen
from compare_tui.tui.screens.toolcall import ToolcallScreen
from compare_tui.tui.screens.triage import TriageScreen
from compare_tui.tui.themes import THEMES_DIR, load_themes, resolve_theme_name, theme_from_file
from compare_tui.tui.workspace import HealthProbe, Workspace


class CompareApp(App[None]):
    """compare-tui's terminal UI. Build it with `create_app`."""

    TITLE = "compare-tui"
    CSS_PATH = "app.tcss"
    BINDINGS = [
        Binding("question_mark", "help", "Help", key_display="?"),
        Binding("h", "home", "Home", show=False),
        Binding("q", "quit", "Quit"),
    ]

    def __init__(
        self,
        workspace: Workspace,
        *,
        theme: str | None = None,
        themes_dir: Path = THEMES_DIR,
        owns_store: bool = False,
        config_path: Path | None = None,
    ) -> None:
        """`config_path`: the preferences file that remembers the theme (None: nothing is
        remembered, as in tests); `theme` (from `--theme`) wins over the remembered one."""
        super().__init__()
        self.workspace = workspace
        self._owns_store = owns_store
        self._config_path = config_path
        self._startup_problems: list[str] = []
        self._remembered: str | None = None
        if config_path is not None:
            remembered = read_preferences(config_path)
            self._remembered = remembered.theme
            theme = theme or remembered.theme
            if remembered.problem:
                self._startup_problems.append(remembered.problem)
        self._apply_themes(theme, themes_dir)

    def _apply_themes(self, requested: str | None, themes_dir: Path) -> None:
        loaded = load_themes(themes_dir)
        self._startup_problems += loaded.problems
        for theme in loaded.themes:
            self.register_theme(theme)
        if requested and requested.endswith(".toml"):
            try:
                custom = theme_from_file(Path(requested))
                self.register_theme(custom)
                requested = custom.name
            except ValueError as exc:
                self._startup_problems.append(str(exc))
                requested = None
        name, problem = resolve_theme_name(requested, set(self.available_themes))
        if problem:
            self._startup_problems.append(problem)
        self.theme = name

    quitting = False
    """Set by `exit`: from then on no key or click acts (see `on_event`)."""

    def exit(self, result: None = None, return_code: int = 0, message: RenderableType | None = None) -> None:
        self.quitting = True
        super().exit(result, return_code, message)

    async def on_event(self, event: events.Event) -> None:
        # Keys typed just after `q` (a quick `qe`) arrive before the app has torn down; acting on
        # them would open a screen on an app that is closing, whose mount finds nothing composed.
        if self.quitting and isinstance(event, events.InputEvent):
            return
        await super().on_event(event)

    freeze_gc_after_start = False
    """`run_app` sets this: see `_freeze_gc`."""

    def on_mount(self) -> None:
        self.push_screen(HomeScreen())
        if self._config_path is not None:
            self.theme_changed_signal.subscribe(self, self._remember_theme)
        for problem in self._startup_problems:
            self.notify(problem, title="Theme", severity="warning", timeout=10)
        if self.freeze_gc_after_start:
            self.call_after_refresh(_freeze_gc)

    def _remember_theme(self, theme: Theme) -> None:
        if self._config_path is not None and theme.name != self._remembered:
            self._remembered = theme.name
            problem = save_theme(self._config_path, theme.name)
            if problem:
                self.notify(problem, title="Theme", severity="warning", timeout=10)

    def on_unmount(self) -> None:
        if self._owns_store:
            self.workspace.store.close()

    # ------------------------------------------------------------------ navigation (wiring only)

    def open_home(self) -> None:
        while len(self.screen_stack) > 2:
            self.pop_screen()

    def open_new_run(self, set_path: str | None = None) -> None:
        self.push_screen(NewRunScreen(set_path))

    def open_live(self, plan: NewRunPlan | ResumePlan) -> None:
        self.push_screen(LiveScreen(plan))

    def open_report(self, ref: str) -> None:
        self.push_screen(ReportScreen(ref))

    def open_task(self, run_ids: tuple[str, ...], task_id: str, task_ids: tuple[str, ...] = ()) -> None:
        self.push_screen(TaskDetailScreen(run_ids, task_id, task_ids))

    def open_diff(self, run_a: str | None = None, run_b: str | None = None) -> None:
        if run_a and run_b:
            self.push_screen(DiffScreen(run_a, run_b))
            return

        def chosen(pair: RunPair | None) -> None:
            if pair is not None:
                self.push_screen(DiffScreen(pair.run_a, pair.run_b))

        self.push_screen(RunPickerScreen(preselected=run_a), chosen)

    def open_review(self, ref: str) -> None:
        self.push_screen(ReviewScreen(ref))

    def open_triage(self, judging: str = "latest", current: str | None = None) -> None:
        self.push_screen(TriageScreen(judging, current=current))

    def open_experiments(self) -> None:
        self.push_screen(ExperimentsScreen())

    def open_live_switches(self) -> None:
        self.push_screen(LiveSwitchesScreen())

    def open_toolcall(self) -> None:
        self.push_screen(ToolcallScreen())

    def open_models(self, highlight: str | None = None) -> None:
        self.push_screen(ModelsScreen(highlight))

    def open_help(self) -> None:
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen())

    async def action_quit(self) -> None:
        running = [s for s in self.screen_stack if isinstance(s, LiveScreen) and s.running]
        if not running:
            self.exit()
            return
        if any(isinstance(s, ConfirmScreen) for s in self.screen_stack):
            return  # already asking

        async def answered(quit_now: bool | None) -> None:
            if not quit_now:
                return
            self.notify("Cancelling the run first: it is marked interrupted (resumable), then compare-tui quits.")
            for screen in running:
                await screen.stop_for_exit()
            self.exit()

        self.push_screen(
            ConfirmScreen(
                "Quit while a run is going?", RUN_STOP_TEXT + " Then compare-tui quits.", "Quit", "Keep running"
            ),
            answered,
        )

    def action_help(self) -> None:
        self.open_help()

    def action_home(self) -> None:
        self.open_home()

    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        yield SystemCommand("Home", "Golden sets, models and retained runs", self.open_home)
        yield SystemCommand("New run", "Run a golden set against one or more models", self.open_new_run)
        yield SystemCommand("A/B diff", "Compare two retained runs task by task", self.open_diff)
        yield SystemCommand(
            "Latest report", "Open the report of the newest comparison", lambda: self.open_report("latest")
        )
        yield SystemCommand(
            "Review latest", "Human review queue of the newest comparison", lambda: self.open_review("latest")
        )
        yield SystemCommand(
            "Triage latest judging",
            "Where a judge disagrees with people, the scorers or itself",
            lambda: self.open_triage("latest"),
        )
        yield SystemCommand("Experiments", "Arms × N runs: intervals, flaky tasks, confounds", self.open_experiments)
        yield SystemCommand(
            "Live switches", "Canaries at the gateway: B's share, the verdict, what is next", self.open_live_switches
        )
        yield SystemCommand("Models", "The catalogue: would a run be refused, and verify the weights", self.open_models)
        yield SystemCommand("Tool-call conformance", "Scenario table: tool-call runs side by side", self.open_toolcall)
        yield SystemCommand("Help", "Every key binding", self.open_help)
        yield from super().get_system_commands(screen)


def _freeze_gc() -> None:
    """Move everything alive after start-up (Textual, the imports, the Home screen) out of the
    cyclic collector's reach. Its full passes otherwise walk those hundreds of thousands of
    objects again and again, stalling the UI for 0.2-0.3 s each during a run or a report build
    (bench/bench_tui.py measures the lag). Only for the real app: a test process builds many
    apps, and frozen cycles are never collected."""
    gc.freeze()


def create_app(
    store: Store | str | os.PathLike[str] | None = None,
    catalogue_path: str | os.PathLike[str] | None = None,
    sets_dir: str | os.PathLike[str] | None = None,
    theme: str | None = None,
    *,
    reviewer: str | None = None,
    probe: HealthProbe | None = None,
    themes_dir: Path = THEMES_DIR,
    config_path: Path | None = None,
) -> CompareApp:
    """The app over these dependencies. `store` is an open `Store` (the caller closes it) or a
    path (the app opens it and closes it on exit); None means the default store. `config_path`
    remembers the theme across restarts (`run_app` passes the user's; None remembers nothing).
    Raises `StoreError` when the store cannot be opened."""
    from compare_tui.paths import catalogue_path as default_catalogue

    opened = store if isinstance(store, Store) else Store.open(store)
    owns = opened is not store
    workspace = Workspace(
        store=opened,
        catalogue_path=default_catalogue(str(catalogue_path) if catalogue_path else None),
        sets_dir=Path(sets_dir) if sets_dir else default_sets_dir(),
        reviewer=reviewer_name(reviewer),
        probe=probe or probe_endpoint,
        config_path=config_path,
    )
    return CompareApp(workspace, theme=theme, themes_dir=themes_dir, owns_store=owns, config_path=config_path)


def default_sets_dir() -> Path:
    """`$COMPARE_TUI_SETS`, else `./sample_sets` when it exists, else the current folder."""
    env = current().sets
    if env:
        return env
    return Path("sample_sets") if Path("sample_sets").is_dir() else Path(".")


def run_app(
    store: str | None = None, models: str | None = None, sets: str | None = None, theme: str | None = None
) -> int:
    """Run the TUI until the user quits; the exit code for `compare-tui`."""
    import sys

    try:
        app = create_app(store, models, sets, theme, config_path=user_config_path())
    except StoreError as exc:
        print(f"compare-tui: {exc}", file=sys.stderr)
        return 2
    app.freeze_gc_after_start = True
    app.run()
    return app.return_code or 0

"""Help: every key binding of every screen, read from the screens' own `BINDINGS` so this list
cannot drift from what the keys do."""

from __future__ import annotations

from collections.abc import Sequence

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.widgets import DataTable, Footer, Header, Static

from compare_tui.tui.screen_base import CompareScreen

INTRO = (
    "Keyboard first: every action has a key (shown in the footer), and ctrl+p opens the command "
    "palette with every action by name. Blocks: ✓ pass  ✗ fail  ? needs a person  ! error  · not done."
)


def _sections(app_bindings: Sequence[BindingType]) -> list[tuple[str, list[Binding]]]:
    """The key table: `app_bindings` (the running app's, so this module never imports the app)
    and each screen's own."""
    # Imported here: the help screen reads the other screens; they never import it.
    from compare_tui.tui.screens.diff import DiffScreen
    from compare_tui.tui.screens.experiments import ExperimentsScreen
    from compare_tui.tui.screens.home import HomeScreen
    from compare_tui.tui.screens.live import LiveScreen
    from compare_tui.tui.screens.live_switches import LiveSwitchesScreen
    from compare_tui.tui.screens.models import ModelsScreen
    from compare_tui.tui.screens.new_run import NewRunScreen
    from compare_tui.tui.screens.report import ReportScreen
    from compare_tui.tui.screens.review import ReviewScreen
    from compare_tui.tui.screens.run_picker import RunPickerScreen
    from compare_tui.tui.screens.task_detail import TaskDetailScreen
    from compare_tui.tui.screens.toolcall import ToolcallScreen
    from compare_tui.tui.screens.triage import TriageScreen
    from compare_tui.tui.widgets.model_choices import ModelChoices
    from compare_tui.tui.widgets.task_grid import TaskGrid

    sections = [
        (
            "Everywhere",
            [*app_bindings]
            + [Binding("ctrl+p", "command_palette", "Command palette"), Binding("escape", "back", "Back / close")],
        ),
        ("Home", _declared(HomeScreen)),
        ("New run", _declared(NewRunScreen)),
        ("Model list (New run)", _declared(ModelChoices)),
        ("Live progress", _declared(LiveScreen)),
        ("Report", _declared(ReportScreen)),
        ("Task grid (Report)", _declared(TaskGrid)),
        ("Task detail", _declared(TaskDetailScreen)),
        ("A/B diff", _declared(DiffScreen)),
        ("Pick runs for a diff", _declared(RunPickerScreen)),
        ("Human review", _declared(ReviewScreen)),
        ("Judge triage", _declared(TriageScreen)),
        ("Experiments", _declared(ExperimentsScreen)),
        ("Tool-call table", _declared(ToolcallScreen)),
        ("Live switches", _declared(LiveSwitchesScreen)),
        ("Models", _declared(ModelsScreen)),
    ]
    return [(title, [b if isinstance(b, Binding) else Binding(*b) for b in bindings]) for title, bindings in sections]


def _declared(screen: type) -> list[BindingType]:
    """The bindings of a screen or widget with those of our classes it builds on (Textual merges
    them the same way: base classes first), each key once; Textual's own (tab, copy) are left out."""
    seen: dict[str, BindingType] = {}
    for cls in reversed(screen.__mro__):
        if not cls.__module__.startswith("compare_tui."):
            continue
        for binding in cls.__dict__.get("BINDINGS", ()):
            key = binding.key if isinstance(binding, Binding) else binding[0]
            seen[key] = binding
    return list(seen.values())


class HelpScreen(CompareScreen):
    CSS_PATH = "help.tcss"
    BINDINGS = [Binding("escape", "dismiss_help", "Back"), Binding("q", "dismiss_help", "Back", show=False)]

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(INTRO, id="help-intro")
        yield DataTable(id="help-table", cursor_type="row", zebra_stripes=True)
        yield Footer()

    def on_mount(self) -> None:
        self.sub_title = "help"
        table = self.query_one(DataTable)
        table.add_columns("where", "key", "what it does")
        for title, bindings in _sections(self.app.BINDINGS):
            for binding in bindings:
                key = binding.key_display or self.app.get_key_display(binding)
                table.add_row(title, key, binding.tooltip or binding.description or binding.action)
                title = ""
        table.focus()

    def action_dismiss_help(self) -> None:
        self.app.pop_screen()

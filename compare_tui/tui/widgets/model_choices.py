"""`ModelChoices`: a `SelectionList` whose checkbox is empty until an option is picked.

Textual draws the same `X` in every box and tells picked from unpicked by colour alone; here
an unpicked box is blank, so the mark carries the meaning and colour only repeats it. While it
has focus the footer names what Space does here (Space on another field acts on that field).
"""

from __future__ import annotations

from rich.segment import Segment
from textual.binding import Binding
from textual.strip import Strip
from textual.widgets import SelectionList
from textual.widgets._toggle_button import ToggleButton
from textual.widgets.option_list import OptionDoesNotExist


class ModelChoices(SelectionList[str]):
    BINDINGS = [Binding("space", "select", "Toggle model")]

    def render_line(self, y: int) -> Strip:
        strip = super().render_line(y)
        try:
            option = self.get_option_at_index(self.scroll_offset.y + y)
        except OptionDoesNotExist:
            return strip
        if option.value in self.selected:
            return strip
        segments = list(strip)
        if len(segments) > 1 and segments[1].text == ToggleButton.BUTTON_INNER:
            segments[1] = Segment(" " * len(ToggleButton.BUTTON_INNER), segments[1].style)
            return Strip(segments, strip.cell_length)
        return strip

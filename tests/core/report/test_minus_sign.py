"""One minus for every negative figure: the real minus `−` (U+2212) that the report text has
always written (`formatting.signed`), never the hyphen `-`, on the CLI text, Markdown, the HTML
page and the TUI alike. `formatting.number` writes it; a scan keeps signed format specs out of
every other module."""

from __future__ import annotations

import math
import re
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from compare_tui.report import formatting as fmt

SPECS = (".0f", ".1f", ".2f", "+.1f", "+.2f", "+,", ",.0f", ">+6.2f", ".3g", ".4g", "+.0f")


@given(
    value=st.floats(allow_nan=False, allow_infinity=False, min_value=-1e12, max_value=1e12),
    spec=st.sampled_from(SPECS),
)
def test_a_number_is_written_as_format_writes_it_with_a_real_minus(value, spec):
    if spec == "+,":
        value = round(value)
    text = fmt.number(value, spec)
    plain = format(value, spec)
    assert text.replace(fmt.MINUS, "-") == plain  # the same figure, only the sign's character differs
    assert len(text) == len(plain)  # one cell for one: columns stay aligned
    assert not text.lstrip().startswith("-")
    if plain.lstrip().startswith("-"):
        assert text.lstrip().startswith(fmt.MINUS)
    assert math.isclose(float(text.replace(fmt.MINUS, "-").replace(",", "")), float(plain.replace(",", "")))


@given(st.floats(allow_nan=False, allow_infinity=False, min_value=-1e9, max_value=1e9), st.integers(0, 4))
def test_signed_always_shows_a_sign_and_never_a_hyphen(value, digits):
    text = fmt.signed(value, " pts", digits)
    assert text[0] in ("+", fmt.MINUS) and "-" not in text and text.endswith(" pts")


def test_negative_figures_on_every_surface_use_the_real_minus():
    from compare_tui.diff import ab
    from compare_tui.publish.svg import _tick_label
    from compare_tui.report.stats import Percentiles

    # The A/B diff (CLI and TUI): points, latency, tokens.
    assert ab._points(0.5, 0.25) == "−25.0 pts"
    slow, fast = Percentiles(n=3, p50=30_000.0, p95=40_000.0, p99=41_000.0), Percentiles(3, 5_400.0, 6_000.0, 7_000.0)
    assert ab._latency_delta(slow, fast) == "p50 −24.6 s, p95 −34.0 s"
    assert ab._number(1500.0, 300.0) == "−1,200"
    # The published page's axes.
    assert (
        _tick_label(-10.0, "%") == "−10%" and _tick_label(-0.5, "$") == "−$0.5" and _tick_label(-250, "ms") == "−250 ms"
    )


SIGNED_SPEC = re.compile(r"\{[^{}]*:(?:.?[<>=^])?\+[^{}]*\}|\"\{:\+")
"""A format spec that writes a sign itself (`{x:+.1f}`, `"{:+.2f}"`): its minus is a hyphen."""


def test_no_module_writes_a_signed_number_but_the_formatting_helper():
    root = Path(__file__).resolve().parents[3] / "compare_tui"
    helper = root / "report" / "formatting.py"
    found = [
        f"{path.relative_to(root)}:{number}: {line.strip()}"
        for path in sorted(root.rglob("*.py"))
        if path != helper
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if SIGNED_SPEC.search(line)
    ]
    assert not found, "use formatting.signed or formatting.number (a real minus):\n" + "\n".join(found)

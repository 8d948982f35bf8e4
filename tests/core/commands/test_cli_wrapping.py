"""Messages on a terminal are wrapped at its width on spaces (`commands.common.wrapped`): an
80-column window never cuts a word, a figure or an id in two; a pipe gets them unwrapped."""

from __future__ import annotations

import io

from hypothesis import given
from hypothesis import strategies as st

from compare_tui.commands.common import say, wrapped

DECISION = (
    "decision: Switch to candidate qwen2.5-coder-0.5b: better than smollm2-135m (+36.8 pts, 95% CI "
    "+13.8 to +59.0), 25% cheaper per completed task, p50 latency −19.6 %"
)


def test_a_decision_wraps_at_80_columns_between_words():
    lines = wrapped(DECISION, 80).split("\n")
    assert lines == [
        "decision: Switch to candidate qwen2.5-coder-0.5b: better than smollm2-135m",
        "  (+36.8 pts, 95% CI +13.8 to +59.0), 25% cheaper per completed task, p50",
        "  latency −19.6 %",
    ]


def test_an_indented_line_keeps_its_indent_and_its_continuations_go_further():
    text = "  interrupted: the endpoint stopped answering after 12 of 21 tasks; resume with compare-tui run --resume 9835f652e14fb5b2"
    lines = wrapped(text, 60).split("\n")
    assert lines[0].startswith("  interrupted:") and all(line.startswith("    ") for line in lines[1:])
    assert "9835f652e14fb5b2" in lines[-1]


def test_a_narrow_or_unknown_width_leaves_the_text_alone():
    assert wrapped(DECISION, 0) == DECISION and wrapped(DECISION, 39) == DECISION


def test_a_pipe_gets_one_line_per_message():
    out = io.StringIO()
    say(DECISION, file=out)
    assert out.getvalue() == DECISION + "\n"


words = st.text(alphabet=st.characters(blacklist_categories=("Cs", "Zs", "Cc", "Zl", "Zp")), min_size=1, max_size=30)


@given(st.lists(words, min_size=1, max_size=40), st.integers(min_value=40, max_value=160))
def test_wrapping_never_splits_or_loses_a_word(parts, width):
    text = " ".join(parts)
    lines = wrapped(text, width).split("\n")
    assert [w for line in lines for w in line.split()] == text.split()
    assert all(len(line) <= width or len(line.split()) == 1 for line in lines)


class Terminal(io.StringIO):
    """A stream that says it is a terminal (of the width `shutil.get_terminal_size` reports)."""

    def isatty(self) -> bool:
        return True


def test_a_stopped_run_line_on_an_80_column_terminal_keeps_the_resume_command_whole(monkeypatch):
    # A plain print let the terminal cut it where the line reached column 80: `run --re` / `sume …`.
    import os

    from compare_tui.commands.progress import PlainProgress
    from compare_tui.engine.events import RunFinished

    monkeypatch.setattr("shutil.get_terminal_size", lambda *a, **k: os.terminal_size((80, 24)))
    out = Terminal()
    error = (
        "the endpoint http://127.0.0.1:8082/v1 stopped answering (connection refused); resume with "
        "`compare-tui run --resume c4923fb2f4c1f990` once it answers"
    )
    PlainProgress(out).on_event(
        RunFinished("c4923fb2f4c1f990", "qwen2.5-coder-0.5b", "interrupted", {"pass": 3}, error)
    )
    lines = out.getvalue().splitlines()
    assert all(len(line) <= 80 for line in lines)
    assert any("--resume" in line.split() for line in lines) and "c4923fb2f4c1f990`" in out.getvalue().split()

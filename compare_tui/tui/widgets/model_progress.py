"""`ModelProgress`: one model's live run: a bar, pass/fail/review/error counters, a candidate's
confidence sequence in a `--stop-when-settled` session, rolling TTFT and
end-to-end latency, tokens/s (now and over the whole run), the time left, GPU memory (or why
not) and the latest errors."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import ProgressBar, Static

from compare_tui.report.formatting import DASH, MARKS
from compare_tui.tui.live_tally import ModelState, ModelView

STATE_WORDS = {
    ModelState.WAITING: "waiting for its turn",
    ModelState.VERIFYING: "verifying weights",
    ModelState.RUNNING: "running",
    ModelState.COMPLETED: "completed",
    ModelState.INCOMPLETE: "incomplete: some tasks not done (resumable: r)",
    ModelState.INTERRUPTED: "interrupted (resumable: r)",
    ModelState.SETTLED: "settled: the rest not sent",
    ModelState.REFUSED: "refused (nothing sent)",
}


def _ms(value: float | None) -> str:
    return DASH if value is None else f"{value:.0f} ms"


def counters(view: ModelView) -> str:
    c = view.counts
    return (
        f"{MARKS['pass']} pass {c.get('pass', 0)}   {MARKS['fail']} fail {c.get('fail', 0)}   "
        f"{MARKS['review']} review {c.get('review', 0)}   {MARKS['error']} error {c.get('error', 0)}"
        + (f"   {MARKS['missing']} not done {c['not_done']}" if c.get("not_done") else "")
    )


def duration(seconds: float) -> str:
    """`45 s`, `3 min 05 s`, `1 h 02 min`."""
    whole = round(seconds)
    if whole < 60:
        return f"{whole} s"
    if whole < 3600:
        return f"{whole // 60} min {whole % 60:02d} s"
    return f"{whole // 3600} h {whole % 3600 // 60:02d} min"


def _rate(value: float | None) -> str:
    return DASH if value is None else f"{value:.1f}"


def figures(view: ModelView) -> str:
    """Latency over the latest attempts; tok/s now and over the whole run (after a resume, over
    the part since the resume: the tokens before it were not seen here); ETA; GPU memory."""
    part = "since resume" if view.resumed_after else "whole run"
    speed = f"tok/s {_rate(view.tokens_per_s)} now · {_rate(view.run_tokens_per_s)} {part}"
    if view.state == ModelState.RUNNING:
        speed += " · ETA " + ("estimating" if view.eta_s is None else duration(view.eta_s))
    return (
        f"TTFT p50 {_ms(view.ttft_p50_ms)} · E2E p50 {_ms(view.e2e_p50_ms)} (last 100 attempts)\n"
        f"{speed}\nGPU memory: {view.gpu or DASH}"
    )


class ModelProgress(Vertical):
    """Shows a `ModelView`; `show()` is cheap to call on every repaint tick."""

    def __init__(self, model_name: str, *, id: str | None = None) -> None:
        super().__init__(id=id, classes="model-progress")
        self.model_name = model_name
        self._texts: dict[str, str] = {}

    def compose(self) -> ComposeResult:
        yield Static(self.model_name, classes="mp-title", markup=False)
        yield ProgressBar(total=None, show_eta=False, classes="mp-bar")
        yield Static("", classes="mp-counts", markup=False)
        yield Static("", classes="mp-evidence", markup=False)
        yield Static("", classes="mp-figures", markup=False)
        yield Static("", classes="mp-detail", markup=False)
        yield Static("", classes="mp-errors", markup=False)

    @property
    def composed(self) -> bool:
        """Its parts exist (a panel mounted during a run composes a moment later)."""
        return bool(self.query(ProgressBar))

    def show(self, view: ModelView) -> None:
        if not self.composed:
            return  # `call_after_refresh` may come first; the screen's next tick paints it
        bar = self.query_one(ProgressBar)
        if view.total:
            bar.update(total=view.total, progress=view.done)
        state = STATE_WORDS[view.state]
        run = f" · run {view.run_id[:8]}" if view.run_id else ""
        self._set("mp-title", f"{view.model_name} · {state} · {view.done}/{view.total or DASH} tasks{run}")
        self._set("mp-counts", counters(view))
        self._set("mp-evidence", view.evidence)
        self._set("mp-figures", figures(view))
        self._set("mp-detail", view.detail)
        self._set("mp-errors", "\n".join(f"! {e}" for e in view.recent_errors))
        self.set_class(view.state == ModelState.REFUSED, "-bad")
        self.set_class(view.state in (ModelState.COMPLETED, ModelState.SETTLED), "-done")

    def _set(self, part: str, text: str) -> None:
        old = self._texts.get(part)
        if old == text:  # repaint only what changed
            return
        self._texts[part] = text
        widget = self.query_one(f".{part}", Static)
        # A new layout re-lays and re-renders the whole screen; counters and figures change
        # digits, not shape, so most updates repaint this one line in place.
        widget.update(text, layout=old is None or not same_shape(old, text))
        widget.display = bool(text)


def same_shape(old: str, new: str) -> bool:
    """True when `new` wraps exactly like `old` at any width: same length, spaces and line
    breaks in the same places, and every other character one cell wide in both."""
    if len(old) != len(new):
        return False
    for a, b in zip(old, new):
        if a in " \n" or b in " \n":
            if a != b:
                return False
        elif not (_one_cell(a) and _one_cell(b)):
            return False
    return True


def _one_cell(char: str) -> bool:
    return char in _NARROW or (char.isascii() and char.isprintable())


_NARROW = frozenset("".join(MARKS.values()) + DASH + "·—…Δ−")

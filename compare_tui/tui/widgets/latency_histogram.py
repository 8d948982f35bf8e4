"""The report's latency distributions as small text histograms: one line per model and metric,
bars of block characters over the bins every model shares (`report.distribution`), so two
models' shapes compare at a glance. Drawing only: the counts come from the report."""

from __future__ import annotations

from textual.widgets import Static

from compare_tui.report import Report

BARS = " ▁▂▃▄▅▆▇█"
LABEL = 28
"""Model names are cut to this many characters so a line fits 80 columns."""


def bars(counts: tuple[int, ...], top: int) -> str:
    """One block character per bin, scaled to `top` (an empty bin is a space, any task at least ▁)."""
    if top <= 0:
        return " " * len(counts)
    return "".join(BARS[0] if c == 0 else BARS[max(1, round(c / top * (len(BARS) - 1)))] for c in counts)


def _ms(value: float) -> str:
    return f"{value / 1000:.1f} s" if value >= 10_000 else f"{value:.0f} ms"


def histogram_text(report: Report) -> str:
    """Every distribution of the report as lines of text, then the TTFT cross-check's (empty when
    nothing was timed)."""
    lines = []
    for dist in report.latency_distributions:
        if not dist.edges:
            continue
        top = max((max(s.counts) for s in dist.series if s.counts), default=0)
        names = {s.label: s.label if len(s.label) <= LABEL else s.label[: LABEL - 1] + "…" for s in dist.series}
        width = max(len(n) for n in names.values())
        lines.append(f"{dist.title}: tasks per bin, {_ms(dist.edges[0])} to {_ms(dist.edges[-1])}")
        for s in dist.series:
            if not s.n:
                lines.append(f"  {names[s.label]:<{width}}  no completed task timed")
                continue
            median = s.quantiles[len(s.quantiles) // 2]
            lines.append(f"  {names[s.label]:<{width}}  ▕{bars(s.counts, top)}▏ n={s.n} p50 {_ms(median)}")
    # The server's own TTFT beside the client's (`report.server_latency`), as every surface words it.
    lines += [check.line() for check in report.server_latency]
    return "\n".join(lines)


class LatencyHistogram(Static):
    """The histograms of a report (shown under the latency table)."""

    def show(self, report: Report) -> None:
        text = histogram_text(report)
        self.update(text or "No completed task was timed: no distribution to show.")

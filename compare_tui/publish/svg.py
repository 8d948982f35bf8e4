"""Inline SVG plots drawn from figures the report already computed (no plotting library).

Every function takes numbers from the report's JSON document and returns one `<svg>` element
as text: a fixed `viewBox`, `width="100%"` so it shrinks with the page, a `<title>` and
`<desc>` for screen readers, and a legend in words. Series are told apart by colour *and* by
dash pattern and marker shape (colour is never the only signal). Output is deterministic:
numbers are printed with fixed precision, so re-publishing gives the same bytes.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

from compare_tui.report import formatting as fmt

# Okabe–Ito: distinguishable with the common colour-vision deficiencies.
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000")
DASHES = ("", "6 3", "2 3", "8 3 2 3", "1 2", "10 4")
MARKERS = ("circle", "square", "diamond", "triangle")

WIDTH, HEIGHT = 640, 300
LEFT, RIGHT, TOP, BOTTOM = 70, 30, 16, 70


def _n(value: float) -> str:
    """A coordinate with one decimal, without a trailing `.0` (stable, compact)."""
    text = f"{value:.1f}"
    return text.removesuffix(".0")


def nice_ticks(low: float, high: float, count: int = 5) -> list[float]:
    """Round tick values covering [low, high] (1, 2, 5 × a power of ten apart)."""
    if not math.isfinite(low) or not math.isfinite(high):
        return []
    if high <= low:
        high = low + 1
    raw = (high - low) / max(count, 1)
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    first = math.floor(low / step) * step
    ticks = []
    value = first
    while value <= high + step * 1e-9:
        if value >= low - step * 1e-9:
            ticks.append(round(value, 10))
        value += step
    return ticks


def _tick_label(value: float, unit: str) -> str:
    """An axis label; a negative one (a difference's axis) with the real minus every view uses."""
    if unit == "%":
        return fmt.number(value, ".0f") + "%"
    if unit == "$":
        return f"{fmt.MINUS if value < 0 else ''}${abs(value):.4g}"
    if abs(value) >= 1000:
        return fmt.number(value / 1000, ".3g") + " s"
    return fmt.number(value, ".4g") + (" ms" if unit == "ms" else "")


def _marker(kind: str, x: float, y: float, colour: str) -> str:
    if kind == "square":
        return f'<rect x="{_n(x - 3.5)}" y="{_n(y - 3.5)}" width="7" height="7" fill="{colour}"/>'
    if kind == "diamond":
        return (
            f'<path d="M{_n(x)} {_n(y - 4.5)}L{_n(x + 4.5)} {_n(y)}L{_n(x)} {_n(y + 4.5)}'
            f'L{_n(x - 4.5)} {_n(y)}Z" fill="{colour}"/>'
        )
    if kind == "triangle":
        return (
            f'<path d="M{_n(x)} {_n(y - 4.5)}L{_n(x + 4.5)} {_n(y + 4)}L{_n(x - 4.5)} {_n(y + 4)}Z" fill="{colour}"/>'
        )
    return f'<circle cx="{_n(x)}" cy="{_n(y)}" r="4" fill="{colour}"/>'


class _Frame:
    """Axes mapping data to the plot area."""

    def __init__(self, x_range: tuple[float, float], y_range: tuple[float, float]) -> None:
        self.x0, self.x1 = x_range
        self.y0, self.y1 = y_range
        if self.x1 <= self.x0:
            self.x1 = self.x0 + 1
        if self.y1 <= self.y0:
            self.y1 = self.y0 + 1

    def x(self, value: float) -> float:
        return LEFT + (value - self.x0) / (self.x1 - self.x0) * (WIDTH - LEFT - RIGHT)

    def y(self, value: float) -> float:
        return HEIGHT - BOTTOM - (value - self.y0) / (self.y1 - self.y0) * (HEIGHT - TOP - BOTTOM)

    def axes(
        self, x_ticks: Sequence[float], y_ticks: Sequence[float], x_unit: str, y_unit: str, x_title: str, y_title: str
    ) -> list[str]:
        parts = ['<g class="axis" font-size="13" fill="currentColor">']
        base = HEIGHT - BOTTOM
        parts.append(f'<line x1="{LEFT}" y1="{base}" x2="{WIDTH - RIGHT}" y2="{base}" stroke="currentColor"/>')
        parts.append(f'<line x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{base}" stroke="currentColor"/>')
        for tick in x_ticks:
            x = _n(self.x(tick))
            parts.append(
                f'<line x1="{x}" y1="{base}" x2="{x}" y2="{base + 4}" stroke="currentColor"/>'
                f'<text x="{x}" y="{base + 16}" text-anchor="middle">{escape(_tick_label(tick, x_unit))}</text>'
            )
        for tick in y_ticks:
            y = _n(self.y(tick))
            parts.append(
                f'<line x1="{LEFT}" y1="{y}" x2="{WIDTH - RIGHT}" y2="{y}" class="grid"/>'
                f'<text x="{LEFT - 6}" y="{_n(self.y(tick) + 4)}" text-anchor="end">'
                f"{escape(_tick_label(tick, y_unit))}</text>"
            )
        parts.append(
            f'<text x="{_n((LEFT + WIDTH - RIGHT) / 2)}" y="{base + 36}" text-anchor="middle">{escape(x_title)}</text>'
        )
        parts.append(
            f'<text x="14" y="{_n((TOP + base) / 2)}" text-anchor="middle" '
            f'transform="rotate(-90 14 {_n((TOP + base) / 2)})">{escape(y_title)}</text>'
        )
        parts.append("</g>")
        return parts


def _legend(labels: Sequence[str], y: float) -> list[str]:
    parts = ['<g class="legend" font-size="13" fill="currentColor">']
    x = float(LEFT)
    for index, label in enumerate(labels):
        colour, dash, marker = _style(index)
        dash_attr = f' stroke-dasharray="{dash}"' if dash else ""
        parts.append(
            f'<line x1="{_n(x)}" y1="{_n(y)}" x2="{_n(x + 24)}" y2="{_n(y)}" stroke="{colour}" '
            f'stroke-width="2.5"{dash_attr}/>' + _marker(marker, x + 12, y, colour)
        )
        text = label if len(label) <= 40 else label[:39] + "…"
        parts.append(f'<text x="{_n(x + 30)}" y="{_n(y + 4)}">{escape(text)}</text>')
        x += 44 + 8 * len(text)
        if x > WIDTH - 120:
            x, y = float(LEFT), y + 16
    parts.append("</g>")
    return parts


def _style(index: int) -> tuple[str, str, str]:
    return PALETTE[index % len(PALETTE)], DASHES[index % len(DASHES)], MARKERS[index % len(MARKERS)]


def _svg(title: str, desc: str, body: list[str], plot_id: str) -> str:
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" id="{escape(plot_id)}" class="plot" role="img" '
        f'viewBox="0 0 {WIDTH} {HEIGHT}" width="100%" aria-labelledby="{escape(plot_id)}-t {escape(plot_id)}-d">'
        f'<title id="{escape(plot_id)}-t">{escape(title)}</title><desc id="{escape(plot_id)}-d">{escape(desc)}</desc>'
        + "".join(body)
        + "</svg>"
    )


def _empty(title: str, plot_id: str, why: str) -> str:
    body = [
        (
            f'<text x="{WIDTH // 2}" y="{HEIGHT // 2}" text-anchor="middle" font-size="13" '
            f'fill="currentColor">{escape(why)}</text>'
        )
    ]
    return _svg(title, why, body, plot_id)


def ecdf_plot(distribution: Mapping[str, Any], plot_id: str) -> str:
    """Share of completed tasks (y) done within a time (x), one line per model, drawn from the
    distribution's quantiles (`latency_distributions[]` of the report document)."""
    title = f"{distribution['title']}: share of completed tasks within a time"
    series = [s for s in distribution["series"] if s["n"]]
    if not series:
        return _empty(title, plot_id, "No completed task has this time.")
    x_low = min(s["quantiles_ms"][0] for s in series)
    x_high = max(s["quantiles_ms"][-1] for s in series)
    x_ticks = nice_ticks(x_low, x_high)
    frame = _Frame((min([x_low, *x_ticks]), max([x_high, *x_ticks])), (0, 100))
    body = frame.axes(x_ticks, [0, 25, 50, 75, 100], "ms", "%", distribution["title"], "completed tasks within")
    labels = []
    for index, s in enumerate(distribution["series"]):
        if not s["n"]:
            continue
        colour, dash, marker = _style(index)
        steps = len(s["quantiles_ms"]) - 1
        points = " ".join(f"{_n(frame.x(q))},{_n(frame.y(100 * i / steps))}" for i, q in enumerate(s["quantiles_ms"]))
        dash_attr = f' stroke-dasharray="{dash}"' if dash else ""
        body.append(
            f'<polyline class="series" data-model="{escape(s["model"])}" points="{points}" fill="none" '
            f'stroke="{colour}" stroke-width="2.5"{dash_attr}/>'
        )
        median = s["quantiles_ms"][steps // 2]
        body.append(_marker(marker, frame.x(median), frame.y(50), colour))
        labels.append(f"{s['model']} (n={s['n']}, p50 {_tick_label(median, 'ms')})")
    body += _legend(labels, HEIGHT - 14)
    desc = "; ".join(labels) + ". Markers sit at each model's median."
    return _svg(title, desc, body, plot_id)


def histogram_plot(distribution: Mapping[str, Any], plot_id: str) -> str:
    """Tasks per time bin, one outlined step line per model on the shared bins."""
    title = f"{distribution['title']}: tasks per time bin"
    edges = distribution["edges_ms"]
    series = [s for s in distribution["series"] if s["n"]]
    if not series or len(edges) < 2:
        return _empty(title, plot_id, "No completed task has this time.")
    top = max(max(s["counts"]) for s in series)
    x_ticks = nice_ticks(edges[0], edges[-1])
    y_ticks = [t for t in nice_ticks(0, top, 4) if t == int(t)]  # whole tasks
    frame = _Frame((min([edges[0], *x_ticks]), max([edges[-1], *x_ticks])), (0, max([top, *y_ticks])))
    body = frame.axes(x_ticks, y_ticks, "ms", "", distribution["title"], "tasks")
    labels = []
    for index, s in enumerate(distribution["series"]):
        if not s["n"]:
            continue
        colour, dash, marker = _style(index)
        path = [f"M{_n(frame.x(edges[0]))} {_n(frame.y(0))}"]
        for i, count in enumerate(s["counts"]):
            path.append(
                f"L{_n(frame.x(edges[i]))} {_n(frame.y(count))}L{_n(frame.x(edges[i + 1]))} {_n(frame.y(count))}"
            )
        path.append(f"L{_n(frame.x(edges[-1]))} {_n(frame.y(0))}")
        dash_attr = f' stroke-dasharray="{dash}"' if dash else ""
        body.append(
            f'<path class="series" data-model="{escape(s["model"])}" d="{"".join(path)}" fill="{colour}" '
            f'fill-opacity="0.12" stroke="{colour}" stroke-width="2"{dash_attr}/>'
        )
        peak = max(range(len(s["counts"])), key=lambda i: s["counts"][i])
        body.append(_marker(marker, frame.x((edges[peak] + edges[peak + 1]) / 2), frame.y(s["counts"][peak]), colour))
        labels.append(f"{s['model']} (n={s['n']})")
    body += _legend(labels, HEIGHT - 14)
    return _svg(title, "; ".join(labels) + ". Markers sit on each model's fullest bin.", body, plot_id)


def utilisation_plot(
    rows: Sequence[tuple[str, Sequence[tuple[float, float | None]]]], currency: str, plot_id: str
) -> str:
    """Cost per completed task (y) against utilisation (x, 0–1), one line per hardware-basis model.
    `rows` is (model label, [(utilisation, cost per completed task)])."""
    title = "Cost per completed task by utilisation (hardware basis)"
    drawn = [(label, [(u, c) for u, c in points if c is not None]) for label, points in rows]
    drawn = [(label, points) for label, points in drawn if points]
    if not drawn:
        return _empty(title, plot_id, "No model here has a hardware cost per completed task.")
    top = max(c for _, points in drawn for _, c in points)
    y_ticks = nice_ticks(0, top, 4)
    frame = _Frame((0, 100), (0, max([top, *y_ticks])))
    body = frame.axes(
        [0, 25, 50, 75, 100], y_ticks, "%", "$", "utilisation of the hardware", f"{currency} per completed task"
    )
    labels = []
    for index, (label, points) in enumerate(drawn):
        colour, dash, marker = _style(index)
        dash_attr = f' stroke-dasharray="{dash}"' if dash else ""
        coords = " ".join(f"{_n(frame.x(100 * u))},{_n(frame.y(c))}" for u, c in points)
        body.append(
            f'<polyline class="series" data-model="{escape(label)}" points="{coords}" fill="none" '
            f'stroke="{colour}" stroke-width="2.5"{dash_attr}/>'
        )
        body += [_marker(marker, frame.x(100 * u), frame.y(c), colour) for u, c in points]
        labels.append(label)
    body += _legend(labels, HEIGHT - 14)
    return _svg(title, "One line per model on a hardware cost basis: " + ", ".join(labels), body, plot_id)


def interval_plot(
    rows: Sequence[tuple[str, float | None, float | None, float | None]], plot_id: str, title: str
) -> str:
    """Point and 95 % interval per row on a 0–100 % axis: (label, value, low, high), shares 0–1."""
    height = 28 * len(rows) + 48
    width_label = 170
    x0, x1 = width_label, WIDTH - RIGHT
    body = ['<g font-size="13" fill="currentColor">']
    for tick in (0, 25, 50, 75, 100):
        x = _n(x0 + tick / 100 * (x1 - x0))
        body.append(
            f'<line x1="{x}" y1="8" x2="{x}" y2="{height - 28}" class="grid"/>'
            f'<text x="{x}" y="{height - 12}" text-anchor="middle">{tick}%</text>'
        )
    for index, (label, value, low, high) in enumerate(rows):
        y = 24 + 28 * index
        colour, _, marker = _style(index)
        text = label if len(label) <= 26 else label[:25] + "…"
        body.append(f'<text x="{width_label - 8}" y="{y + 4}" text-anchor="end">{escape(text)}</text>')
        if low is not None and high is not None:
            body.append(
                f'<line x1="{_n(x0 + low * (x1 - x0))}" y1="{y}" x2="{_n(x0 + high * (x1 - x0))}" '
                f'y2="{y}" stroke="{colour}" stroke-width="3"/>'
            )
        if value is not None:
            body.append(_marker(marker, x0 + value * (x1 - x0), y, colour))
    body.append("</g>")
    svg_body = "".join(body)
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" id="{escape(plot_id)}" class="plot" role="img" '
        f'viewBox="0 0 {WIDTH} {height}" width="100%" aria-labelledby="{escape(plot_id)}-t">'
        f'<title id="{escape(plot_id)}-t">{escape(title)}</title>{svg_body}</svg>'
    )

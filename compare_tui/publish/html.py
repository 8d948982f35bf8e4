"""Small HTML builders shared by the bundle's pages: the document shell (CSP, inline style and
script), tables from the report's own columns (`report.columns`: cells already spelled), key–
value lists and the task filter. Text is always escaped; nothing here computes a figure."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from html import escape

from compare_tui.publish.assets import CONTENT_SECURITY_POLICY, SCRIPT, STYLE
from compare_tui.report.fit import Column

GENERATOR = "compare-tui publish"


def esc(text: object) -> str:
    return escape(str(text), quote=True)


def document(title: str, body: Sequence[str], *, script: bool = True) -> str:
    """A whole page: one self-contained file (nothing outside it is fetched)."""
    head = [
        "<!DOCTYPE html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{esc(CONTENT_SECURITY_POLICY)}">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        '<meta name="referrer" content="no-referrer">',
        f'<meta name="generator" content="{GENERATOR}">',
        f"<title>{esc(title)}</title>",
        f"<style>{STYLE}</style>",
        "</head>",
        "<body>",
        "<main>",
    ]
    tail = ["</main>", f"<script>{SCRIPT}</script>" if script else "", "</body>", "</html>", ""]
    return "\n".join([*head, *body, *tail])


def column_table(columns: Sequence[Column], table_id: str, caption: str | None = None) -> str:
    """A table from the report's columns: one `<th>` per header, numbers right-aligned."""
    if not columns:
        return ""
    rows = len(columns[0].cells)
    parts = [f'<div class="scroll"><table id="{esc(table_id)}">']
    if caption:
        parts.append(f'<caption class="note">{esc(caption)}</caption>')
    parts.append("<thead><tr>" + "".join(f'<th scope="col">{esc(c.header)}</th>' for c in columns) + "</tr></thead>")
    parts.append("<tbody>")
    for index in range(rows):
        cells = []
        for number, column in enumerate(columns):
            text = esc(column.cells[index])
            if number == 0:
                cells.append(f'<th scope="row">{text}</th>')
            else:
                cells.append(f'<td class="n">{text}</td>' if column.kind == "number" else f"<td>{text}</td>")
        parts.append("<tr>" + "".join(cells) + "</tr>")
    parts.append("</tbody></table></div>")
    return "".join(parts)


def key_values(items: Iterable[tuple[str, object]]) -> str:
    rows = [f"<dt>{esc(k)}</dt><dd>{esc(v)}</dd>" for k, v in items if v not in (None, "", [], {})]
    return f'<dl class="kv">{"".join(rows)}</dl>' if rows else ""


def bullets(lines: Iterable[str], list_id: str | None = None) -> str:
    items = "".join(f"<li>{esc(line)}</li>" for line in lines)
    if not items:
        return ""
    return f'<ul id="{esc(list_id)}">{items}</ul>' if list_id else f"<ul>{items}</ul>"


def section(section_id: str, title: str, *content: str) -> str:
    return (
        f'<section id="{esc(section_id)}">\n<h2>{esc(title)}</h2>\n'
        + "\n".join(c for c in content if c)
        + "\n</section>"
    )


def toc(entries: Iterable[tuple[str, str]]) -> str:
    return (
        '<nav class="toc" aria-label="sections">'
        + "".join(f'<a href="#{esc(i)}">{esc(t)}</a>' for i, t in entries)
        + "</nav>"
    )


def task_filter(options: Mapping[str, str], total: int, *, opener: bool = False) -> str:
    """The filter (radio buttons; values are the task rows' class names), the search box, and
    (with answers) a button that opens every shown task's details."""
    radios = ['<label><input type="radio" name="show" value="all" checked> all</label>']
    radios += [f'<label><input type="radio" name="show" value="{esc(v)}"> {esc(t)}</label>' for v, t in options.items()]
    return (
        f'<form id="task-filter" class="filters" role="search">{"".join(radios)}'
        '<input type="search" name="q" placeholder="search task ids, inputs, answers" aria-label="search tasks">'
        + ('<button type="button" id="open-all">open all shown</button>' if opener else "")
        + f'<output id="task-count" aria-live="polite">{total} tasks</output></form>'
    )


CHUNK = 200
"""Task rows per table chunk: chunks off screen are neither laid out nor painted
(`content-visibility: auto`), which keeps 10,000 tasks' `load` fast."""


def task_table(head: Sequence[str], rows: Sequence[str]) -> str:
    """The task matrix as chunks of one table each (same fixed column widths, so they read as
    one table); each row is one `<tbody>` string (a task: its class names are its filter flags)."""
    widths = f'<colgroup><col class="id">{"<col>" * (len(head) - 1)}</colgroup>'
    header = "<thead><tr>" + "".join(f'<th scope="col">{esc(h)}</th>' for h in head) + "</tr></thead>"
    chunks = []
    for start in range(0, max(len(rows), 1), CHUNK):
        part = "\n".join(rows[start : start + CHUNK])
        chunks.append(f'<div class="chunk"><table>{widths}{header if start == 0 else ""}\n{part}</table></div>')
    return f'<div id="task-table" class="tasks">{"".join(chunks)}</div>'


def json_data(element_id: str, data: object) -> str:
    """Data for the page's script: JSON in a non-executed `<script>` element (so the policy's
    script hash is not needed), with `<` escaped so no text can close the element."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":")).replace("<", "\\u003c")
    return f'<script type="application/json" id="{esc(element_id)}">{text}</script>'

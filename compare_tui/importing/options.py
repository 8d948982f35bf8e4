"""What `sets import` was asked to do, and the per-format defaults of its column options."""

from __future__ import annotations

import hashlib
import re
from dataclasses import asdict, dataclass, field
from typing import Any

SCORERS = ("exact", "regex", "json", "json_schema", "command", "tool_call", "human")

# Column names each format uses unless told otherwise: (id, input, expected).
DEFAULT_COLUMNS: dict[str, tuple[str | None, str, str]] = {
    "csv": (None, "prompt", "expected"),
    "jsonl": (None, "prompt", "expected"),
    "parquet": (None, "prompt", "expected"),
    "hf": (None, "prompt", "expected"),
    "inspect": ("id", "input", "target"),
    "promptfoo": (None, "__input__", ""),
}


@dataclass(frozen=True)
class ImportOptions:
    format: str
    id_column: str | None = None
    input_column: str | None = None
    messages_column: str | None = None
    system: str | None = None
    system_column: str | None = None
    expected_column: str | None = None
    scorer: str = "exact"
    normalize: tuple[str, ...] = ()
    command: tuple[str, ...] = ()
    """argv of the `command` scorer (files resolved relative to the set folder)."""
    workload_id: str | None = None
    name: str | None = None
    version: str | None = None
    limit: int | None = None
    seed: str | None = None
    scrub: bool = False
    skip_bad_rows: bool = False
    split: str | None = None
    delimiter: str | None = None
    """A CSV's delimiter: given with `--delimiter`, else told from the header (`import_set` fills it in)."""
    tags: tuple[str, ...] = field(default=())

    def columns(self) -> tuple[str | None, str, str]:
        """(id, input, expected) column names: the options given, else the format's defaults."""
        id_default, input_default, expected_default = DEFAULT_COLUMNS[self.format]
        id_column = self.id_column if self.id_column is not None else id_default
        return id_column, self.input_column or input_default, self.expected_column or expected_default

    def recorded(self) -> dict[str, Any]:
        """The options as `import.json` records them (the same options give the same set)."""
        out = asdict(self)
        for key in ("normalize", "command", "tags"):
            out[key] = list(out[key])
        id_column, input_column, expected_column = self.columns()
        out.update(id_column=id_column, expected_column=expected_column or None)
        if self.messages_column is None:
            out["input_column"] = input_column
        if self.format == "promptfoo":
            out["scorer"] = None  # each task's scorer comes from its asserts
        if self.delimiter in (None, ","):
            # Only a CSV has one, and a comma was every CSV's before the header told it: left
            # out, an import that reads as it did keeps the version (the pin) it had.
            del out["delimiter"]
        return out


def default_workload_id(stem: str) -> str:
    """A workload id from a file name: letters, digits, `.`, `_`, `-`, starting with a letter or digit."""
    cleaned = re.sub(r"[^A-Za-z0-9._-]+", "-", stem).strip("-._")[:120]
    return cleaned or "imported"


def pin(source_sha256: str, options: ImportOptions) -> str:
    text = source_sha256 + repr(sorted(options.recorded().items()))
    return hashlib.sha256(text.encode()).hexdigest()[:12]

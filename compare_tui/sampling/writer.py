"""Writing a sampled set folder: `tasks/*.json`, `sample.json`, then `golden.toml`.

Callers can rely on:
- a folder that holds anything is refused unless `force`, and even with `force` only a
  folder that already holds a sampled set (`sample.json` or `golden.toml`) is reused: its
  `golden.toml`, `sample.json` and `tasks/*.json|*.toml` are replaced, nothing else is
  touched (so a mistyped `--out ~` deletes nothing);
- `golden.toml` is written last, so an interrupted write never leaves a loadable set;
- bytes depend only on the `SampledSet`: sorted file names, fixed key order, UTF-8, `\\n`.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from .errors import SamplingError
from .sampled import SampledSet


def json_text(value: Any) -> str:
    """A JSON file's text as sets are written: indented, UTF-8 as is, a final newline."""
    return json.dumps(value, indent=2, ensure_ascii=False) + "\n"


def write_atomically(path: Path, text: str) -> None:
    """Write `text` to `path` through a temporary file beside it, so a reader never sees half."""
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text, encoding="utf-8", newline="\n")
    os.replace(tmp, path)


def check_folder(out: Path, force: bool) -> None:
    """Raise `SamplingError` unless `out` can take a sampled set (see module docstring).
    Changes nothing, so a caller can check before a long sampling run."""
    if out.exists() and not out.is_dir():
        raise SamplingError(f"--out {out}: is a file; give a folder for the sampled set")
    try:
        empty = not out.exists() or not any(out.iterdir())
    except OSError as exc:
        raise SamplingError(f"--out {out}: cannot be listed ({exc.strerror or exc})") from None
    if empty:
        return
    if not force:
        raise SamplingError(
            f"--out {out}: the folder is not empty; choose an empty folder, or pass --force to replace the sampled set in it"
        )
    if not ((out / "sample.json").is_file() or (out / "golden.toml").is_file()):
        raise SamplingError(
            f"--out {out}: holds files that are not a sampled set, so --force will not clear it; choose an empty folder"
        )


def _clear(out: Path) -> None:
    for name in ("golden.toml", "sample.json"):
        (out / name).unlink(missing_ok=True)
    tasks = out / "tasks"
    if tasks.is_dir():
        for task in tasks.iterdir():
            if task.suffix.lower() in (".json", ".toml") and task.is_file():
                task.unlink()


def write_sampled_set(sampled: SampledSet, out: Path | str, force: bool = False) -> Path:
    """Write `sampled` into folder `out` (created if missing); returns `out`."""
    out = Path(out)
    check_folder(out, force)
    try:
        if out.exists():
            _clear(out)
        tasks = out / "tasks"
        tasks.mkdir(parents=True, exist_ok=True)
        for task in sampled.tasks:
            write_atomically(tasks / f"{task['id']}.json", json_text(task))
        write_atomically(out / "sample.json", json_text(sampled.info))
        write_atomically(out / "golden.toml", sampled.manifest_toml())
    except OSError as exc:
        raise SamplingError(f"--out {out}: cannot write the sampled set ({exc.strerror or exc})") from None
    return out

"""Writing an imported set folder: `tasks/*.json`, `import.json`, then `golden.toml`.

Callers can rely on: a folder that holds anything is refused unless `force`, and then only a
folder that already holds a set (`import.json` or `golden.toml`) is reused, its set files
replaced and nothing else touched; `golden.toml` is written last, so an interrupted write never
leaves a loadable set; the bytes depend only on the `ImportedSet` (fixed key order, UTF-8, `\\n`).
"""

from __future__ import annotations

from pathlib import Path

import tomlkit

from compare_tui.goldset import Manifest, Problem, Task, digest_golden_set
from compare_tui.goldset.references import resolve_scorer
from compare_tui.sampling.writer import json_text, write_atomically

from .errors import ImportingError
from .importer import ImportedSet


def check_folder(out: Path, force: bool) -> None:
    if out.exists() and not out.is_dir():
        raise ImportingError(f"--out {out}: is a file; give a folder for the imported set")
    if not out.exists() or not any(out.iterdir()):
        return
    if not force:
        raise ImportingError(
            f"--out {out}: the folder is not empty; choose an empty folder, or pass --force to replace the set in it"
        )
    if not ((out / "import.json").is_file() or (out / "golden.toml").is_file()):
        raise ImportingError(
            f"--out {out}: holds files that are not a golden set, so --force will not clear it; choose an empty folder"
        )


def write_imported_set(imported: ImportedSet, out: Path | str, force: bool = False) -> Path:
    out = Path(out)
    check_folder(out, force)
    try:
        for name in ("golden.toml", "import.json"):
            (out / name).unlink(missing_ok=True)
        tasks = out / "tasks"
        if tasks.is_dir():
            for old in tasks.iterdir():
                if old.suffix.lower() in (".json", ".toml") and old.is_file():
                    old.unlink()
        tasks.mkdir(parents=True, exist_ok=True)
        for task in imported.tasks:
            write_atomically(tasks / f"{task['id']}.json", json_text(task))
        write_atomically(out / "import.json", json_text(imported.info))
        header = "# Imported by `compare-tui sets import`; import.json pins the source file and the options.\n"
        write_atomically(out / "golden.toml", header + tomlkit.dumps(imported.manifest))
    except OSError as exc:
        raise ImportingError(f"--out {out}: cannot write the imported set ({exc.strerror or exc})") from None
    return out


def imported_digest(imported: ImportedSet, out: Path | str) -> str:
    """The digest the set will have once written to `out` (what `load_golden_set` computes),
    before anything is written: a command scorer's scripts are read from `out`, where the
    loader will look for them."""
    out = Path(out)
    files: dict[str, str] = {}
    problems: list[Problem] = []  # the loader names them after the write; the digest is all we want

    def resolved(scorer: object, file: Path, field: str) -> object:
        return resolve_scorer(scorer, root=out, file=file, field=field, files=files, problems=problems)

    manifest = Manifest.model_validate(imported.manifest)
    manifest = manifest.model_copy(
        update={"default_scorer": resolved(manifest.default_scorer, out / "golden.toml", "default_scorer")}
    )
    tasks = []
    for raw in imported.tasks:
        task = Task.model_validate(raw)
        if task.scorer is not None:
            task = task.model_copy(
                update={"scorer": resolved(task.scorer, out / "tasks" / f"{task.id}.json", "scorer")}
            )
        tasks.append(task)
    return digest_golden_set(manifest, tasks, files)

"""Loading a golden set folder: `golden.toml` + `tasks/*.toml|*.json` (docs/golden-sets.md).

Callers can rely on:
- `load_golden_set` returns a fully checked `GoldenSet` or raises `GoldenSetError` listing
  every problem found in every file; it raises nothing else for anything in the folder.
- `validate_golden_set` returns those same problems (empty when the set loads).
- Tasks come back in task-file-name order. Task files are the `*.toml` and `*.json` files
  directly in `tasks/`; names starting with `.` (editor swap files) are skipped.
- A json scorer's `schema` given as a path comes back as the schema it names.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from .digest import digest_golden_set
from .documents import read_document
from .errors import GoldenSetError, Problem
from .field_problems import kind_of, problems_from_validation
from .models import ExactScorer, GoldenSet, JsonScorer, Manifest, Task, ToolCallScorer
from .references import resolve_scorer
from .traces import trace_problems

MANIFEST_NAME = "golden.toml"
TASKS_DIR = "tasks"
TASK_SUFFIXES = {".toml": "toml", ".json": "json"}


def load_golden_set(path: Path | str) -> GoldenSet:
    """The golden set in folder `path`; raises `GoldenSetError` (with every problem)."""
    golden, problems = _collect(Path(path))
    if problems or golden is None:
        raise GoldenSetError.from_problems(problems)
    return golden


def validate_golden_set(path: Path | str) -> list[Problem]:
    """Every problem in the golden set at `path`, in file order; [] when it loads."""
    return _collect(Path(path))[1]


def discover_golden_sets(folder: Path | str) -> list[Path]:
    """Direct subfolders of `folder` holding a `golden.toml`, sorted by name.

    A folder that does not exist or cannot be listed holds no sets: returns [].
    """
    try:
        children = list(Path(folder).iterdir())
    except (OSError, ValueError):
        return []
    found = [c for c in children if _kind(c) == "folder" and _kind(c / MANIFEST_NAME) == "file"]
    return sorted(found, key=lambda c: c.name)


def _kind(path: Path) -> str:
    """One of `file`, `folder`, `missing` or `unreadable`; never raises."""
    try:
        if path.is_dir():
            return "folder"
        return "file" if path.exists() else "missing"
    except (OSError, ValueError):  # no permission to look, a NUL byte, an over-long name
        return "unreadable"


M = TypeVar("M", bound=BaseModel)


def _validate(model: type[M], data: Any, file: Path, syntax: str, problems: list[Problem]) -> M | None:
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        problems.extend(problems_from_validation(exc, file, model, syntax))
        return None


def _load_manifest(root: Path, problems: list[Problem]) -> Manifest | None:
    file = root / MANIFEST_NAME
    if _kind(file) == "missing":
        problems.append(
            Problem(
                file,
                None,
                f"there is no {MANIFEST_NAME} in {root}",
                "create one with workload_id, name, version and a [default_scorer] table",
            )
        )
        return None
    doc = read_document(file, "toml", what="the manifest")
    if isinstance(doc, Problem):
        problems.append(doc)
        return None
    return _validate(Manifest, doc.data, file, "toml", problems)


def _task_files(root: Path, problems: list[Problem]) -> list[Path]:
    folder = root / TASKS_DIR
    fix = f"add one file per task (*.toml or *.json) under {folder}"
    kind = _kind(folder)
    if kind != "folder":
        what = {"missing": "does not exist", "file": "is not a folder"}.get(kind, "cannot be looked at")
        problems.append(Problem(folder, None, f"{what}, so the set has no tasks", fix))
        return []
    try:
        entries = sorted(folder.iterdir(), key=lambda p: p.name)
    except OSError as exc:
        reason = exc.strerror or str(exc)
        problems.append(Problem(folder, None, f"cannot be listed: {reason}", "make the folder readable"))
        return []
    files = [p for p in entries if p.suffix.lower() in TASK_SUFFIXES and not p.name.startswith(".")]
    if not files:
        problems.append(Problem(folder, None, "holds no task files, so the set is empty", fix))
    return files


def _load_task(file: Path, problems: list[Problem]) -> Task | None:
    syntax = TASK_SUFFIXES[file.suffix.lower()]
    doc = read_document(file, syntax, what="a task")
    if isinstance(doc, Problem):
        problems.append(doc)
        return None
    return _validate(Task, doc.data, file, syntax, problems)


def _check_against_scorer(task: Task, scorer: Any, file: Path, inherited: bool, problems: list[Problem]) -> None:
    """Checks that need both the task's expected outcome and the scorer that judges it."""
    syntax = TASK_SUFFIXES[file.suffix.lower()]
    source = f"the default scorer in {MANIFEST_NAME}" if inherited else "the scorer"
    if isinstance(scorer, JsonScorer) and scorer.fields:
        expected = task.expected.json_
        if not isinstance(expected, dict):
            got = "it is not given" if expected is None else f"it is {kind_of(expected, syntax)}"
            problems.append(
                Problem(
                    file,
                    "expected.json",
                    f"{source} compares {_names('field', scorer.fields)} with `expected.json`, but {got}",
                    "give `expected.json` as an object holding those fields, or drop `fields` from the scorer",
                )
            )
        elif missing := [f for f in scorer.fields if f not in expected]:
            problems.append(
                Problem(
                    file,
                    "expected.json",
                    f"{source} compares {_names('field', missing)}, which `expected.json` lacks",
                    "add them to `expected.json`, or drop them from the scorer's `fields`",
                )
            )
    if isinstance(scorer, ExactScorer) and task.expected.text is None:
        given = "`expected.json`" if task.expected.json_ is not None else "`expected.tool_call`"
        problems.append(
            Problem(
                file,
                "expected.text",
                f"{source} is an exact scorer, which compares the answer with `expected.text`, but the task "
                f"gives {given}",
                "give `expected.text`, or set a scorer that reads what the task gives "
                '(`[scorer] kind = "json"` with `fields` for `expected.json`, `kind = "tool_call"` for '
                "`expected.tool_call`)",
            )
        )
    if isinstance(scorer, ToolCallScorer) and not scorer.no_tool_call and task.expected.tool_call is None:
        problems.append(
            Problem(
                file,
                "expected.tool_call",
                f"{source} is a tool_call scorer, but there is no `expected.tool_call`",
                "add `expected.tool_call` with the tool `name` and `arguments`, "
                "or set `no_tool_call = true` on the scorer",
            )
        )


def _names(noun: str, names: list[str]) -> str:
    return f"{noun}{'s' if len(names) != 1 else ''} " + ", ".join(f"`{n}`" for n in names)


def _root_problem(root: Path, kind: str) -> Problem | None:
    if kind == "folder":
        return None
    if kind == "file":
        hint = f"give its folder, {root.parent}" if root.name == MANIFEST_NAME else "give the folder instead"
        return Problem(root, None, "is a file, not a golden set folder (golden.toml + tasks/)", hint)
    what = "no such folder" if kind == "missing" else "cannot be looked at"
    return Problem(root, None, what, "give the path of a golden set folder (it holds golden.toml and tasks/)")


def _collect(root: Path) -> tuple[GoldenSet | None, list[Problem]]:
    """The set at `root` when it has no problems, else None and every problem found."""
    bad_root = _root_problem(root, _kind(root))
    if bad_root is not None:
        return None, [bad_root]
    problems: list[Problem] = []
    files: dict[str, str] = {}  # referenced files: relative path -> sha256 hex

    def resolve(scorer: Any, file: Path, field: str) -> Any:
        return resolve_scorer(scorer, root=root, file=file, field=field, files=files, problems=problems)

    manifest = _load_manifest(root, problems)
    if manifest is not None:
        default = resolve(manifest.default_scorer, root / MANIFEST_NAME, "default_scorer")
        manifest = manifest.model_copy(update={"default_scorer": default})

    tasks: list[Task] = []
    traced: list[tuple[Task, Path]] = []
    first_file: dict[str, Path] = {}
    for file in _task_files(root, problems):
        task = _load_task(file, problems)
        if task is None:
            continue
        if task.id in first_file:
            problems.append(
                Problem(
                    file,
                    "id",
                    f"task id `{task.id}` is also used by {first_file[task.id]}",
                    "give every task its own id",
                )
            )
        first_file.setdefault(task.id, file)
        if task.scorer is not None:
            task = task.model_copy(update={"scorer": resolve(task.scorer, file, "scorer")})
        inherited = task.scorer is None
        scorer = manifest.default_scorer if inherited and manifest is not None else task.scorer
        _check_against_scorer(task, scorer, file, inherited, problems)
        tasks.append(task)
        traced.append((task, file))
    problems.extend(trace_problems(traced))

    if problems or manifest is None:
        return None, problems
    golden = GoldenSet(
        root=root.absolute(),
        manifest=manifest,
        tasks=tuple(tasks),
        digest=digest_golden_set(manifest, tasks, files),
        files=dict(sorted(files.items())),
    )
    return golden, []

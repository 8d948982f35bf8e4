"""promptfoo test files: `prompts:` and `tests:` (each with `vars` and `assert`) as rows.

A test's input is its prompt with `{{ var }}` replaced by the test's vars (promptfoo's Nunjucks
beyond plain substitution is not rendered: such a prompt is refused, naming it). Asserts map to
our scorers where the meaning is the same:
- `equals` → `exact` (an object or list value: `json` comparing every top-level field);
- `contains` / `icontains` → `regex` (the value escaped; `icontains` ignores case);
- `regex` → `regex`;
- `is-json` / `contains-json` → `json`, with the assert's `value` as the JSON Schema when given.
A task takes the first assert that maps; every other assert (another mapped one too, since a
task has one scorer) is listed as not imported, per task, in `import.json`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .errors import ImportingError
from .rows import Row, RowProblem

MAPPED = ("equals", "contains", "icontains", "regex", "is-json", "contains-json")
_VAR = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_.]*)\s*\}\}")
_TEMPLATE_SYNTAX = re.compile(r"\{%|\{#|\{\{[^}]*\|")


def _yaml_load(path: Path) -> Any:
    try:
        import yaml
    except ImportError:
        raise ImportingError(
            "promptfoo files are read with PyYAML, which is not installed: "
            "pip install 'compare-tui[import]' (or pip install pyyaml)"
        ) from None
    try:
        return yaml.safe_load(path.read_text(encoding="utf-8-sig"))
    except (OSError, UnicodeDecodeError) as exc:
        raise ImportingError(f"{path}: cannot be read ({exc})") from None
    except yaml.YAMLError as exc:
        raise ImportingError(f"{path}: not valid YAML ({str(exc).splitlines()[0]})") from None


def _prompt_text(entry: Any, base: Path) -> str:
    if isinstance(entry, dict):
        entry = entry.get("raw", entry.get("prompt"))
    if not isinstance(entry, str):
        raise ImportingError(f"{base}: a prompt that is not text ({entry!r:.60}); give prompts as strings")
    if entry.startswith("file://"):
        file = (base.parent / entry.removeprefix("file://")).resolve()
        try:
            return file.read_text(encoding="utf-8")
        except OSError as exc:
            raise ImportingError(f"{base}: prompt {entry}: cannot be read ({exc.strerror or exc})") from None
    return entry


def render(template: str, variables: dict[str, Any]) -> str:
    """`template` with each `{{ name }}` replaced by `variables[name]`; KeyError names a missing one."""

    def value(match: re.Match[str]) -> str:
        item = variables[match.group(1)]
        return item if isinstance(item, str) else str(item)

    return _VAR.sub(value, template)


def scorer_for(kind: str, value: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """(scorer, expected) for one mapped assert; ValueError says why its value does not fit."""
    if kind == "equals":
        if isinstance(value, dict):
            return {"kind": "json", "fields": sorted(value)}, {"json": value}
        if value is None or isinstance(value, (list, bool)):
            raise ValueError(f"`equals` value {value!r:.40} is not text or an object")
        return {"kind": "exact"}, {"text": str(value)}
    if kind in ("contains", "icontains"):
        if value is None or isinstance(value, (dict, list)):
            raise ValueError(f"`{kind}` value is not text")
        flags = ["IGNORECASE"] if kind == "icontains" else []
        return {"kind": "regex", "pattern": re.escape(str(value)), "mode": "search", "flags": flags}, {
            "text": str(value)
        }
    if kind == "regex":
        if not isinstance(value, str):
            raise ValueError("`regex` value is not text")
        try:
            re.compile(value)
        except (re.error, OverflowError, RecursionError) as exc:
            raise ValueError(f"`regex` value is not a valid regular expression ({exc})") from None
        return {"kind": "regex", "pattern": value, "mode": "search"}, {"text": value}
    # is-json / contains-json
    if value is not None and not isinstance(value, dict):
        raise ValueError(f"`{kind}` value is not a JSON Schema object")
    scorer: dict[str, Any] = {"kind": "json"}
    if value is not None:
        scorer["schema"] = value
    return scorer, {"json": value if value is not None else {}}


def _describe(assertion: Any) -> str:
    if isinstance(assertion, dict):
        kind = assertion.get("type", "?")
        return f"{kind}" + (f" ({assertion['metric']})" if assertion.get("metric") else "")
    return repr(assertion)[:40]


def read_promptfoo(path: Path, input_var: str | None) -> Iterator[Row | RowProblem]:
    document = _yaml_load(path)
    if not isinstance(document, dict) or not isinstance(document.get("tests"), list):
        raise ImportingError(f"{path}: no `tests:` list; a promptfoo file holds `prompts:` and `tests:`")
    prompts = document.get("prompts") or []
    if isinstance(prompts, str):
        prompts = [prompts]
    templates = [_prompt_text(p, path) for p in prompts]
    if input_var is None:
        if len(templates) != 1:
            raise ImportingError(
                f"{path}: {len(templates)} prompts; compare-tui makes one task per test, so keep one prompt, "
                "or name the var that holds the whole input with --input-column"
            )
        if _TEMPLATE_SYNTAX.search(templates[0]):
            raise ImportingError(
                f"{path}: the prompt uses Nunjucks tags or filters, which are not rendered here; "
                "use plain {{ var }} substitution, or --input-column VAR"
            )
    default = document.get("defaultTest") or {}
    default_vars = default.get("vars") or {} if isinstance(default, dict) else {}
    default_asserts = default.get("assert") or [] if isinstance(default, dict) else []
    for number, test in enumerate(document["tests"], start=1):
        if not isinstance(test, dict):
            yield RowProblem(number, "", "a test that is not a mapping")
            continue
        variables = {**default_vars, **(test.get("vars") or {})}
        if any(isinstance(v, list) for v in variables.values()):
            listed = sorted(k for k, v in variables.items() if isinstance(v, list))
            yield RowProblem(
                number,
                "vars",
                f"{', '.join(listed)}: a list of values (one test per value) is not expanded; give one value",
            )
            continue
        if input_var is None:
            try:
                variables["__input__"] = render(templates[0], variables)
            except KeyError as exc:
                yield RowProblem(
                    number, "vars", f"the prompt uses {{{{ {exc.args[0]} }}}}, which this test does not set"
                )
                continue
        asserts = list(test.get("assert") or []) + list(default_asserts)
        scorer = expected = None
        not_imported: list[str] = []
        problem = None
        for assertion in asserts:
            kind = assertion.get("type") if isinstance(assertion, dict) else None
            if kind in MAPPED and scorer is None:
                try:
                    scorer, expected = scorer_for(kind, assertion.get("value"))
                except ValueError as exc:
                    problem = str(exc)
                    not_imported.append(_describe(assertion))
            else:
                not_imported.append(_describe(assertion))
        if scorer is None:
            reason = problem or (
                "no assert of a kind compare-tui scores ("
                + ", ".join(MAPPED)
                + ")"
                + (f"; not imported: {', '.join(not_imported)}" if not_imported else "")
            )
            yield RowProblem(number, "assert", reason)
            continue
        if test.get("description"):
            variables.setdefault("__description__", str(test["description"]))
        yield Row(number, variables, scorer=scorer, expected=expected, not_imported=tuple(not_imported))

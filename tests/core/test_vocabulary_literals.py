"""The vocabulary holds: no typed field (a status, verdict, outcome, kind, state, …) is compared
with a string literal that spells one of the project's enum members, and no new code reads a
fact back out of a sentence (`str(exc).startswith(…)`, `"…" in reason`). Static (AST): it reads
every module of `compare_tui` and fails naming the line."""

from __future__ import annotations

import ast
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

ROOT = next(p for p in Path(__file__).resolve().parents if (p / "pyproject.toml").is_file())
PACKAGE = ROOT / "compare_tui"

FIELDS = frozenset(
    {
        "status",
        "statuses",
        "verdict",
        "outcome",
        "outcomes",
        "kind",
        "state",
        "action",
        "error_class",
        "provenance",
        "source",
        "baseline_source",
        "text_call",
        "reach",
    }
)
"""Names of fields that hold a vocabulary member (an attribute, a variable, a dict key)."""

OTHER_WORDS = {
    # (module, literal): a comparison of a field of that name with a word that is not ours.
    ("catalogue/loader.py", "missing"): "pydantic's error type, not a task status",
    ("goldset/loader.py", "missing"): "pydantic's error type, not a task status",
    ("goldset/field_problems.py", "missing"): "pydantic's error type, not a task status",
    ("store/connection.py", "empty"): "the store file's own inspection (a Literal in store/schema.py)",
    ("scoring/placement.py", "local"): "the `--scorers` placement, a Literal of `local`/`ray`",
    ("importing/tasks.py", "json_schema"): "the `sets import --scorer` choice, not a failure cause",
    ("toolcall/scenarios/suite.py", "refused"): "a scenario file's `expect.status`, read into a bool",
}

TEXT_METHODS = frozenset({"startswith", "endswith", "removeprefix", "removesuffix", "partition", "rpartition", "split"})

READS_TEXT = Counter(
    {
        # module: how many places read a text, each someone else's words (or not yet typed).
        "canary/control.py": 1,  # the user's `--steps 1,5,25,50,100`
        "catalogue/adding.py": 1,  # the user's `--note KEY=VALUE`
        "commands/experiment.py": 1,  # pydantic's message
        "endpoint/account.py": 2,  # a server's JSON keys
        "endpoint/fingerprint.py": 3,  # a server's error text and version string
        "engine/reachability.py": 1,  # httpx's message ("[Errno …] why")
        "engine/sse.py": 3,  # the server's stream
        "goldset/documents.py": 1,  # Python's int() message
        "goldset/field_problems.py": 4,  # pydantic's messages and labels
        "importing/importer.py": 1,  # a source row's keys
        "insights/causes.py": 6,  # not yet: a scorer's detail is classified from its words
        "local/catalogue_writer.py": 1,  # llama-server's --version output
        "publish/svg.py": 1,  # a number's own spelling ("2.0" → "2")
        "report/serving.py": 2,  # a server's stack string
        "sampling/redaction.py": 3,  # the user's sampled logs
        "sampling/tasks.py": 1,  # a log record's message
        "sampling/window.py": 1,  # the user's `--window` time
        "store/errors.py": 6,  # SQLite's messages
        "tui/set_cells.py": 1,  # a cell's list, to fit it to its width
        "tui/shown_path.py": 1,  # a path
    }
)


def enum_words() -> set[str]:
    """Every string value of every StrEnum member declared in `compare_tui`, and `missing`."""
    words = {"missing", "not_done"}
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef) and any(
                (isinstance(b, ast.Name) and b.id == "StrEnum") for b in node.bases
            ):
                for item in node.body:
                    if (
                        isinstance(item, ast.Assign)
                        and isinstance(item.value, ast.Constant)
                        and isinstance(item.value.value, str)
                    ):
                        words.add(item.value.value)
    return words


def _field(node: ast.AST) -> str | None:
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
        return str(node.slice.value)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get":
        first = node.args[0] if node.args else None
        return str(first.value) if isinstance(first, ast.Constant) else None
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "str" and node.args:
        return _field(node.args[0])
    return None


def _literals(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, (ast.Tuple, ast.Set, ast.List)):
        found = [e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
        return found if len(found) == len(node.elts) else []
    return []


def literal_comparisons(source: str, module: str, words: set[str]) -> Iterator[str]:
    """`module:line: code` for each comparison of a vocabulary field with one of `words`."""
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Compare):
            continue
        sides = [node.left, *node.comparators]
        for field in sides:
            for other in sides:
                spelled = set(_literals(other)) & words if other is not field else set()
                if _field(field) in FIELDS and spelled and not all((module, w) in OTHER_WORDS for w in spelled):
                    yield f"{module}:{node.lineno}: {ast.unparse(node)}"


def text_reads(source: str) -> Iterator[int]:
    """The line of each place that reads a fact out of a text: a prefix, suffix or split of a
    string value (not a plain split into words or lines), or a literal looked for inside one."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in TEXT_METHODS:
            receiver = node.func.value
            if isinstance(receiver, ast.Constant):
                continue  # a literal's own method: "…".split()
            if node.func.attr == "split" and (
                not node.args or (isinstance(node.args[0], ast.Constant) and node.args[0].value == "\n")
            ):
                continue  # words or lines, to lay a text out
            if _texty(receiver):
                yield node.lineno
        elif isinstance(node, ast.Compare) and isinstance(node.left, ast.Constant) and isinstance(node.left.value, str):
            if any(isinstance(op, (ast.In, ast.NotIn)) for op in node.ops) and any(_texty(c) for c in node.comparators):
                yield node.lineno


_TEXT_NAMES = frozenset({"message", "reason", "sentence", "note", "problem", "summary", "detail", "text", "health"})


def _texty(node: ast.AST) -> bool:
    """`str(…)`, or a value named as a text (`reason`, `exc.message`, `item.detail`, …)."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "str":
        return True
    name = node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else None
    return name in _TEXT_NAMES


def _modules() -> Iterator[tuple[str, str]]:
    for path in sorted(PACKAGE.rglob("*.py")):
        yield path.relative_to(PACKAGE).as_posix(), path.read_text(encoding="utf-8")


def test_no_vocabulary_field_is_compared_with_a_string_literal():
    words = enum_words()
    found = [hit for module, source in _modules() for hit in literal_comparisons(source, module, words)]
    assert found == [], "compare with the enum member (compare_tui/vocabulary.py), not its spelling:\n" + "\n".join(
        found
    )


def test_no_new_place_reads_a_fact_out_of_a_sentence():
    counts = Counter({module: n for module, source in _modules() if (n := len(list(text_reads(source))))})
    grown = {m: (n, READS_TEXT.get(m, 0)) for m, n in counts.items() if n > READS_TEXT.get(m, 0)}
    assert grown == {}, (
        "module: (places reading a text, places known). Carry the fact as a value (a field, an "
        f"enum, an error type) instead of reading it back from the words: {grown}"
    )
    # The list shrinks with the code: a module that reads fewer texts than listed is listed lower.
    assert {m: n for m, n in READS_TEXT.items() if counts.get(m, 0) < n} == {}


PLANTED_COMPARISON = """
def shown(row, entry, review):
    if row.status == "completed" or entry.kind in ("hosted", "local"):
        return review.verdict != "skip"
"""

PLANTED_READS = """
def exit_code(exc):
    message = str(exc)
    return 3 if message.startswith("refused:") else 2 if "not a shown model" in str(exc) else 0
"""


def test_the_checks_catch_a_planted_comparison_and_a_planted_read():
    words = enum_words()
    found = list(literal_comparisons(PLANTED_COMPARISON, "planted.py", words))
    assert found == [
        "planted.py:3: row.status == 'completed'",
        "planted.py:3: entry.kind in ('hosted', 'local')",
        "planted.py:4: review.verdict != 'skip'",
    ]
    assert list(literal_comparisons('def f(x):\n    return x.status == "running"\n', "m.py", words))
    assert not list(literal_comparisons('def f(x):\n    return x.name == "running"\n', "m.py", words))
    assert list(text_reads(PLANTED_READS)) == [4, 4]
    assert not list(text_reads("def f(text):\n    return text.split()\n"))


def test_a_key_refusal_keeps_its_detail_apart_from_the_models_name():
    from compare_tui.catalogue.errors import ModelRefused

    refused = ModelRefused.about("gpt-mini", "$MY_KEY is not set; export it")
    assert str(refused) == "model 'gpt-mini': $MY_KEY is not set; export it"
    assert refused.detail == "$MY_KEY is not set; export it" and refused.model == "gpt-mini"


def test_a_structured_judge_reply_without_a_verdict_is_told_by_the_parsers_flag():
    from types import SimpleNamespace

    from compare_tui.judge.prompt.parse import parse_grade_reply
    from compare_tui.judge.run.runner import unparseable_problem

    judging = SimpleNamespace(kind="grade", reply_form="structured")
    reply = SimpleNamespace(finish_reason="stop", completion_tokens=9)
    none_found = parse_grade_reply("I think it is fine.")
    assert none_found.no_verdict_found and none_found.verdict is None
    said = unparseable_problem(judging, reply, none_found)
    assert said == "the judge's reply is not the JSON object with a `verdict` it was asked for: …I think it is fine."
    not_allowed = parse_grade_reply('{"verdict": "maybe"}')
    assert not not_allowed.no_verdict_found and unparseable_problem(judging, reply, not_allowed) == not_allowed.problem

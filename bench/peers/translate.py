"""Translate golden-set tasks into the same checks for compare-tui, inspect_ai and promptfoo.

Run with the project's interpreter (it loads sets through `compare_tui.goldset`, so the
translation sees exactly what the engine sees)::

    .venv/bin/python bench/peers/translate.py xcheck          # correctness cross-check
    .venv/bin/python bench/peers/translate.py speed --tasks 2000

Writes, under `bench/peers/generated/<name>/`: `goldset/` (a compare-tui golden set holding
only the translated tasks, scorers inlined), `inspect_task.py` + `samples.json` (one inspect_ai
Task) and `promptfooconfig.yaml` (JSON, which YAML reads). Never edit these by hand.

Only tasks whose scorer both peers can express are translated: `exact` (with normalisation),
`regex` (search / fullmatch, flags) and `json` (schema + field equality). Skipped: `tool_call`,
`command`, `human`, tasks with `tools` or `response_format` (neither peer takes those per
sample without custom providers). How each kind is expressed:

| kind  | inspect_ai                                   | promptfoo                                  |
|-------|----------------------------------------------|--------------------------------------------|
| exact | built-in `exact()` scorer                    | `javascript` assertion: casefold, strip \\p{P}, collapse whitespace |
| regex | custom scorer, Python `re` (same as ours)    | built-in `regex` (JS RegExp; fullmatch as `^(?:…)$`, flags as JS flags) |
| json  | custom scorer: parse, jsonschema, fields     | built-in `contains-json` (ajv schema) + `javascript` field equality |
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from compare_tui.goldset import load_golden_set  # noqa: E402

HERE = Path(__file__).resolve().parent
GENERATED = HERE / "generated"
XCHECK_SETS = ("support-triage", "order-extraction")
MAX_TOKENS = 64  # one cap for every task and every tool (support-triage's manifest value)
_JS_FLAGS = {"IGNORECASE": "i", "MULTILINE": "m", "DOTALL": "s"}

# ------------------------------------------------------------------ selection


def _translatable(task, scorer) -> str | None:
    """Why `task` cannot be translated, or None when it can."""
    if scorer.kind not in ("exact", "regex", "json"):
        return f"scorer kind {scorer.kind!r} has no equivalent in both peers"
    if task.input.tools or task.input.response_format is not None:
        return "per-task tools / response_format cannot be carried by an inspect_ai Sample"
    if scorer.kind == "regex" and set(scorer.flags) - set(_JS_FLAGS):
        return f"regex flags {scorer.flags} have no JS equivalent"
    return None


def select_xcheck() -> tuple[list[dict], list[tuple[str, str]]]:
    """Portable task records (id, messages, expected, scorer) and the skipped (id, why)."""
    tasks, skipped = [], []
    for name in XCHECK_SETS:
        gset = load_golden_set(ROOT / "sample_sets" / name)
        for task in gset.tasks:
            scorer = task.scorer or gset.manifest.default_scorer
            why = _translatable(task, scorer)
            if why:
                skipped.append((f"{name}/{task.id}", why))
                continue
            tasks.append(
                {
                    "id": task.id,
                    "source": name,
                    "messages": task.input.chat_messages(),
                    "expected": task.expected.model_dump(by_alias=True, exclude_none=True),
                    "scorer": scorer.model_dump(by_alias=True, exclude_none=True),
                }
            )
    return tasks, skipped


def speed_tasks(n: int) -> list[dict]:
    """`n` distinct small exact-match tasks; the zero-delay server answers "The quick brown fox."."""
    return [
        {
            "id": f"speed-{i:05d}",
            "source": "synthetic",
            "messages": [
                {"role": "system", "content": "Repeat the sentence exactly."},
                {"role": "user", "content": f"Sentence {i}: the quick brown fox."},
            ],
            "expected": {"text": "the quick brown fox"},
            "scorer": {"kind": "exact", "normalize": ["case", "whitespace", "punctuation"]},
        }
        for i in range(n)
    ]


# ------------------------------------------------------------------ compare-tui


def write_goldset(out: Path, name: str, tasks: list[dict], max_tokens: int = MAX_TOKENS) -> Path:
    folder = out / "goldset"
    shutil.rmtree(folder, ignore_errors=True)
    (folder / "tasks").mkdir(parents=True)
    (folder / "golden.toml").write_text(
        f'workload_id = "peers-{name}"\nname = "Peer comparison: {name}"\nversion = "1.0.0"\n'
        '[default_scorer]\nkind = "exact"\nnormalize = ["case", "whitespace", "punctuation"]\n'
        f"[run]\nattempts = 1\ntemperature = 0.0\nmax_tokens = {max_tokens}\n"
    )
    for t in tasks:
        body = {"id": t["id"], "input": {"messages": t["messages"]}, "expected": t["expected"], "scorer": t["scorer"]}
        (folder / "tasks" / f"{t['id']}.json").write_text(json.dumps(body, indent=1, ensure_ascii=False))
    return folder


# ------------------------------------------------------------------ inspect_ai

_INSPECT_TASK = '''"""GENERATED by bench/peers/translate.py: do not edit."""
import json
import re
from pathlib import Path

import jsonschema
from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.model import ChatMessageAssistant, ChatMessageSystem, ChatMessageUser
from inspect_ai.scorer import CORRECT, INCORRECT, Score, Target, accuracy, exact, scorer
from inspect_ai.solver import generate

_ROLES = {"system": ChatMessageSystem, "user": ChatMessageUser, "assistant": ChatMessageAssistant}
_FLAGS = {"IGNORECASE": re.I, "MULTILINE": re.M, "DOTALL": re.S}


def _find_json(text):
    try:
        return json.loads(text.strip())
    except ValueError:
        pass
    decoder = json.JSONDecoder()
    for i, ch in enumerate(text):
        if ch in "{[":
            try:
                return decoder.raw_decode(text, i)[0]
            except ValueError:
                continue
    raise ValueError("no JSON")


@scorer(metrics=[accuracy()])
def golden_scorer():
    """Dispatch on the sample's translated scorer: inspect's own exact(), else Python re / jsonschema."""
    builtin_exact = exact()

    async def score(state, target: Target):
        spec, text = state.metadata["scorer"], state.output.completion
        if spec["kind"] == "exact":
            return await builtin_exact(state, target)
        if spec["kind"] == "regex":
            flags = 0
            for f in spec.get("flags", []):
                flags |= _FLAGS[f]
            pat = re.compile(spec["pattern"], flags)
            ok = (pat.fullmatch if spec.get("mode", "search") == "fullmatch" else pat.search)(text)
            return Score(value=CORRECT if ok else INCORRECT, answer=text)
        try:
            value = _find_json(text)
        except ValueError:
            return Score(value=INCORRECT, answer=text, explanation="no JSON")
        if spec.get("schema") is not None:
            errors = list(jsonschema.Draft202012Validator(spec["schema"]).iter_errors(value))
            if errors:
                return Score(value=INCORRECT, answer=text, explanation=errors[0].message)
        want = state.metadata["expected"].get("json")
        for field in spec.get("fields", []):
            if not isinstance(value, dict) or value.get(field, object()) != want[field]:
                return Score(value=INCORRECT, answer=text, explanation=f"field {field}")
        return Score(value=CORRECT, answer=text)

    return score


@task
def golden():
    records = json.loads((Path(__file__).parent / "samples.json").read_text())
    samples = [
        Sample(id=r["id"], input=[_ROLES[m["role"]](content=m["content"]) for m in r["messages"]],
               target=r["expected"].get("text") or json.dumps(r["expected"].get("json")),
               metadata={"scorer": r["scorer"], "expected": r["expected"]})
        for r in records
    ]
    return Task(dataset=samples, solver=generate(), scorer=golden_scorer())
'''


def write_inspect(out: Path, tasks: list[dict]) -> Path:
    (out / "samples.json").write_text(json.dumps(tasks, ensure_ascii=False))
    path = out / "inspect_task.py"
    path.write_text(_INSPECT_TASK)
    return path


# ------------------------------------------------------------------ promptfoo

_JS_FIND_JSON = (
    "const find = t => { try { return JSON.parse(t.trim()); } catch (e) {} "
    "for (let i = 0; i < t.length; i++) { if (t[i] !== '{' && t[i] !== '[') continue; "
    "for (let j = t.length; j > i; j--) { try { return JSON.parse(t.slice(i, j)); } catch (e) {} } } "
    "return undefined; };"
)


def _assertions(t: dict) -> list[dict]:
    spec = t["scorer"]
    if spec["kind"] == "exact":
        opts = set(spec.get("normalize", []))
        steps = ["let s = String(x);"]
        if "case" in opts:
            steps.append("s = s.toLowerCase();")
        if "punctuation" in opts:
            steps.append("s = s.replace(/\\p{P}/gu, '');")
        if "whitespace" in opts:
            steps.append("s = s.split(/\\s+/).filter(Boolean).join(' ');")
        norm = "const n = x => { " + " ".join(steps) + " return s; };"
        return [
            {"type": "javascript", "value": f"{norm}\nreturn n(output) === n({json.dumps(t['expected']['text'])});"}
        ]
    if spec["kind"] == "regex":
        pattern = spec["pattern"]
        if spec.get("mode", "search") == "fullmatch":
            pattern = f"^(?:{pattern})$"
        flags = "".join(_JS_FLAGS[f] for f in spec.get("flags", []))
        if not flags:
            return [{"type": "regex", "value": pattern}]
        return [
            {
                "type": "javascript",
                "value": f"// regex with flags\nreturn new RegExp({json.dumps(pattern)}, {json.dumps(flags)}).test(output);",
            }
        ]
    out: list[dict] = [{"type": "contains-json", **({"value": spec["schema"]} if spec.get("schema") else {})}]
    if spec.get("fields"):
        want = {f: t["expected"]["json"][f] for f in spec["fields"]}
        out.append(
            {
                "type": "javascript",
                "value": (
                    f"{_JS_FIND_JSON}\nconst v = find(output); const want = {json.dumps(want, ensure_ascii=False)}; "
                    "\nreturn v !== null && typeof v === 'object' && !Array.isArray(v) && "
                    "Object.keys(want).every(k => JSON.stringify(v[k]) === JSON.stringify(want[k]));"
                ),
            }
        )
    return out


def write_promptfoo(
    out: Path, tasks: list[dict], *, base_url: str, model: str, temperature: float = 0.0, max_tokens: int = MAX_TOKENS
) -> Path:
    """A promptfoo config: one chat prompt (the task's messages), one provider, one test per task.

    `base_url`/`model` can be overridden at run time with the env vars PEERS_BASE_URL /
    PEERS_MODEL (promptfoo expands `{{ env.X }}` in provider config)."""
    config = {
        "description": f"compare-tui peer benchmark ({out.name})",
        "prompts": ["{{ messages | dump }}"],
        "providers": [
            {
                "id": f"openai:chat:{model}",
                "label": "llama",
                "config": {
                    "apiBaseUrl": base_url,
                    "apiKey": "sk-none-local",
                    "temperature": temperature,
                    "max_tokens": max_tokens,
                },
            }
        ],
        "tests": [
            {"description": t["id"], "vars": {"messages": t["messages"]}, "assert": _assertions(t)} for t in tasks
        ],
    }
    path = out / "promptfooconfig.yaml"
    path.write_text(json.dumps(config, indent=1, ensure_ascii=False))
    return path


# ------------------------------------------------------------------ main


def generate(name: str, tasks: list[dict], base_url: str, model: str, max_tokens: int = MAX_TOKENS) -> Path:
    out = GENERATED / name
    out.mkdir(parents=True, exist_ok=True)
    write_goldset(out, name, tasks, max_tokens)
    write_inspect(out, tasks)
    write_promptfoo(out, tasks, base_url=base_url, model=model, max_tokens=max_tokens)
    (out / "tasks.json").write_text(
        json.dumps([{"id": t["id"], "source": t["source"], "kind": t["scorer"]["kind"]} for t in tasks], indent=1)
    )
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("which", choices=["xcheck", "speed"])
    ap.add_argument("--tasks", type=int, default=2000, help="speed set size")
    ap.add_argument("--base-url", default="http://127.0.0.1:8080/v1")
    ap.add_argument("--model", default="smollm2-135m")
    ap.add_argument("--max-tokens", type=int, default=MAX_TOKENS)
    args = ap.parse_args(argv)
    if args.which == "xcheck":
        tasks, skipped = select_xcheck()
        out = generate("xcheck", tasks, args.base_url, args.model, args.max_tokens)
        (out / "skipped.json").write_text(json.dumps(skipped, indent=1))
        print(f"{out}: {len(tasks)} tasks translated, {len(skipped)} skipped")
        for tid, why in skipped:
            print(f"  skipped {tid}: {why}")
    else:
        out = generate(f"speed-{args.tasks}", speed_tasks(args.tasks), args.base_url, args.model, args.max_tokens)
        print(f"{out}: {args.tasks} tasks")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

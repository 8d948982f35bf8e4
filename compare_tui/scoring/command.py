"""The `command` scorer: the user's own program decides, run in the sandbox.

What the program gets (its contract, stable for people writing checks):
- cwd: a fresh temporary directory, removed afterwards, holding
  `answer.txt` (the rendered answer: text, then `[tool call] name(args)` lines),
  `answer.json` ({"text", "tool_calls": [{"name", "arguments", "id"}], "reasoning"}),
  `expected.json` (the task's `expected` table by its field names: text, json, tool_call),
  `task.json` (the whole task);
- stdin: the rendered answer (same bytes as answer.txt);
- env: PATH, LANG/LC_ALL=C.UTF-8, HOME=TMPDIR=cwd, and COMPARE_TUI_ANSWER,
  COMPARE_TUI_ANSWER_JSON, COMPARE_TUI_EXPECTED, COMPARE_TUI_TASK (absolute paths of the files),
  COMPARE_TUI_WORKDIR, COMPARE_TUI_TASK_ID, COMPARE_TUI_SET_ROOT;
- argv: `run`, where an entry naming a file inside the set folder becomes its absolute path.
Exit 0 = pass, 1 = fail, anything else (or a signal, or a limit) = error.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from compare_tui.goldset.models import CommandScorer, Task
from compare_tui.scoring.result import Answer, Outcome, ScoreResult
from compare_tui.scoring.sandbox import Limits, SandboxResult, run_sandboxed

_TAIL_CHARS = 2000


def resolve_argv(run: list[str], set_root: Path) -> list[str]:
    """`run` with each relative entry that names an existing file inside `set_root` replaced
    by its absolute path. Entries escaping the folder (`../x`, symlinks out) stay as written."""
    root = set_root.resolve()
    resolved = []
    for arg in run:
        if arg and not os.path.isabs(arg) and not arg.startswith("-"):
            try:
                candidate = (root / arg).resolve()
                if candidate.is_relative_to(root) and candidate.is_file():
                    resolved.append(str(candidate))
                    continue
            except (OSError, ValueError):
                pass  # not a usable path (e.g. a NUL byte): pass it through unchanged
        resolved.append(arg)
    return resolved


def sandbox_files(task: Task, answer: Answer) -> dict[str, bytes]:
    """The files a command scorer finds in its working directory, by name."""
    answer_json = {
        "text": answer.text,
        "tool_calls": [{"name": c.name, "arguments": c.arguments, "id": c.id} for c in answer.tool_calls],
        "reasoning": answer.reasoning,
    }

    def dump(value: Any) -> bytes:
        return json.dumps(value, ensure_ascii=False, indent=2).encode()

    return {
        "answer.txt": answer.rendered().encode(),
        "answer.json": dump(answer_json),
        "expected.json": dump(task.expected.model_dump(by_alias=True, mode="json")),
        "task.json": dump(task.model_dump(by_alias=True, mode="json", exclude_none=True)),
    }


_ENV_FILES = {
    "COMPARE_TUI_ANSWER": "answer.txt",
    "COMPARE_TUI_ANSWER_JSON": "answer.json",
    "COMPARE_TUI_EXPECTED": "expected.json",
    "COMPARE_TUI_TASK": "task.json",
}


def _tail(data: bytes) -> str:
    text = data.decode("utf-8", errors="replace")
    return text[-_TAIL_CHARS:]


def _last_line(result: SandboxResult) -> str:
    for stream in (result.stdout, result.stderr):
        lines = [line.strip() for line in stream.decode("utf-8", errors="replace").splitlines() if line.strip()]
        if lines:
            return lines[-1][:200]
    return ""


def score_command(
    task: Task, spec: CommandScorer, answer: Answer, set_root: Path, *, limits: Limits | None = None
) -> ScoreResult:
    """Run the spec's program in the sandbox and map its exit to an outcome.

    `ScoreResult.isolation` lists what was in force; `data` holds argv, exit_code, signal,
    duration_s, limit_hit, stdout/stderr tails (last 2000 characters of what was kept) and
    truncation flags. The detail is the reason plus the program's last output line."""
    argv = resolve_argv(spec.run, set_root)
    rendered = answer.rendered().encode()
    result = run_sandboxed(
        argv,
        files=sandbox_files(task, answer),
        stdin=rendered,
        timeout_s=spec.timeout_s,
        limits=limits or Limits(),
        env_files=_ENV_FILES,
        extra_env={"COMPARE_TUI_TASK_ID": task.id, "COMPARE_TUI_SET_ROOT": str(set_root.resolve())},
    )
    data = {
        "argv": argv,
        "exit_code": result.exit_code,
        "signal": result.signal,
        "duration_s": round(result.duration_s, 4),
        "limit_hit": result.limit_hit,
        "stdout_tail": _tail(result.stdout),
        "stderr_tail": _tail(result.stderr),
        "stdout_truncated": result.stdout_truncated,
        "stderr_truncated": result.stderr_truncated,
    }
    said = _last_line(result)
    suffix = f": {said}" if said else ""
    reason = result.error_reason
    if reason is not None:
        return ScoreResult(Outcome.ERROR, f"command error, {reason}{suffix}", data, result.isolation)
    if result.exit_code == 0:
        return ScoreResult(Outcome.PASS, f"command passed{suffix}", data, result.isolation)
    return ScoreResult(Outcome.FAIL, f"command failed{suffix}", data, result.isolation)

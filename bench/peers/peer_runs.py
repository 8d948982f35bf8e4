"""Run each tool once as a child process and read back what it decided, per task.

Each `run_*` returns the exact argv, the measurement of the child (wall seconds, client CPU
seconds and peak RSS from `os.wait4`'s rusage, so only the harness and what it spawned is
counted, never the server) and, with `parse=True`, `{task_id: (outcome, answer)}`."""

from __future__ import annotations

import glob
import json
import os
import sqlite3
import subprocess
import time
from pathlib import Path

from peer_envs import NODE_PREFIX, inspect_python, promptfoo_bin

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
WORK = HERE / "work"
PROJECT_PY = ROOT / ".venv" / "bin" / "python"


def measured(argv: list[str], env: dict[str, str], cwd: Path = ROOT, log: Path | None = None) -> dict:
    """Run argv to completion; wall time, CPU seconds (user+sys) and peak RSS of the child tree."""
    out = open(log, "w") if log else subprocess.DEVNULL
    t0 = time.perf_counter()
    proc = subprocess.Popen([str(a) for a in argv], env=env, cwd=cwd, stdout=out, stderr=subprocess.STDOUT)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    if log:
        out.close()
    return {
        "argv": [str(a) for a in argv],
        "rc": proc.returncode,
        "wall_s": wall,
        "cpu_s": usage.ru_utime + usage.ru_stime,
        "peak_rss_mib": usage.ru_maxrss / 1024,
    }


def _base_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith(("COMPARE_TUI_", "OPENAI_", "PROMPTFOO_"))}


# ------------------------------------------------------------------ compare-tui


def run_compare_tui(gen: Path, catalogue: Path, model: str, concurrency: int, tag: str, parse: bool = True) -> dict:
    store = WORK / f"{tag}.sqlite"
    for suffix in ("", "-wal", "-shm"):
        Path(f"{store}{suffix}").unlink(missing_ok=True)
    env = _base_env() | {"COMPARE_TUI_STATE_DIR": str(WORK / "state")}
    argv = [
        PROJECT_PY,
        "-m",
        "compare_tui",
        "run",
        gen / "goldset",
        "--model",
        model,
        "--models",
        catalogue,
        "--store",
        store,
        "--concurrency",
        concurrency,
        "--timeout",
        900,
        "--json",
    ]
    result = measured(argv, env, log=WORK / f"{tag}.log")
    if parse:
        with sqlite3.connect(store) as db:
            rows = db.execute("select task_id, outcome, answer_text from attempts").fetchall()
        result["tasks"] = {t: (o, a) for t, o, a in rows}
    return result


# ------------------------------------------------------------------ inspect_ai


def run_inspect(
    gen: Path, base_url: str, model: str, concurrency: int, max_tokens: int, tag: str, parse: bool = True
) -> dict:
    logs = WORK / f"{tag}-inspect-logs"
    subprocess.run(["rm", "-rf", logs])
    env = _base_env() | {
        "LLAMACPP_BASE_URL": base_url,
        "LLAMACPP_API_KEY": "sk-none-local",
        "INSPECT_LOG_DIR": str(logs),
    }
    argv = [
        inspect_python().parent / "inspect",
        "eval",
        "inspect_task.py",  # inspect needs a relative path
        "--model",
        f"openai-api/llamacpp/{model}",
        "--temperature",
        0,
        "--max-tokens",
        max_tokens,
        "--max-connections",
        concurrency,
        "--max-samples",
        concurrency,
        "--timeout",
        900,
        "--log-dir",
        logs,
        "--log-format",
        "json",
        "--display",
        "none",
    ]
    result = measured(argv, env, cwd=gen, log=WORK / f"{tag}.log")
    if parse:
        [path] = glob.glob(str(logs / "*.json"))
        log = json.loads(Path(path).read_text())
        tasks = {}
        for s in log.get("samples", []):
            score = (s.get("scores") or {}).get("golden_scorer") or {}
            if s.get("error"):
                tasks[str(s["id"])] = ("error", str(s["error"])[:200])
            else:
                outcome = {"C": "pass", "I": "fail"}.get(score.get("value"), f"?{score.get('value')}")
                tasks[str(s["id"])] = (outcome, score.get("answer") or s["output"].get("completion", ""))
        result["tasks"] = tasks
    return result


# ------------------------------------------------------------------ promptfoo


def run_promptfoo(gen: Path, concurrency: int, tag: str, parse: bool = True) -> dict:
    out = WORK / f"{tag}-promptfoo.json"
    out.unlink(missing_ok=True)
    home = WORK / "promptfoo-home"
    home.mkdir(parents=True, exist_ok=True)
    env = _base_env() | {
        "PROMPTFOO_CONFIG_DIR": str(home),
        "PROMPTFOO_DISABLE_TELEMETRY": "1",
        "PROMPTFOO_DISABLE_UPDATE": "1",
        "PROMPTFOO_DISABLE_SHARING": "1",
        "REQUEST_TIMEOUT_MS": "900000",
        "OPENAI_API_KEY": "sk-none-local",
        "PATH": f"{NODE_PREFIX / 'node_modules' / '.bin'}:{os.environ['PATH']}",
    }
    argv = [
        promptfoo_bin(),
        "eval",
        "-c",
        gen / "promptfooconfig.yaml",
        "--max-concurrency",
        concurrency,
        "--no-cache",
        "--no-progress-bar",
        "--no-table",
        "--output",
        out,
    ]
    result = measured(argv, env, log=WORK / f"{tag}.log")
    if parse:
        data = json.loads(out.read_text())
        tasks = {}
        for r in data["results"]["results"]:
            tid = r["testCase"].get("description") or r.get("description")
            answer = (r.get("response") or {}).get("output")
            if r.get("error") and answer is None:
                tasks[tid] = ("error", str(r["error"])[:200])
            else:
                tasks[tid] = (
                    "pass" if r.get("success") else "fail",
                    answer if isinstance(answer, str) else json.dumps(answer),
                )
        result["tasks"] = tasks
    return result

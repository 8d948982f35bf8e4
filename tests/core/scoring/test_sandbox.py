"""Every guarantee of the command sandbox (compare_tui/scoring/sandbox.py), one test each."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from compare_tui.goldset.models import CommandScorer, Task
from compare_tui.scoring import Answer, Limits, Outcome, ToolCall, network_namespace, run_sandboxed, score_command
from compare_tui.scoring.sandbox import SAFE_PATH

PY = [sys.executable, "-I", "-S", "-c"]
"""Run test programs with this interpreter (absolute path: the sandbox PATH is fixed)."""


def py(code: str, *args: str, timeout_s: float = 10, limits: Limits = Limits(), **kw):
    return run_sandboxed([*PY, code, *args], files=kw.pop("files", {}), timeout_s=timeout_s, limits=limits, **kw)


def make_task(**expected) -> Task:
    return Task.model_validate({"id": "t-1", "input": {"prompt": "Say hi"}, "expected": expected or {"text": "hi"}})


def dead(pid: int, within_s: float = 3.0) -> bool:
    """True once `pid` no longer runs (gone, or a zombie waiting for its reaper)."""
    end = time.monotonic() + within_s
    while time.monotonic() < end:
        try:
            with open(f"/proc/{pid}/stat") as stat:
                if stat.read().rsplit(")", 1)[1].split()[0] == "Z":
                    return True
        except FileNotFoundError:
            return True
        time.sleep(0.05)
    return False


# ---------------------------------------------------------------- working directory and files


def test_fresh_tempdir_as_cwd_holds_files_and_is_removed_afterwards():
    code = "import os, json; print(json.dumps({'cwd': os.getcwd(), 'ls': sorted(os.listdir('.'))}))"
    first = json.loads(py(code, files={"a.txt": b"x"}).stdout)
    second = json.loads(py(code).stdout)
    assert first["ls"] == ["a.txt"] and second["ls"] == []
    assert first["cwd"] != second["cwd"]
    assert not os.path.exists(first["cwd"]) and not os.path.exists(second["cwd"])


def test_tempdir_removed_even_when_the_program_makes_it_read_only():
    code = "import os; os.mkdir('d'); open('d/f','w').close(); os.chmod('d', 0o500); print(os.getcwd())"
    result = py(code)
    assert result.exit_code == 0 and not os.path.exists(result.stdout.decode().strip())


def test_command_scorer_gets_answer_expected_and_task_files_and_stdin(tmp_path: Path):
    code = (
        "import json, os, sys\n"
        "env = {k: v for k, v in os.environ.items() if k.startswith('COMPARE_TUI_')}\n"
        "files = {n: open(n).read() for n in ('answer.txt', 'answer.json', 'expected.json', 'task.json')}\n"
        "same = all(os.path.samefile(env[k], f) for k, f in [('COMPARE_TUI_ANSWER', 'answer.txt'),"
        " ('COMPARE_TUI_ANSWER_JSON', 'answer.json'), ('COMPARE_TUI_EXPECTED', 'expected.json'),"
        " ('COMPARE_TUI_TASK', 'task.json')])\n"
        "print(json.dumps({'stdin': sys.stdin.read(), 'files': files, 'env': env, 'same': same}))\n"
    )
    (tmp_path / "check.py").write_text(code)
    spec = CommandScorer(kind="command", run=[sys.executable, "-I", "-S", "check.py"])
    answer = Answer(text="hello", tool_calls=(ToolCall("lookup", '{"b": 1, "a": 2}', id="c1"),), reasoning="hmm")
    result = score_command(make_task(text="hello"), spec, answer, tmp_path)
    assert result.outcome is Outcome.PASS, result.detail
    seen = json.loads(result.data["stdout_tail"])
    assert seen["stdin"] == answer.rendered() == seen["files"]["answer.txt"]
    assert seen["stdin"] == 'hello\n[tool call] lookup({"a":2,"b":1})'
    assert json.loads(seen["files"]["answer.json"]) == {
        "text": "hello",
        "tool_calls": [{"name": "lookup", "arguments": '{"b": 1, "a": 2}', "id": "c1"}],
        "reasoning": "hmm",
    }
    assert json.loads(seen["files"]["expected.json"]) == {"text": "hello", "json": None, "tool_call": None}
    assert json.loads(seen["files"]["task.json"])["id"] == "t-1"
    assert seen["same"] is True
    assert seen["env"]["COMPARE_TUI_TASK_ID"] == "t-1"
    assert seen["env"]["COMPARE_TUI_SET_ROOT"] == str(tmp_path.resolve())
    assert result.data["argv"][-1] == str((tmp_path / "check.py").resolve())


def test_bad_file_names_and_env_names_are_refused():
    with pytest.raises(ValueError):
        run_sandboxed(["true"], files={"../x": b""}, timeout_s=1)
    with pytest.raises(ValueError):
        run_sandboxed(["true"], files={}, timeout_s=1, extra_env={"LD_PRELOAD": "x"})


# ---------------------------------------------------------------- environment


def test_environment_is_an_allow_list_and_parent_secrets_are_not_visible(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-secret-value")
    monkeypatch.setenv("COMPARE_TUI_KEY", "virtual-secret-value")
    monkeypatch.setenv("LD_PRELOAD", "/nonexistent.so")
    result = py(
        "import os, json; print(json.dumps(dict(os.environ)))", env_files={"COMPARE_TUI_A": "a"}, files={"a": b""}
    )
    env = json.loads(result.stdout)
    assert b"secret-value" not in result.stdout
    assert set(env) <= {"PATH", "LANG", "LC_ALL", "HOME", "TMPDIR", "COMPARE_TUI_WORKDIR", "COMPARE_TUI_A"}
    assert env["PATH"] == SAFE_PATH and env["LANG"] == env["LC_ALL"] == "C.UTF-8"
    assert env["HOME"] == env["TMPDIR"] == env["COMPARE_TUI_WORKDIR"] == os.path.dirname(env["COMPARE_TUI_A"])
    assert result.isolation["clean_env"] is True


# ---------------------------------------------------------------- time limit and process group


def test_timeout_kills_the_whole_process_group_including_a_sleeping_grandchild(tmp_path: Path):
    pid_file = tmp_path / "grandchild.pid"
    code = (
        "import subprocess, sys, time\n"
        "p = subprocess.Popen(['sleep', '1000'])\n"
        "open(sys.argv[1], 'w').write(str(p.pid))\n"
        "time.sleep(1000)\n"
    )
    started = time.monotonic()
    result = py(code, str(pid_file), timeout_s=1.0)
    assert time.monotonic() - started < 5
    assert result.limit_hit == "timeout" and "timeout after 1s" in result.error_reason
    assert dead(int(pid_file.read_text()))
    assert result.isolation["process_group_kill"] is True


def test_background_grandchild_dies_when_the_program_exits_normally(tmp_path: Path):
    pid_file = tmp_path / "grandchild.pid"
    code = "import subprocess, sys\np = subprocess.Popen(['sleep', '1000'])\nopen(sys.argv[1], 'w').write(str(p.pid))\n"
    started = time.monotonic()
    result = py(code, str(pid_file))
    assert result.exit_code == 0 and result.error_reason is None
    assert time.monotonic() - started < 3  # did not wait for the grandchild's inherited pipes
    assert dead(int(pid_file.read_text()))


def test_program_that_closes_its_pipes_and_keeps_running_times_out():
    code = "import os, time; os.close(1); os.close(2); time.sleep(1000)"
    result = py(code, timeout_s=0.5)
    assert result.limit_hit == "timeout"


def test_unread_large_stdin_does_not_block():
    result = py("print('ok')", stdin=b"x" * (4 << 20), timeout_s=5)
    assert result.exit_code == 0 and result.stdout == b"ok\n"


# ---------------------------------------------------------------- resource limits


def test_rlimits_are_set_in_the_child():
    code = (
        "import resource as r, json\n"
        "print(json.dumps({n: r.getrlimit(getattr(r, 'RLIMIT_' + n)) for n in ('CPU','AS','FSIZE','CORE','NPROC')}))"
    )
    result = py(code, timeout_s=3, limits=Limits(address_space_bytes=1 << 30, file_size_bytes=16 << 20, nproc=256))
    got = json.loads(result.stdout)
    assert got["CPU"] == [4, 5] and got["AS"] == [1 << 30] * 2 and got["FSIZE"] == [16 << 20] * 2
    assert got["CORE"] == [0, 0] and got["NPROC"] == [256, 256]
    assert result.isolation["rlimits"] == "cpu,as,fsize,core,nproc"


def test_nproc_limit_is_reported_honestly():
    result = py("pass")
    assert result.isolation["nproc_limit"] is (os.getuid() != 0 and "CAP" not in result.isolation["nproc_note"])
    if os.getuid() == 0:
        assert "root" in result.isolation["nproc_note"]


def test_cpu_limit_kills_a_busy_loop():
    result = py("while True: pass", timeout_s=30, limits=Limits(cpu_s=1))  # generous: the CI box may be loaded
    assert result.signal is not None and "CPU time limit" in result.error_reason


def test_file_size_limit_stops_a_large_write():
    result = run_sandboxed(
        ["sh", "-c", "exec head -c 2000000 /dev/zero > big"],
        files={},
        timeout_s=5,
        limits=Limits(file_size_bytes=1 << 20),
    )
    assert "file size limit" in result.error_reason


def test_address_space_limit_refuses_a_large_allocation():
    code = "try:\n    b = bytearray(600 << 20)\nexcept MemoryError:\n    raise SystemExit(0)\nraise SystemExit(1)"
    assert py(code, limits=Limits(address_space_bytes=300 << 20)).exit_code == 0


# ---------------------------------------------------------------- output capture


def test_output_is_capped_per_stream_and_flagged():
    code = "import sys; sys.stdout.write('a' * 200000); sys.stderr.write('b' * 100)"
    result = py(code, limits=Limits(stdout_cap_bytes=1000))
    assert result.exit_code == 0 and result.error_reason is None
    assert result.stdout == b"a" * 1000 and result.stdout_truncated
    assert result.stderr == b"b" * 100 and not result.stderr_truncated


def test_printing_forever_is_cut_by_the_output_budget():
    started = time.monotonic()
    result = run_sandboxed(["sh", "-c", "yes >&2"], files={}, timeout_s=30, limits=Limits(output_budget_bytes=2 << 20))
    assert time.monotonic() - started < 10
    assert result.limit_hit == "output" and "output budget" in result.error_reason
    assert len(result.stderr) == 64 << 10 and result.stderr_truncated


# ---------------------------------------------------------------- network


CONNECT = (
    "import socket, sys\n"
    "try:\n"
    "    socket.create_connection(('127.0.0.1', int(sys.argv[1])), timeout=2).close()\n"
    "except OSError as exc:\n"
    "    print(type(exc).__name__, exc.errno); raise SystemExit(1)\n"
    "print('connected')\n"
)


@pytest.fixture
def loopback_server():
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(4)
    server.settimeout(0.3)
    yield server
    server.close()


def test_network_namespace_blocks_a_loopback_server_started_by_the_test(loopback_server):
    if not network_namespace().available:
        pytest.skip(f"no network namespace here: {network_namespace().how}")
    result = py(CONNECT, str(loopback_server.getsockname()[1]))
    assert result.exit_code == 1, result.stdout
    assert result.stdout.split()[0] in (b"ConnectionRefusedError", b"OSError")  # refused / unreachable
    with pytest.raises(TimeoutError):
        loopback_server.accept()
    assert result.isolation["network_namespace"] is True


def test_without_network_isolation_the_same_server_is_reachable(loopback_server):
    result = py(CONNECT, str(loopback_server.getsockname()[1]), limits=Limits(isolate_network=False))
    assert result.stdout == b"connected\n"
    assert result.isolation["network_namespace"] is False
    assert result.isolation["network_namespace_note"] == "not requested"


def test_namespace_probe_is_cached_and_not_run_at_import():
    assert network_namespace() is network_namespace()
    code = (
        "import sys; import compare_tui.scoring as s; from compare_tui.scoring import isolation\n"
        "assert isolation._probed is None, 'probed at import'\n"
        "assert not {'textual', 'rich'} & set(sys.modules), 'UI library imported'\n"
    )
    subprocess.run(
        [sys.executable, "-c", code], check=True, env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    )


# ---------------------------------------------------------------- exit codes and outcomes


@pytest.mark.parametrize(
    ("code", "outcome", "phrase"),
    [
        ("raise SystemExit(0)", Outcome.PASS, "passed"),
        ("print('wrong label'); raise SystemExit(1)", Outcome.FAIL, "failed: wrong label"),
        ("raise SystemExit(3)", Outcome.ERROR, "exit code 3"),
        ("import os, signal; os.kill(os.getpid(), signal.SIGTERM)", Outcome.ERROR, "killed by signal 15 (SIGTERM)"),
    ],
)
def test_exit_status_maps_to_outcome(tmp_path: Path, code: str, outcome: Outcome, phrase: str):
    spec = CommandScorer(kind="command", run=[*PY, code])
    result = score_command(make_task(), spec, Answer(text="hi"), tmp_path)
    assert result.outcome is outcome and phrase in result.detail
    assert result.isolation["tempdir"] is True and result.isolation["note"].startswith("process sandbox")
    assert {"exit_code", "duration_s", "stdout_tail", "stderr_tail"} <= set(result.data)


def test_missing_program_is_an_error_not_a_crash(tmp_path: Path):
    spec = CommandScorer(kind="command", run=["no-such-program-xyz"])
    result = score_command(make_task(), spec, Answer(text="hi"), tmp_path)
    assert result.outcome is Outcome.ERROR and "could not start" in result.detail


def test_argv_entries_outside_the_set_folder_are_not_resolved(tmp_path: Path):
    (tmp_path / "set").mkdir()
    (tmp_path / "outside.py").write_text("")
    (tmp_path / "set" / "check.py").write_text("")
    from compare_tui.scoring import resolve_argv

    argv = resolve_argv(["python3", "check.py", "../outside.py", "-c"], tmp_path / "set")
    assert argv == ["python3", str((tmp_path / "set" / "check.py").resolve()), "../outside.py", "-c"]


def test_concurrent_runs_from_threads_stay_separate():
    # The engine calls the scorer through asyncio.to_thread, so several runs overlap.
    from concurrent.futures import ThreadPoolExecutor

    code = "import sys; print(sys.argv[1]); raise SystemExit(int(sys.argv[1]) % 2)"
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda i: py(code, str(i)), range(8)))
    assert [r.stdout for r in results] == [f"{i}\n".encode() for i in range(8)]
    assert [r.exit_code for r in results] == [i % 2 for i in range(8)]

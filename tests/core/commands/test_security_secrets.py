"""Security checks (issue 12).

1. Planted secrets: a provider-looking key and a virtual key are put where a careless tool
   would pick them up (the environment; the virtual key is the one the catalogue names and
   is really sent), a full run, a refused run and every export are made through the CLI, and
   then every file the tool wrote (store + WAL + shm, state dir, logs, exports, the HOME and
   XDG dirs it was given) is searched: zero hits for either key, plain or JSON-escaped.
2. Loopback only: every server these tests start (the in-thread fake server, the fake server
   as a process) listens on 127.0.0.1 / ::1, asserted from /proc/net/tcp and tcp6 for the
   listening sockets those processes own; so do the local llama-servers of compare-tui's
   command line (`server_cmdline`) and any that are running now.
"""

from __future__ import annotations

import json
import os
import secrets
import socket
import subprocess
from pathlib import Path

import pytest

from compare_tui.cli import main
from compare_tui.local.server import server_cmdline
from tests.core.engine.test_chaos_helpers import ServerProcess, cli, cli_env, task_ids
from tests.support.builders import write_set
from tests.support.fake_openai import FakeServer, text

PROVIDER_KEY = "sk-proj-" + secrets.token_urlsafe(36)
VIRTUAL_KEY = "vk-" + secrets.token_hex(24)


def _catalogue(path: Path, url: str) -> Path:
    entry = """[[model]]
name = "{name}"
kind = "hosted"
endpoint = "{url}"
model = "fake-model"
revision = "2026-12-01"
weights_digest = "sha256:{digest}"
key_env = "{key_env}"
[model.cost]
basis = "token_price"
usd_per_mtok_input = 1.0
usd_per_mtok_output = 2.0
captured = "2026-12-01"
source = "test"
"""
    path.write_text(
        entry.format(name="fake", url=url, digest="0" * 64, key_env="COMPARE_TUI_KEY")
        + entry.format(name="leaky", url=url, digest="1" * 64, key_env="LEAKY_KEY")
    )
    return path


def _needles(key: str) -> list[bytes]:
    return [key.encode(), json.dumps(key).encode()[1:-1], key.encode("utf-16-le")]


def test_planted_keys_appear_in_no_file_the_tool_writes(tmp_path, monkeypatch, capsys):
    written = tmp_path / "written"  # everything the tool may write goes under here
    home, state, exports = written / "home", written / "state", written / "exports"
    for folder in (home, state, exports):
        folder.mkdir(parents=True)
    store = written / "runs.sqlite"
    inputs = tmp_path / "inputs"
    set_path = write_set(inputs / "set", {t: "ok" for t in task_ids(20)})
    env = cli_env(
        state,
        HOME=str(home),
        XDG_DATA_HOME=str(home / "data"),
        XDG_STATE_HOME=str(home / "state"),
        XDG_CACHE_HOME=str(home / "cache"),
        XDG_CONFIG_HOME=str(home / "config"),
        COMPARE_TUI_KEY=VIRTUAL_KEY,
        LEAKY_KEY=PROVIDER_KEY,
        OPENAI_API_KEY=PROVIDER_KEY,
        ANTHROPIC_API_KEY=PROVIDER_KEY,
        HTTP_AUTHORIZATION=f"Bearer {VIRTUAL_KEY}",
    )
    outputs = []

    def run(*args: str) -> subprocess.CompletedProcess:
        # The run is a real process; the rest run in this one (same environment), to save
        # interpreter start-ups.
        if args[0] == "run":
            done = subprocess.run(cli(*args), env=env, capture_output=True, text=True, timeout=120, cwd=written)
        else:
            capsys.readouterr()
            code = main(list(args))
            done = subprocess.CompletedProcess(args, code, *capsys.readouterr())
        outputs.append(done.stdout + done.stderr)
        return done

    for name, value in env.items():
        monkeypatch.setenv(name, value)
    monkeypatch.chdir(written)

    with FakeServer(default=text("ok")) as server:
        models = _catalogue(inputs / "models.toml", server.url)
        full = run("run", str(set_path), "--model", "fake", "--models", str(models), "--store", str(store), "--json")
        assert full.returncode == 0, full.stderr
        refused = run("run", str(set_path), "--model", "leaky", "--models", str(models), "--store", str(store))
        assert refused.returncode == 2 and "provider" in refused.stderr.lower(), refused.stderr
        comparison = json.loads(full.stdout)["comparison"]
        for fmt in ("json", "md", "junit", "text"):
            done = run(
                "report", comparison, "--store", str(store), "--format", fmt, "--out", str(exports / f"report.{fmt}")
            )
            assert done.returncode == 0, done.stderr
        assert run("runs", "list", "--store", str(store), "--json").returncode == 0
        sent = [r.headers.get("authorization") for r in server.requests if r.path.endswith("/chat/completions")]
    # The virtual key was really used (so a leak was possible), the provider key never sent.
    assert sent and set(sent) == {f"Bearer {VIRTUAL_KEY}"}

    files = [p for p in written.rglob("*") if p.is_file()]
    names = {p.name for p in files}
    assert {"runs.sqlite", "report.json", "report.md", "report.junit", "report.text"} <= names
    hits = {
        str(p.relative_to(written)): key_name
        for p in files
        for key_name, key in (("provider", PROVIDER_KEY), ("virtual", VIRTUAL_KEY))
        if any(n in p.read_bytes() for n in _needles(key))
    }
    assert hits == {}, hits
    for out in outputs:  # nor what it printed
        assert PROVIDER_KEY not in out and VIRTUAL_KEY not in out


# ------------------------------------------------------------------ loopback only


def _listening(pid: int) -> list[tuple[str, int]]:
    """(address, port) of every listening TCP socket the process owns, from /proc."""
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    found = []
    for table, family in (("/proc/net/tcp", socket.AF_INET), ("/proc/net/tcp6", socket.AF_INET6)):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            if fields[3] != "0A" or fields[9] not in inodes:  # 0A: LISTEN
                continue
            hex_addr, hex_port = fields[1].split(":")
            raw = bytes.fromhex(hex_addr)
            # /proc prints the address as host-order 32-bit words.
            raw = b"".join(raw[i : i + 4][::-1] for i in range(0, len(raw), 4))
            found.append((socket.inet_ntop(family, raw), int(hex_port, 16)))
    return found


LOOPBACK = {"127.0.0.1", "::1"}


def test_every_server_the_tests_start_listens_on_loopback_only():
    with FakeServer() as in_thread, ServerProcess("scripted") as process, ServerProcess("zero-delay") as zero:
        mine = _listening(os.getpid())
        theirs = _listening(process.pid) + _listening(zero.pid)
    assert in_thread.port in {port for _, port in mine}
    assert {process.port, zero.port} <= {port for _, port in theirs}
    wide = [(a, p) for a, p in mine + theirs if a not in LOOPBACK]
    assert wide == [], f"listening beyond loopback: {wide}"


def test_local_llama_servers_are_told_to_listen_on_loopback_and_do():
    argv = server_cmdline(Path("/m.gguf"), name="m", port=8081, ctx=4096, parallel=4, jinja=True)
    assert argv[argv.index("--host") + 1] == "127.0.0.1"
    running = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmd = (proc / "cmdline").read_bytes().split(b"\0")
            if b"llama-server" in cmd[0] and b"--alias" in cmd:
                running.append((int(proc.name), _listening(int(proc.name))))
        except OSError:
            continue
    for pid, sockets in running:  # whatever compare-tui has started on this machine right now
        assert all(a in LOOPBACK for a, _ in sockets), (pid, sockets)
    if not running:
        pytest.skip("no compare-tui llama-server is running now; its command line was checked")

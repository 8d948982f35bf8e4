"""Store faults a user can meet (issue 12): the disk fills up mid-run, the store's filesystem
is read-only, the file is damaged or someone else's. Each one stops with a clear message,
leaves the store consistent (PRAGMA integrity_check) or untouched, and a run resumes once
the fault is gone. The store-level refusals are in test_store.py; these go through the CLI
as a user meets them, on a real full (16 MiB tmpfs, filled) or read-only filesystem.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import signal
import sqlite3
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from compare_tui.cli import main
from compare_tui.store import Store
from tests.core.engine.test_chaos_helpers import (
    cli,
    cli_env,
    count_attempts,
    first_run_id,
    integrity,
    task_ids,
    write_catalogue,
)
from tests.support.builders import write_set
from tests.support.fake_openai import FakeServer, text


def _mount_tmpfs(where: Path, size: str = "16m") -> None:
    where.mkdir()
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("needs root to mount a small tmpfs (a real full / read-only filesystem)")
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)], capture_output=True, text=True
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")


@pytest.fixture
def small_fs(tmp_path):
    where = tmp_path / "mnt"
    _mount_tmpfs(where)
    yield where
    subprocess.run(["umount", "-l", str(where)], capture_output=True)


def _digests(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir()) if p.is_file()}


@dataclass
class Done:
    returncode: int
    stdout: str
    stderr: str


@pytest.fixture
def in_process(capsys, monkeypatch, tmp_path):
    """`compare-tui ARGS` in this process (no interpreter start-up): what a user would see."""
    monkeypatch.setenv("COMPARE_TUI_STATE_DIR", str(tmp_path / "state"))

    def run(*args: str) -> Done:
        capsys.readouterr()
        code = main(list(args))
        out, err = capsys.readouterr()
        return Done(code, out, err)

    return run


def _resume(in_process, run_id, models, store):
    return in_process("run", "--resume", run_id, "--models", str(models), "--store", str(store), "--json")


def test_disk_full_stops_the_run_clearly_and_it_resumes_when_space_returns(tmp_path, small_fs, in_process):
    ids = task_ids(150)
    set_path = write_set(tmp_path / "set", {t: "ok" for t in ids})
    store = small_fs / "runs.sqlite"
    filler = small_fs / "filler"
    with FakeServer(default=text("ok " * 700)) as server:  # ~2 KB answers: the store grows fast
        models = write_catalogue(tmp_path / "models.toml", server.url)
        Store.open(store).close()
        free = shutil.disk_usage(small_fs).free
        filler.write_bytes(b"\0" * max(0, free - 320 * 1024))  # leave ~320 KiB
        full = in_process(
            "run",
            str(set_path),
            "--model",
            "fake",
            "--models",
            str(models),
            "--store",
            str(store),
            "--concurrency",
            "4",
        )
        assert full.returncode != 0
        assert "disk is full" in full.stderr and "--resume" in full.stderr, full.stderr
        assert "Traceback" not in full.stderr, full.stderr
        run_id = first_run_id(store)
        recorded = count_attempts(store)
        assert 0 < recorded < len(ids)  # it stopped part-way, keeping what it had
        assert integrity(store) == "ok"

        filler.unlink()  # space returns
        resumed = _resume(in_process, run_id, models, store)
    assert resumed.returncode == 0, resumed.stderr
    with Store.open(store) as opened:
        attempts = opened.attempts_for_run(run_id)
        assert opened.get_run(run_id).status == "completed"
    assert sorted(a.task_id for a in attempts) == ids  # each task exactly once
    assert integrity(store) == "ok"


def test_read_only_store_is_refused_clearly_untouched_and_resumes_when_writable(tmp_path, small_fs, in_process):
    ids = task_ids(40)
    set_path = write_set(tmp_path / "set", {t: "ok" for t in ids})
    store = small_fs / "runs.sqlite"
    with FakeServer(default=text("ok", chunk_chars=1, chunk_delay_s=0.03)) as server:
        models = write_catalogue(tmp_path / "models.toml", server.url)
        env = cli_env(tmp_path / "state")
        proc = subprocess.Popen(
            cli(
                "run",
                str(set_path),
                "--model",
                "fake",
                "--models",
                str(models),
                "--store",
                str(store),
                "--concurrency",
                "2",
            ),
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 60
        while count_attempts(store) < 5 and time.monotonic() < deadline:
            time.sleep(0.02)
        proc.send_signal(signal.SIGKILL)  # leaves a WAL and a -shm behind, as a crash does
        proc.wait(30)
        run_id = first_run_id(store)
        before = _digests(small_fs)
        assert subprocess.run(["mount", "-o", "remount,ro", str(small_fs)]).returncode == 0
        try:
            refused = _resume(in_process, run_id, models, store)
            listed = in_process("run", str(set_path), "--model", "fake", "--models", str(models), "--store", str(store))
        finally:
            subprocess.run(["mount", "-o", "remount,rw", str(small_fs)], check=True)
        for done in (refused, listed):
            assert done.returncode != 0
            assert "read-only" in done.stderr or "cannot read or write" in done.stderr, done.stderr
            assert str(store) in done.stderr and "Traceback" not in done.stderr, done.stderr
        assert _digests(small_fs) == before  # nothing written
        resumed = _resume(in_process, run_id, models, store)
    assert resumed.returncode == 0, resumed.stderr
    with Store.open(store) as opened:
        assert sorted(a.task_id for a in opened.attempts_for_run(run_id)) == ids
    assert integrity(store) == "ok"


def _valid_store(path: Path) -> bytes:
    with Store.open(path):
        pass
    return path.read_bytes()


@pytest.mark.parametrize("damage", ["random-bytes", "foreign", "truncated", "zeroed-schema"])
def test_damaged_or_foreign_store_is_refused_by_every_command_and_never_written(tmp_path, damage, in_process):
    store = tmp_path / "runs.sqlite"
    if damage == "random-bytes":
        store.write_bytes(os.urandom(8192))
    elif damage == "foreign":
        with sqlite3.connect(store) as conn:
            conn.execute("CREATE TABLE invoices (n INTEGER, total REAL)")
            conn.execute("INSERT INTO invoices VALUES (1, 9.5)")
        conn.close()
    else:
        good = _valid_store(tmp_path / "good.sqlite")
        if damage == "truncated":
            store.write_bytes(good[: len(good) // 3])
        else:  # the header survives, the schema page is garbage
            store.write_bytes(good[:100] + os.urandom(len(good) - 100))
    before = store.read_bytes()
    set_path = write_set(tmp_path / "set", {"a": "ok"})
    models = write_catalogue(tmp_path / "models.toml", "http://127.0.0.1:9/v1")
    for args in (
        ("run", str(set_path), "--model", "fake", "--models", str(models)),
        ("runs", "list"),
        ("report", "latest"),
    ):
        done = in_process(*args, "--store", str(store))
        assert done.returncode == 2, (args, done.returncode, done.stderr)
        assert str(store) in done.stderr and "Traceback" not in done.stderr, done.stderr
        assert any(w in done.stderr for w in ("not a compare-tui store", "damaged")), done.stderr
    assert store.read_bytes() == before  # never overwritten
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("runs.sqlite")) == ["runs.sqlite"]

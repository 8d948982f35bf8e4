"""What a Ray worker runs for one command scorer (`RayScorers` sends it; no Ray import here).

The worker gets everything by value: the task, the scorer, the answer, and the set's files
(the bytes and mode of every file the set's digest covers, by relative path). It writes those files
into a fresh folder, runs `score_command` against that folder exactly as this machine would run
it against the set's own (same sandbox code: fresh temp dir, cleaned environment, time limit,
captured output, network namespace where the worker's OS allows it), removes the folder, and
returns the result with the node it ran on. Nothing is read from the driver's disk by path.
"""

from __future__ import annotations

import os
import posixpath
import shutil
import socket
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from compare_tui.scoring.command import score_command
from compare_tui.scoring.result import Answer, ScoreResult


def write_set_files(folder: Path, files: Mapping[str, tuple[bytes, int]]) -> None:
    """Write `files` (relative POSIX path inside the set -> content and permission bits) under
    `folder`, keeping their paths and modes (a script run as `./check.sh` stays executable)."""
    for rel, (data, mode) in files.items():
        norm = posixpath.normpath(rel)
        if norm.startswith(("/", "../")) or norm in ("..", "."):
            raise ValueError(f"set file {rel!r} leaves the set folder")
        target = folder / norm
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        os.chmod(target, mode & 0o777)


def score_on_worker(
    set_files: Mapping[str, tuple[bytes, int]], task: Any, spec: Any, answer: Answer, node: Mapping[str, str]
) -> tuple[ScoreResult, dict[str, str]]:
    """Score one answer with a command scorer on this node; return the result and where it ran.

    `node` is what the caller knows of this node (Ray's node id and address): it travels back
    in the result so the run's process can say where each scorer ran."""
    folder = Path(tempfile.mkdtemp(prefix="compare-tui-set-"))
    try:
        write_set_files(folder, set_files)
        result = score_command(task, spec, answer, folder)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return result, {**node, "host": socket.gethostname()}

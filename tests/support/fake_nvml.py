"""A "GPU box" for tests on machines without an NVIDIA GPU: the project's own stand-in for
`libnvidia-ml.so.1` (`fake_nvml.c`), loaded by the real nvidia-ml-py.

`fake_nvml_library` (session-scoped, re-exported by tests/conftest.py) compiles the C source with
`gcc -shared -fPIC` into a temp folder once per test run: one build with every call and one
without `nvmlDeviceGetMemoryInfo_v2` (an older driver). A build failure ERRORS the tests that
asked for it, never skips them: a skipped NVML test reads exactly like a passing one.

glibc reads `LD_LIBRARY_PATH` once, when a process starts, and pynvml keeps the library it
loaded for the life of the process; so the stand-in is only ever loaded in a child process
(`FakeGpuBox.environ`), and the test process itself keeps seeing no GPU.

`python -m tests.support.fake_nvml sample …` is that child process for the sampler's own tests:
it runs `GpuSampler` as the engine does and prints its report as JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

SOURCE = Path(__file__).with_name("fake_nvml.c")
REPO = Path(__file__).resolve().parents[2]
GiB = 1 << 30
MiB = 1 << 20
SONAME = "libnvidia-ml.so.1"


@dataclass(frozen=True)
class FakeNvmlLibrary:
    """The two builds of the stand-in, each `libnvidia-ml.so.1` in its own folder."""

    full: Path
    """The folder of the build with every call the sampler makes."""
    without_v2: Path
    """The folder of the build without `nvmlDeviceGetMemoryInfo_v2`."""


def build(into: Path) -> FakeNvmlLibrary:
    """Compile the stand-in into `into` (RuntimeError with gcc's words when it cannot)."""
    gcc = shutil.which("gcc") or shutil.which("cc")
    if gcc is None:
        raise RuntimeError("no C compiler (gcc or cc) on PATH: the NVML stand-in cannot be built")
    folders = {"full": into / "full", "without_v2": into / "without-v2"}
    for variant, folder in folders.items():
        folder.mkdir(parents=True, exist_ok=True)
        flags = ["-DNO_MEMORY_V2"] if variant == "without_v2" else []
        command = [gcc, "-shared", "-fPIC", "-O2", *flags, f"-Wl,-soname,{SONAME}"]
        done = subprocess.run(
            [*command, "-o", str(folder / SONAME), str(SOURCE), "-lpthread"],
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0 or not (folder / SONAME).is_file():
            raise RuntimeError(f"building the NVML stand-in failed ({done.returncode}): {done.stderr.strip()}")
    return FakeNvmlLibrary(folders["full"], folders["without_v2"])


@pytest.fixture(scope="session")
def fake_nvml_library(tmp_path_factory: pytest.TempPathFactory) -> FakeNvmlLibrary:
    """The compiled stand-in, built once per test run. Fails (never skips) when it cannot be built."""
    return build(tmp_path_factory.mktemp("fake-nvml"))


class FakeGpuBox:
    """One scripted machine: the stand-in's folder of devices, readings and failures."""

    def __init__(self, folder: Path, library: FakeNvmlLibrary, *, v2: bool = True) -> None:
        self.folder = folder
        self.library_dir = library.full if v2 else library.without_v2
        folder.mkdir(parents=True, exist_ok=True)

    def devices(self, *devices: tuple[str, str, list[int]], total_mib: int = 81_559) -> FakeGpuBox:
        """`(uuid, name, used bytes in order)` per GPU; the last reading repeats."""
        lines = [f"{uuid} {total_mib} {name}" for uuid, name, _ in devices]
        (self.folder / "devices").write_text("".join(line + "\n" for line in lines))
        for index, (_, _, readings) in enumerate(devices):
            (self.folder / f"used.{index}").write_text(" ".join(str(r) for r in readings) + "\n")
        return self

    def fail(self, call: str, code: int) -> FakeGpuBox:
        """Make `call` (`init`, `memory` or `v2`) return NVML code `code`."""
        (self.folder / f"{call}_error").write_text(f"{code}\n")
        return self

    def lose(self) -> None:
        """The GPU falls off the bus: every memory read from now on fails (GPU is lost)."""
        (self.folder / "lost").touch()

    def environ(self, base: dict[str, str] | None = None) -> dict[str, str]:
        """An environment whose processes load this box's stand-in through pynvml."""
        env = dict(os.environ if base is None else base)
        env["LD_LIBRARY_PATH"] = os.pathsep.join(filter(None, [str(self.library_dir), env.get("LD_LIBRARY_PATH")]))
        env["COMPARE_TUI_FAKE_NVML"] = str(self.folder)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
        return env

    def sample(self, interval_s: float, samples: int, *, lose_after: int | None = None) -> dict:
        """Run `GpuSampler` in a child process until it took `samples` readings (losing the GPU
        after `lose_after`), and return its report as the engine would store it."""
        command = [sys.executable, "-m", "tests.support.fake_nvml", "sample", str(interval_s), str(samples)]
        if lose_after is not None:
            command += ["--lose-after", str(lose_after), "--folder", str(self.folder)]
        done = subprocess.run(command, env=self.environ(), capture_output=True, text=True, timeout=60, cwd=REPO)
        if done.returncode != 0:
            raise AssertionError(f"the sampler's child process failed: {done.stderr}")
        return json.loads(done.stdout)


def _sample(args: argparse.Namespace) -> None:
    from dataclasses import asdict

    from compare_tui.engine.gpu import GpuSampler

    sampler = GpuSampler(args.interval)
    started = sampler.start()
    deadline = time.monotonic() + 30
    lost = False
    while started and time.monotonic() < deadline:
        taken = sampler._samples  # noqa: SLF001 - the driver waits on the sampler's own count
        if args.lose_after is not None and not lost and taken >= args.lose_after:
            (Path(args.folder) / "lost").touch()
            lost = True
        if taken >= args.samples or "sampling stopped" in " ".join(sampler._notes):  # noqa: SLF001
            break
        time.sleep(args.interval / 4)
    report = asdict(sampler.stop())
    report["pynvml"] = sys.modules["pynvml"].__file__ if "pynvml" in sys.modules else None
    print(json.dumps(report))


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m tests.support.fake_nvml")
    sub = parser.add_subparsers(required=True)
    sample = sub.add_parser("sample", help="run GpuSampler against whatever libnvidia-ml.so.1 loads")
    sample.add_argument("interval", type=float)
    sample.add_argument("samples", type=int)
    sample.add_argument("--lose-after", type=int)
    sample.add_argument("--folder")
    sample.set_defaults(handler=_sample)
    args = parser.parse_args()
    args.handler(args)


if __name__ == "__main__":
    main()

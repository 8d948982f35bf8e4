"""The rubric a person writes for a judge, and the digest that names it in stored ids.

The digest covers the prompt template version and the mode as well as the rubric's words, so
changing any of them starts a new judging instead of mixing verdicts given under different
instructions.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from compare_tui.errors import CompareTuiError
from compare_tui.store.judgements import RubricMode

MODES = (RubricMode.DIRECT, RubricMode.REFERENCE)
"""`direct`: which answer better satisfies the rubric. `reference`: which is closer to the
expected outcome (the user's baseline)."""
PROMPT_VERSION = "compare-tui judge prompts v2"
"""Bump when the prompt templates change: a new version is a new rubric digest."""
MAX_RUBRIC_CHARS = 8000

DEFAULT_REFERENCE_RUBRIC = (
    "The better answer gives the same result as the reference answer: the same label, values "
    "or tool call. Wording, politeness and length do not matter; a wrong or missing result does."
)


class RubricError(CompareTuiError, ValueError):
    """The rubric cannot be used; the message names the file and what to do."""


@dataclass(frozen=True, slots=True)
class Rubric:
    """What the judge is asked to apply, in plain words, and how (`mode`)."""

    text: str
    mode: RubricMode
    source: str = ""
    """Where the text came from (a file path, or `built-in`), for messages."""
    structured: bool = False
    """Ask the server to constrain the judge's reply to a JSON verdict (`response_format`)."""
    prompt_version: str = PROMPT_VERSION
    """The version of the prompt templates this rubric is sent with (`grade.scale.SCALE_PROMPT_VERSION`
    for the 1–5 grades): part of the digest."""

    @property
    def reply_form(self) -> Literal["text", "structured"]:
        return "structured" if self.structured else "text"

    @property
    def digest(self) -> str:
        """`sha256:<hex>` over the prompt version, the mode, the reply form and the rubric's text."""
        parts = [self.prompt_version, self.mode] + (["structured"] if self.structured else []) + [self.text.strip()]
        payload = "\n".join(parts)
        return "sha256:" + hashlib.sha256(payload.encode("utf-8")).hexdigest()


def load_rubric(path: str | Path | None, mode: str, *, structured: bool = False) -> Rubric:
    """The rubric in `path` (plain text) for `mode`. `reference` mode may omit the file and
    gets `DEFAULT_REFERENCE_RUBRIC`; `direct` mode needs one (quality means what *you* say)."""
    if mode not in MODES:
        raise RubricError(f"unknown judge mode {mode!r}: use one of {', '.join(MODES)}")
    chosen = RubricMode(mode)
    if path is None:
        if chosen == RubricMode.DIRECT:
            raise RubricError(
                "direct mode needs a rubric: pass --rubric FILE (plain words saying what a "
                "better answer does), or use --mode reference"
            )
        return Rubric(DEFAULT_REFERENCE_RUBRIC, chosen, "built-in", structured)
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise RubricError(f"rubric file {file} does not exist") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise RubricError(f"cannot read the rubric file {file}: {exc}") from None
    if not text.strip():
        raise RubricError(f"rubric file {file} is empty: write what a better answer does, in plain words")
    if len(text) > MAX_RUBRIC_CHARS:
        raise RubricError(
            f"rubric file {file} has {len(text)} characters; keep it under {MAX_RUBRIC_CHARS} "
            "(every judge call sends it)"
        )
    return Rubric(text.strip(), chosen, str(file), structured)

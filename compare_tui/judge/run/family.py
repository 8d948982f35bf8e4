"""Model families, for the caveat that a judge may favour its own kind (self-preference bias).

A family is the leading letters of a model's name or id, after any organisation prefix:
`smollm2-135m` and `SmolLM2-360M-Instruct` are both `smollm`; `gemma3-270m` and `gemma-2-9b`
are both `gemma`. It is a heuristic on names, so the caveat says "appears to be".
"""

from __future__ import annotations

import re
from collections.abc import Iterable

_LEADING_LETTERS = re.compile(r"[a-z]+")
_MIN_FAMILY = 3  # shorter prefixes ("a", "gp") say nothing about lineage


def family(name: str) -> str | None:
    """The family of a model name or id, or None when the name has no usable prefix."""
    tail = name.strip().lower().rsplit("/", 1)[-1]
    match = _LEADING_LETTERS.match(tail)
    if match is None or len(match.group()) < _MIN_FAMILY:
        return None
    return match.group()


def families(names: Iterable[str | None]) -> set[str]:
    """Every family among `names` (catalogue names and model ids), Nones and unknowns skipped."""
    return {f for name in names if name for f in [family(name)] if f is not None}


def same_family_caveat(
    judge_names: Iterable[str | None], contestant: str, contestant_names: Iterable[str | None], role: str
) -> str | None:
    """A caveat when the judge shares a family with a contestant (`role`: baseline/candidate/…)."""
    judge_names, contestant_names = list(judge_names), list(contestant_names)
    shared = families(judge_names) & families(contestant_names)
    if not shared:
        return None
    if set(filter(None, judge_names)) & set(filter(None, contestant_names)):
        return (
            f"The judge is the {role} model itself ({contestant}): models tend to prefer their own "
            "answers, so its verdicts on this pair are suspect."
        )
    return (
        f"The judge appears to be from the same model family as the {role} ({contestant}, family "
        f"{', '.join(sorted(shared))}): judges tend to favour answers from their own family."
    )

"""The prompt cache as a measured condition of each run (pure; docs/measurement.md §3).

A server that holds a prompt prefix from an earlier request skips its processing: on a CPU a
task's time to first token drops from seconds to tens of milliseconds (bench/RESULTS.md,
"Prompt cache"). Two runs of one model minutes apart then differ by what the server remembered,
and a Δ TTFT between them is the cache's, not the model's. So each run states its condition —
what it asked (`run --prompt-cache`), how its requests held it on its server's stack — and its
measured cache share (prompt tokens the server took from its cache ÷ prompt tokens, from each
answer's llama.cpp `timings.cache_n` or `usage.prompt_tokens_details.cached_tokens`), and the
report says when compared runs ran under different ones.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from compare_tui.report.caveats import Caveat
from compare_tui.report.inputs import AttemptFacts

SHARE_GAP = 0.10
"""Compared runs whose cache shares differ by more than this (ten points) get a caveat."""


@dataclass(frozen=True, slots=True)
class CacheCondition:
    """One run's prompt-cache condition and what its server said it reused."""

    label: str
    asked: str
    """`server` or `cold` (`vocabulary.PromptCache`); runs before the setting: `server`."""
    how: str | None
    """How the requests held it on the server's stack, as the run recorded it; None before."""
    held: bool
    """False when `cold` was asked and the stack offers no switch (the server's cache applied)."""
    cached_tokens: int
    prompt_tokens: int
    requests: int
    """Answers that said both how many prompt tokens they had and how many came from the cache."""
    stack: str | None = None
    """The stack the run's server is (`vLLM`, `llama.cpp llama-server`), where recorded: only a vLLM
    run is told the flag that makes its server report cache hits."""

    @property
    def share(self) -> float | None:
        """Prompt tokens from the cache ÷ prompt tokens, over `requests`; None when none said."""
        return self.cached_tokens / self.prompt_tokens if self.requests and self.prompt_tokens else None

    def text(self) -> str:
        """`cold: cache_prompt false on every request (llama.cpp); 0% of 1,830 prompt tokens
        from the cache (12 answers)` — the serving block's line."""
        condition = self.how or ("the server's own" if self.asked == "server" else self.asked)
        if self.share is None and self.how is None:
            return f"{condition}; cache hits not recorded (the run predates compare-tui keeping them)"
        if self.share is None:
            if self.stack == "vLLM":
                return (
                    f"{condition}; cache hits not reported by the server (vLLM reports them when started with "
                    "--enable-prompt-tokens-details)"
                )
            return f"{condition}; cache hits not reported by the server"
        return (
            f"{condition}; {self.share:.0%} of {self.prompt_tokens:,} prompt tokens from the cache "
            f"({self.requests} answers)"
        )


def cache_condition(
    label: str,
    settings: Mapping[str, Any],
    environment: Mapping[str, Any],
    attempts: Sequence[AttemptFacts],
    stack: str | None = None,
) -> CacheCondition:
    """The run's condition from its stored settings, environment and attempts (`stack`: the
    server's, from its serving reading)."""
    recorded = environment.get("prompt_cache")
    recorded = recorded if isinstance(recorded, Mapping) else {}
    asked = str(settings.get("prompt_cache") or recorded.get("asked") or "server")
    how = recorded.get("how")
    held = recorded.get("held")
    counted = [
        a
        for a in attempts
        if a.cached_tokens is not None and a.prompt_tokens is not None and 0 <= a.cached_tokens <= a.prompt_tokens
    ]
    return CacheCondition(
        label=label,
        asked=asked,
        how=str(how) if how else None,
        held=held is not False,
        cached_tokens=sum(a.cached_tokens or 0 for a in counted),
        prompt_tokens=sum(a.prompt_tokens or 0 for a in counted),
        requests=len(counted),
        stack=stack,
    )


def cache_caveats(conditions: Sequence[CacheCondition]) -> list[Caveat]:
    """A caveat when compared runs ran under different cache conditions or shares, and one per
    run whose `cold` could not be held."""
    out = []
    asked = {c.asked for c in conditions}
    shares = [c for c in conditions if c.share is not None]
    wide = len(shares) > 1 and max(c.share or 0 for c in shares) - min(c.share or 0 for c in shares) > SHARE_GAP
    if len(conditions) > 1 and (len(asked) > 1 or wide):
        listed = "; ".join(
            f"{c.label}: {c.asked}" + ("" if c.share is None else f", {c.share:.0%} of prompt tokens from the cache")
            for c in conditions
        )
        out.append(
            Caveat(
                "prompt_cache_differs",
                f"The runs compared here ran with different prompt-cache conditions ({listed}): a prompt the "
                "server already held skips its processing, so their Δ TTFT, Δ E2E and hardware Δ cost are partly "
                "the cache's, not the models'. Run each with `--prompt-cache cold` to compare them fairly.",
            )
        )
    for c in conditions:
        if c.asked == "cold" and not c.held:
            out.append(Caveat("prompt_cache_not_held", f"{c.label} asked for a cold prompt cache: {c.how}."))
    return out

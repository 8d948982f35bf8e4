"""Which logged turns become tasks: recency-weighted, deterministic, in bounded memory.

The rule (recorded in every sample's `sample.json`):

1. Every candidate turn (in the window, past the filters) gets a weight
   `w = 2 ** (-age / half_life)`, age measured back from the window's end and
   `half_life = window / 4`: a turn at the window's start weighs 1/16 of a turn at its end.
2. Every turn gets a key `u ** (1 / w)` (Efraimidis–Spirakis weighted sampling without
   replacement), where `u` in (0, 1) comes from sha256(seed, conversation, position), not
   from a random stream: the key depends only on the turn itself, so the sample does not
   depend on the order of lines or files. Keys are compared as `ln(-ln u) - t·ln2/h`
   (smaller is better), an order-preserving rewrite that needs neither the window's end
   nor tiny powers.
3. Turns are taken best key first, skipping a conversation that already gave
   `MAX_PER_CONVERSATION` (5) turns, until N are taken: this fixes how many turns each
   conversation gives.
4. Which turns a conversation gives: its candidate turns, ordered by position, are split
   into thirds (early, middle, late); picks go round the thirds, best key first within a
   round, so two picks come from two thirds and three picks from all three.

Memory: step 3 needs only the best `MAX_PER_CONVERSATION` keys of the conversations that
can still win: a conversation whose best key is worse than the N-th best conversation's
best key can never give a turn (N turns would be taken before its first). `TopConversations`
keeps at most 2·N conversations, so memory does not grow with the log.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from dataclasses import dataclass

MAX_PER_CONVERSATION = 5
PARTS = ("early", "middle", "late")
_LN2 = math.log(2.0)
_MIN_KEEP = 256


def conversation_hash(conversation: str) -> int:
    """A 64-bit stand-in for a conversation id: compact in memory, never written out raw."""
    return int.from_bytes(hashlib.sha256(conversation.encode("utf-8", "surrogatepass")).digest()[:8], "big")


def log_exponential(seed: str, conversation: str, position: int) -> float:
    """`ln(-ln u)` for the turn's hash-derived `u` in (0, 1): the part of its key that does
    not depend on time, so it can be computed once, when the turn is first read."""
    digest = hashlib.sha256(f"{seed}\x00{conversation}\x00{position}".encode("utf-8", "surrogatepass")).digest()
    # 53 random bits, shifted off 0 and 1 so both logarithms are finite.
    u = ((int.from_bytes(digest[:8], "big") >> 11) + 0.5) / float(1 << 53)
    return math.log(-math.log(u))


def recency_key(log_exp: float, timestamp: float, half_life_s: float) -> float:
    """The sampling key (smaller is better): `ln(-ln u) - t·ln2/h`, see step 2."""
    return log_exp - timestamp * _LN2 / half_life_s


def turn_key(seed: str, conversation: str, position: int, timestamp: float, half_life_s: float) -> float:
    """The turn's sampling key; smaller is better (see the module docstring, step 2)."""
    return recency_key(log_exponential(seed, conversation, position), timestamp, half_life_s)


class TopConversations:
    """Step 3 in bounded memory: feed every candidate with `offer`, then read `allocation`."""

    def __init__(self, samples: int, keep: int | None = None) -> None:
        """`keep`: conversations held before pruning back to `samples` (default
        max(2·samples, 256)); any value above `samples` gives the same allocation."""
        if samples < 1:
            raise ValueError("samples must be at least 1")
        self.samples = samples
        self._limit = max(keep if keep is not None else max(2 * samples, _MIN_KEEP), samples)
        self._keys: dict[int, dict[int, float]] = {}  # conversation -> {position: best key}
        self._threshold: tuple[float, int] | None = None

    def offer(self, conversation: int, position: int, key: float) -> None:
        keys = self._keys.get(conversation)
        if keys is None:
            # Worse than N conversations already kept: it can never give a turn.
            if self._threshold is not None and (key, conversation) >= self._threshold:
                return
            keys = self._keys[conversation] = {}
        old = keys.get(position)
        if old is not None and old <= key:
            return
        keys[position] = key  # the same turn logged twice: the better (newer) record counts
        if len(keys) > MAX_PER_CONVERSATION:
            del keys[max(keys, key=lambda p: (keys[p], p))]
        if len(self._keys) > self._limit:
            self._prune()

    def _prune(self) -> None:
        ranked = sorted(self._keys, key=lambda c: (min(self._keys[c].values()), c))
        for conversation in ranked[self.samples :]:
            del self._keys[conversation]
        last = ranked[self.samples - 1]
        self._threshold = (min(self._keys[last].values()), last)

    def allocation(self) -> dict[int, int]:
        """How many turns each winning conversation gives (greedy by key, capped at 5)."""
        entries = sorted(
            (key, conversation, position) for conversation, keys in self._keys.items() for position, key in keys.items()
        )
        counts: dict[int, int] = {}
        taken = 0
        for _key, conversation, _position in entries:
            if taken == self.samples:
                break
            if counts.get(conversation, 0) < MAX_PER_CONVERSATION:
                counts[conversation] = counts.get(conversation, 0) + 1
                taken += 1
        return counts


@dataclass(frozen=True, slots=True)
class Candidate:
    """One distinct candidate turn of a conversation, as step 4 sees it."""

    position: int
    key: float
    ref: object = None
    """Where the turn was logged (opaque here; the pipeline's record reference)."""


def part_of(rank: int, count: int) -> int:
    """Which third (0 early, 1 middle, 2 late) the `rank`-th of `count` turns falls in.

    Uses the turn's midpoint, so 2 turns are early and late, 4 are early, middle ×2, late."""
    return (6 * rank + 3) // (2 * count)


def spread(candidates: Sequence[Candidate], picks: int) -> list[tuple[Candidate, int]]:
    """Step 4: `picks` of a conversation's candidates (distinct positions) with their third.

    Every third gives one turn before any gives a second, and so on, as far as it has turns;
    within one round, better keys are taken first."""
    ordered = sorted(candidates, key=lambda c: c.position)
    parts: list[list[Candidate]] = [[], [], []]
    for rank, candidate in enumerate(ordered):
        parts[part_of(rank, len(ordered))].append(candidate)
    for part in parts:
        part.sort(key=lambda c: (c.key, c.position))
    chosen: list[tuple[Candidate, int]] = []
    depth = 0
    while len(chosen) < min(picks, len(ordered)):
        heads = sorted(
            ((part[depth], index) for index, part in enumerate(parts) if len(part) > depth),
            key=lambda h: (h[0].key, h[0].position),
        )
        chosen.extend(heads[: picks - len(chosen)])
        depth += 1
    return sorted(chosen, key=lambda pick: pick[0].position)

"""The sampling rule: determinism, order independence, ≤5 turns a conversation, the
early/middle/late spread, recency weighting, and the bounded-memory selection equal to the
plain greedy rule it stands for."""

from __future__ import annotations

import json
import random
import tempfile
from collections import Counter, defaultdict
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compare_tui.sampling import MAX_PER_CONVERSATION, SampleOptions, sample_logs, write_sampled_set
from compare_tui.sampling.selection import PARTS, Candidate, TopConversations, part_of, spread
from tests.core.sampling.test_sampling_builders import DAY, END, conversation, read_dir_bytes, write_jsonl

SLOW = settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# ---------------------------------------------------------------- pure rule


def _greedy(entries: list[tuple[int, int, float]], samples: int) -> dict[int, int]:
    """The rule as written: dedupe turns (best key), best keys first, 5 per conversation."""
    best: dict[tuple[int, int], float] = {}
    for conv, pos, key in entries:
        best[(conv, pos)] = min(key, best.get((conv, pos), key))
    counts: Counter[int] = Counter()
    for (conv, _pos), _key in sorted(best.items(), key=lambda item: (item[1], item[0][0], item[0][1])):
        if sum(counts.values()) == samples:
            break
        if counts[conv] < MAX_PER_CONVERSATION:
            counts[conv] += 1
    return dict(counts)


entries_strategy = st.lists(
    st.tuples(st.integers(0, 40), st.integers(0, 25), st.floats(-50, 50, allow_nan=False)), min_size=1, max_size=300
)


@given(entries=entries_strategy, samples=st.integers(1, 40), keep=st.integers(1, 60), seed=st.integers(0, 10**6))
def test_bounded_selection_equals_the_plain_greedy_rule(entries, samples, keep, seed):
    random.Random(seed).shuffle(entries)
    top = TopConversations(samples, keep=keep)  # small `keep`: prunes often
    for conv, pos, key in entries:
        top.offer(conv, pos, key)
    assert top.allocation() == _greedy(entries, samples)


@given(
    keys=st.lists(st.floats(-10, 10, allow_nan=False), min_size=1, max_size=40, unique=True), picks=st.integers(1, 5)
)
def test_spread_goes_round_the_thirds(keys, picks):
    candidates = [Candidate(position * 2, key) for position, key in enumerate(keys)]
    chosen = spread(candidates, picks)
    assert len(chosen) == min(picks, len(keys))
    assert len({c.position for c, _part in chosen}) == len(chosen)
    sizes = Counter(part_of(rank, len(keys)) for rank in range(len(keys)))
    taken = Counter(part for _c, part in chosen)
    for part in range(3):
        if taken[part] < sizes[part]:  # a third with turns left is never behind by two
            assert all(taken[part] >= taken[other] - 1 for other in range(3))
    ranks = {c.position: rank for rank, c in enumerate(sorted(candidates, key=lambda c: c.position))}
    assert all(part == part_of(ranks[c.position], len(keys)) for c, part in chosen)


def test_parts_split_a_conversation_into_thirds():
    assert [part_of(r, 1) for r in range(1)] == [1]
    assert [part_of(r, 2) for r in range(2)] == [0, 2]
    assert [part_of(r, 3) for r in range(3)] == [0, 1, 2]
    assert [part_of(r, 9) for r in range(9)] == [0, 0, 0, 1, 1, 1, 2, 2, 2]


# ---------------------------------------------------------------- whole pipeline

conversations_strategy = st.lists(
    st.tuples(st.integers(1, 14), st.floats(0, 40), st.sampled_from([0, 2, 3])),  # turns, days before END, tool every
    min_size=1,
    max_size=12,
)


def _logs(folder: Path, convs, *, shuffle_seed: int | None = None) -> list[Path]:
    records = []
    for index, (turns, days_back, tool_every) in enumerate(convs):
        records += conversation(f"conv-{index}", turns, END - days_back * DAY, step=600, tool_every=tool_every)
    if shuffle_seed is None:
        return [write_jsonl(folder / "a.jsonl", records)]
    random.Random(shuffle_seed).shuffle(records)
    half = len(records) // 2
    # The same lines, shuffled, split over two files given in the other order, one gzipped.
    return [
        write_jsonl(folder / "second.jsonl.gz", records[half:], gz=True),
        write_jsonl(folder / "first.jsonl", records[:half]),
    ]


def _sample(logs, out: Path, **options) -> Path:
    return write_sampled_set(sample_logs(logs, SampleOptions(**options)), out)


@SLOW
@given(
    convs=conversations_strategy,
    samples=st.integers(1, 30),
    seed=st.text(max_size=8),
    window=st.sampled_from(["1d", "7d", "30d"]),
    shuffle_seed=st.integers(0, 1000),
)
def test_same_logs_and_seed_give_the_same_folder_byte_for_byte(convs, samples, seed, window, shuffle_seed):
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        logs = _logs(root / "logs", convs)
        options = dict(samples=samples, seed=seed, window=window)
        first = read_dir_bytes(_sample(logs, root / "one", **options))
        assert read_dir_bytes(_sample(logs, root / "two", **options)) == first
        # Order does not matter: shuffled lines over two files give the same tasks.
        shuffled = read_dir_bytes(
            _sample(_logs(root / "shuffled", convs, shuffle_seed=shuffle_seed), root / "three", **options)
        )
        assert {k: v for k, v in shuffled.items() if k.startswith("tasks")} == {
            k: v for k, v in first.items() if k.startswith("tasks")
        }


@SLOW
@given(convs=conversations_strategy, samples=st.integers(1, 40), seed=st.integers(0, 99))
def test_at_most_five_turns_a_conversation_spread_over_its_thirds(convs, samples, seed):
    convs = [(turns, days % 20, tool) for turns, days, tool in convs]  # all inside the 30d window
    with tempfile.TemporaryDirectory() as tmp:
        out = _sample(_logs(Path(tmp), convs), Path(tmp) / "out", samples=samples, seed=str(seed))
        info = json.loads((out / "sample.json").read_text())
    per_conv: dict[str, list[dict]] = defaultdict(list)
    for entry in info["tasks"]:
        per_conv[entry["task"].split("-t")[0]].append(entry)
    # The cap never leaves the sample short while some conversation still has turns to give.
    assert len(info["tasks"]) == min(samples, sum(min(turns, MAX_PER_CONVERSATION) for turns, _d, _t in convs))
    for entries in per_conv.values():
        assert len(entries) <= MAX_PER_CONVERSATION
        n = entries[0]["conversation_candidate_turns"]
        sizes = Counter(PARTS[part_of(rank, n)] for rank in range(n))
        taken = Counter(e["part"] for e in entries)
        for part in PARTS:
            if taken[part] < sizes[part]:
                assert all(taken[part] >= taken[other] - 1 for other in PARTS), (taken, sizes)
        if len(entries) >= 3 and n >= 3:
            assert set(taken) == set(PARTS)


def test_newer_turns_are_more_likely():
    # 1,200 one-turn conversations spread evenly over 30 days: with half-life 7.5 days the
    # newer half should give about 80% of the sample (weights 1 .. 1/16).
    records = []
    for index in range(1200):
        records += conversation(f"c{index}", 1, END - (index / 1200) * 30 * DAY + 1, tool_every=0)
    with tempfile.TemporaryDirectory() as tmp:
        log = write_jsonl(Path(tmp) / "log.jsonl", records)
        sampled = sample_logs([log], SampleOptions(samples=200, seed="r", now="2025-03-10T09:46:41Z"))
    newer = sum(1 for t in sampled.info["tasks"] if t["timestamp"] >= "2025-02-23T09:46:40Z")
    assert 0.7 * 200 <= newer <= 0.9 * 200
    assert sampled.info["window"]["half_life_seconds"] == 30 * DAY / 4


def test_a_different_seed_gives_a_different_sample():
    records = [r for i in range(60) for r in conversation(f"c{i}", 3, END - i * 3600)]
    with tempfile.TemporaryDirectory() as tmp:
        log = write_jsonl(Path(tmp) / "log.jsonl", records)
        ids = [tuple(t["id"] for t in sample_logs([log], SampleOptions(samples=20, seed=s)).tasks) for s in ("a", "b")]
    assert ids[0] != ids[1]

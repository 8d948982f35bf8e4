"""Small builders for tests: a golden set folder, catalogue entries and catalogues for a fake
server, and the `models add` command line."""

from __future__ import annotations

import json
from pathlib import Path

from compare_tui.catalogue import ModelEntry
from compare_tui.goldset import load_golden_set


def write_set(
    root: Path, tasks: dict[str, str], *, attempts: int = 1, max_tokens: int = 16, extra: dict | None = None
) -> Path:
    """A golden set whose task *i* has prompt == its id (the fake server keys plans by prompt)
    and expects the text given. `extra` maps task ids to raw task tables (tools, scorers…)."""
    (root / "tasks").mkdir(parents=True, exist_ok=True)
    (root / "golden.toml").write_text(
        'workload_id = "engine-test"\nname = "Engine test"\nversion = "1.0.0"\n'
        '[default_scorer]\nkind = "exact"\nnormalize = ["case", "whitespace"]\n'
        f"[run]\nattempts = {attempts}\nmax_tokens = {max_tokens}\n"
    )
    for task_id, expected in tasks.items():
        task = {"id": task_id, "input": {"prompt": task_id}, "expected": {"text": expected}}
        task.update((extra or {}).get(task_id, {}))
        (root / "tasks" / f"{task_id}.json").write_text(json.dumps(task))
    return root


def load(root: Path):
    return load_golden_set(root)


def hosted_entry(
    url: str, *, name: str = "fake", key_env: str | None = None, cost: dict | None = None, gateway: str | None = None
) -> ModelEntry:
    data = {
        "name": name,
        "kind": "hosted",
        "endpoint": url,
        "model": "fake-model",
        "revision": "2026-12-01",
        "weights_digest": "sha256:" + "0" * 64,
        "cost": cost
        or {
            "basis": "token_price",
            "usd_per_mtok_input": 1.0,
            "usd_per_mtok_output": 2.0,
            "captured": "2026-12-01",
            "source": "test",
        },
    }
    if key_env:
        data["key_env"] = key_env
    if gateway:
        data["gateway"] = gateway
    return ModelEntry.model_validate(data)


def hosted_catalogue(
    path: Path,
    url: str,
    names: tuple[str, ...] = ("fake",),
    *,
    model: str | None = "fake-model",
    key_env: str | None = None,
    gateway: str | None = None,
) -> Path:
    """A catalogue at `path` of token-priced hosted entries, one per name, all at `url` (the fake
    server); each asks for `model` (for its own name when None), with `key_env` and `gateway`
    when given."""
    extra = (f'key_env = "{key_env}"\n' if key_env else "") + (f'gateway = "{gateway}"\n' if gateway else "")
    entries = [
        f"""[[model]]
name = "{name}"
kind = "hosted"
endpoint = "{url}"
model = "{model or name}"
revision = "2026-12-01"
weights_digest = "sha256:{"0" * 64}"
{extra}[model.cost]
basis = "token_price"
usd_per_mtok_input = 1.0
usd_per_mtok_output = 2.0
captured = "2026-12-01"
source = "test"
"""
        for name in names
    ]
    path.write_text("\n".join(entries))
    return path


def models_add_argv(endpoint: str, weights: Path, *extra: str, weights_flag: str = "--weights-dir") -> list[str]:
    """`compare-tui models add tiny` at `endpoint` pinning `weights` (a folder, or the files given
    with `weights_flag="--weights"`), revision v1 at 0.5 USD an hour, then `extra`."""
    argv = ["models", "add", "tiny", "--endpoint", endpoint, weights_flag, str(weights)]
    return [*argv, "--revision", "v1", "--usd-per-hour", "0.5", *extra]

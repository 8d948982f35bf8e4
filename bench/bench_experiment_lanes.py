"""An experiment's cells one after another vs at the same time (arms on different endpoints).

Two bundled models served by real llama-servers (`compare_tui.local.up`, `--threads 1` each),
an experiment with one arm per model on a sample set, launched through `launch_missing` twice
per round into fresh stores: once executing each round's runs one after another (what
`experiment run` did before), once together in one process (what it does now). Rounds alternate
so machine load affects both alike; medians are reported.
Usage: python bench/bench_experiment_lanes.py [--set sample_sets/ticket-labels] [--repeats 1] [--rounds 2]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

MODELS = ("smollm2-135m", "gemma3-270m")


def launch(store_path: Path, catalogue_path: Path, set_path: Path, repeats: int, together: bool) -> float:
    from compare_tui.catalogue import load_catalogue
    from compare_tui.commands.run import execute_prepared
    from compare_tui.engine.settings import RunOverrides, resolve_settings
    from compare_tui.experiment import arm_entries, define_experiment, launch_missing
    from compare_tui.goldset import load_golden_set
    from compare_tui.store import ExperimentRecord, Store

    goldset = load_golden_set(set_path)
    catalogue = load_catalogue(catalogue_path)
    settings = resolve_settings(goldset, RunOverrides(max_tokens=16)).as_dict()
    config = define_experiment(goldset, [(catalogue.get(m), {}) for m in MODELS], settings, repeats)
    with Store.open(store_path) as store:
        store.create_experiment(ExperimentRecord(name="lanes", config=config.model_dump(mode="json")))
        entries = arm_entries(config, catalogue)

        def one_at_a_time(prepared):
            return [execute_prepared(store, [p], quiet=True)[0] for p in prepared]

        def together_(prepared):
            return execute_prepared(store, prepared, quiet=True, together=True)

        start = time.perf_counter()
        result = launch_missing(
            store, config, goldset, entries, together_ if together else one_at_a_time, same_host_at_once=together
        )
        wall = time.perf_counter() - start
    assert all(status == "completed" for _, _, status in result.launched), result.launched
    assert len(result.launched) == len(MODELS) * repeats
    return wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", type=Path, default=ROOT / "sample_sets" / "ticket-labels")
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="bench-lanes-"))
    os.environ["COMPARE_TUI_STATE_DIR"] = str(tmp / "state")
    from compare_tui.local import down, up

    load_before = os.getloadavg()[0]
    up(MODELS, threads=1, catalogue_path=tmp / "models.toml")
    walls: dict[bool, list[float]] = {False: [], True: []}
    try:
        for r in range(args.rounds):
            for together in (False, True) if r % 2 == 0 else (True, False):
                store = tmp / f"runs-{r}-{together}.sqlite"
                walls[together].append(launch(store, tmp / "models.toml", args.set, args.repeats, together))
                print(f"round {r + 1}: {'together' if together else 'one at a time'} {walls[together][-1]:.1f} s")
    finally:
        down()
    before, after = statistics.median(walls[False]), statistics.median(walls[True])
    rel = args.set.resolve().relative_to(ROOT)
    lines = [
        "# Experiments: cells on different endpoints at the same time",
        "",
        f"Command: `PYTHONPATH=. .venv/bin/python bench/bench_experiment_lanes.py --set {rel} "
        f"--repeats {args.repeats} --rounds {args.rounds}`",
        f"Arms {' and '.join(MODELS)} (bundled, one llama-server each, `--threads 1`, max_tokens 16), "
        f"{args.repeats} run(s) per arm, medians of {args.rounds} alternating rounds; measured "
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, load average before {load_before:.2f}.",
        "",
        "| cells | wall s (median) | each round |",
        "|---|---:|---|",
        f"| one after another (before) | {before:.1f} | {', '.join(f'{w:.1f}' for w in walls[False])} |",
        f"| at the same time (after) | {after:.1f} | {', '.join(f'{w:.1f}' for w in walls[True])} |",
        "",
        f"Gain: {before / after:.2f}× ({before - after:.1f} s less).",
    ]
    text = "\n".join(lines)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")


if __name__ == "__main__":
    main()

"""`compare-tui sample` as a user runs it: gzip logs, skipped lines, a set that loads and runs."""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from compare_tui.cli import main
from compare_tui.goldset import load_golden_set
from compare_tui.sampling import SamplingError
from compare_tui.sampling.sources import Source
from tests.core.sampling.test_sampling_builders import DAY, END, conversation, read_dir_bytes, write_jsonl
from tests.support.fake_openai import FakeServer, ToolCall, text, tool_calls

ROOT = Path(__file__).resolve().parents[3]


def _sample(capsys, *args: str) -> tuple[int, str, str]:
    code = main(["sample", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _traffic(root: Path, *, gz: bool = False, extra: list = ()) -> Path:
    records = []
    for index in range(12):
        records += conversation(
            f"conv-{index}",
            2 + index % 7,
            END - index * DAY / 2,
            tags=["billing"] if index % 2 else ["bug"],
            model="gpt-4o" if index % 3 else "gpt-4o-mini",
        )
    return write_jsonl(root / ("traffic.jsonl.gz" if gz else "traffic.jsonl"), [*records, *extra], gz=gz)


def test_gzip_logs_give_a_set_that_loads_and_validates(tmp_path, capsys):
    log = _traffic(tmp_path, gz=True)
    assert log.read_bytes()[:2] == b"\x1f\x8b"
    code, out, err = _sample(capsys, str(log), "--out", str(tmp_path / "set"), "--samples", "15", "--seed", "7")
    assert code == 0, err
    goldset = load_golden_set(tmp_path / "set")
    assert len(goldset.tasks) == 15 and goldset.digest in out
    assert "sampled 15 turns" in out and "agreement with the logged baseline, not ground truth" in out
    assert any("not ground truth" in c for c in goldset.manifest.caveats)
    assert any("sample.json" in c for c in goldset.manifest.caveats)
    info = json.loads((tmp_path / "set" / "sample.json").read_text())
    assert info["sources"][0]["compression"] == "gzip"
    assert info["sources"][0]["sha256"] == "sha256:" + hashlib.sha256(log.read_bytes()).hexdigest()  # the stored bytes
    kinds = {goldset.scorer_for(t).kind for t in goldset.tasks}
    assert kinds <= {"tool_call", "human"} and "tool_call" in kinds
    for task in goldset.tasks:
        assert ("tool_call" if task.expected.tool_call else "human") == goldset.scorer_for(task).kind
        assert task.input.messages[-1].role in ("user", "tool")
    assert main(["sets", "validate", str(tmp_path / "set")]) == 0


def test_skipped_lines_are_counted_per_reason_with_their_places(tmp_path, capsys):
    stale = conversation("old", 1, END - 60 * DAY)[0]
    log = _traffic(tmp_path, extra=["{torn", "", "[1]", {"hello": 1}, stale])
    code, out, err = _sample(
        capsys, str(log), "--out", str(tmp_path / "set"), "--samples", "5", "--window", "7d", "--json"
    )
    assert code == 0, err
    info = json.loads(out)
    total_lines = info["counts"]["lines"]
    skipped = info["skipped"]
    assert skipped["bad_json"] == {
        "count": 1,
        "meaning": "not valid JSON",
        "first": [f"traffic.jsonl:{total_lines - 4}"],
    }
    assert (
        skipped["blank"]["count"] == 1
        and skipped["not_object"]["count"] == 1
        and skipped["unknown_shape"]["count"] == 1
    )
    assert skipped["outside_window"]["count"] >= 1 and f"traffic.jsonl:{total_lines}" in json.dumps(
        skipped["outside_window"]
    )
    assert info["window"]["end_from"] == "newest usable timestamp in the logs"
    assert info["window"]["end"] == "2025-03-10T09:47:40Z"  # the newest turn: conv-0's second, END + 60 s
    assert json.loads((tmp_path / "set" / "sample.json").read_text())["skipped"] == skipped
    # The summary names every reason, with counts and where to look.
    main(["sample", str(log), "--out", str(tmp_path / "again"), "--samples", "5"])
    printed = capsys.readouterr().out
    for reason in ("bad_json", "blank", "not_object", "unknown_shape"):
        assert reason in printed
    assert f"traffic.jsonl:{total_lines - 4}" in printed


def test_model_and_tag_filters_and_now(tmp_path, capsys):
    log = _traffic(tmp_path)
    code, out, err = _sample(
        capsys,
        str(log),
        "--out",
        str(tmp_path / "f"),
        "--samples",
        "50",
        "--tag",
        "billing",
        "--model",
        "gpt-4o-mini",
        "--json",
    )
    assert code == 0, err
    info = json.loads(out)
    assert info["skipped"]["missing_tag"]["count"] > 0 and info["skipped"]["wrong_model"]["count"] > 0
    assert {
        t for task in load_golden_set(tmp_path / "f").tasks for t in task.tags if not t.startswith(("part:", "reply:"))
    } == {"billing"}
    code, out, err = _sample(
        capsys,
        str(log),
        "--out",
        str(tmp_path / "n"),
        "--samples",
        "50",
        "--now",
        "2025-03-05T00:00:00Z",
        "--window",
        "1d",
        "--json",
    )
    assert code == 0, err
    info = json.loads(out)
    assert info["window"] | {"half_life_seconds": 0} == {
        "length": "1d",
        "seconds": 86400,
        "start": "2025-03-04T00:00:00Z",
        "end": "2025-03-05T00:00:00Z",
        "end_from": "--now",
        "half_life_seconds": 0,
    }
    assert all("2025-03-04" <= t["timestamp"] < "2025-03-05" for t in info["tasks"])


def test_batch_input_and_output_files_are_joined_by_custom_id(tmp_path, capsys):
    inputs, outputs = [], []
    for index, record in enumerate(r for i in range(4) for r in conversation(f"b{i}", 3, END - i * 3600)):
        inputs.append(
            {"custom_id": f"req-{index}", "method": "POST", "url": "/v1/chat/completions", "body": record["request"]}
        )
        outputs.append(
            {
                "id": f"batch_req_{index}",
                "custom_id": f"req-{index}",
                "error": None,
                "response": {
                    "status_code": 200,
                    "request_id": "x",
                    "body": {**record["response"], "created": int(record["timestamp"])},
                },
            }
        )
    inputs.append(
        {
            "custom_id": "lonely",
            "method": "POST",
            "url": "/v1/chat/completions",
            "body": {"messages": [{"role": "user", "content": "hi"}]},
        }
    )
    outputs.append(
        {
            "custom_id": "orphan",
            "response": {
                "status_code": 200,
                "body": {"created": int(END), "choices": [{"message": {"role": "assistant", "content": "x"}}]},
            },
        }
    )
    outputs.append(
        {
            "custom_id": "failed",
            "response": {"status_code": 429, "body": {"error": {"message": "slow down"}}},
            "error": None,
        }
    )
    out_file = write_jsonl(tmp_path / "batch_output.jsonl", outputs)
    in_file = write_jsonl(tmp_path / "batch_input.jsonl", inputs)
    code, out, err = _sample(
        capsys, str(out_file), str(in_file), "--out", str(tmp_path / "set"), "--samples", "100", "--json"
    )
    assert code == 0, err
    info = json.loads(out)
    assert info["counts"]["sampled_turns"] == 12
    assert info["skipped"]["batch_output_without_request"]["first"] == ["batch_output.jsonl:13"]
    assert info["skipped"]["batch_request_without_output"]["first"] == ["batch_input.jsonl:13"]
    assert info["skipped"]["failed_request"]["count"] == 1
    assert all(len(t["logged_at"]) == 2 for t in info["tasks"])
    assert len(load_golden_set(tmp_path / "set").tasks) == 12


@pytest.mark.parametrize("kind", ["exact", "regex"])
def test_text_scorer_on_request_matches_the_logged_reply(tmp_path, capsys, kind):
    log = write_jsonl(
        tmp_path / "l.jsonl",
        conversation("c", 3, END, tool_every=0, text="Line one.\n  Line two (with *regex* chars)."),
    )
    assert _sample(capsys, str(log), "--out", str(tmp_path / "set"), "--samples", "3", "--text-scorer", kind)[0] == 0
    goldset = load_golden_set(tmp_path / "set")
    for task in goldset.tasks:
        scorer = goldset.scorer_for(task)
        assert scorer.kind == kind
        if kind == "regex":
            assert scorer.compiled().fullmatch(task.expected.text)
            assert scorer.compiled().fullmatch(re.sub(r"\s+", " ", task.expected.text))


def test_a_non_empty_out_is_refused_unless_it_holds_a_sampled_set_and_force(tmp_path, capsys):
    log = _traffic(tmp_path)
    keep = tmp_path / "mine"
    keep.mkdir()
    (keep / "notes.txt").write_text("mine")
    code, _out, err = _sample(capsys, str(log), "--out", str(keep), "--samples", "3")
    assert code == 2 and "not empty" in err and "--force" in err
    code, _out, err = _sample(capsys, str(log), "--out", str(keep), "--samples", "3", "--force")
    assert code == 2 and "not a sampled set" in err and (keep / "notes.txt").read_text() == "mine"
    assert _sample(capsys, str(log), "--out", str(tmp_path / "set"), "--samples", "9")[0] == 0
    assert _sample(capsys, str(log), "--out", str(tmp_path / "set"), "--samples", "3")[0] == 2
    assert _sample(capsys, str(log), "--out", str(tmp_path / "set"), "--samples", "3", "--force")[0] == 0
    assert len(list((tmp_path / "set" / "tasks").iterdir())) == 3  # the old nine are gone


def test_same_command_twice_gives_identical_folders(tmp_path, capsys):
    log = _traffic(tmp_path, gz=True)
    for name in ("a", "b"):
        assert (
            _sample(
                capsys,
                str(log),
                "--out",
                str(tmp_path / name),
                "--samples",
                "20",
                "--seed",
                "s",
                "--redact",
                "conv-1[0-9]",
            )[0]
            == 0
        )
    assert read_dir_bytes(tmp_path / "a") == read_dir_bytes(tmp_path / "b")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["missing.jsonl"], "no such file"),
        (["LOG", "--window", "45d"], "1h to 30d"),
        (["LOG", "--now", "someday"], "--now"),
        (["LOG", "--samples", "0"], "--samples 0"),
        (["LOG", "--redact", "("], "--redact rule 1"),
        (["LOG", "--model", "nope"], "no usable turn"),
        (["LOG", "--workload-id", "bad id!"], "workload"),
    ],
)
def test_mistakes_are_one_clear_line(tmp_path, capsys, args, message):
    log = _traffic(tmp_path)
    args = [str(log) if a == "LOG" else str(tmp_path / a) if a.endswith(".jsonl") else a for a in args]
    if "--samples" not in args:
        args += ["--samples", "3"]
    code, _out, err = _sample(capsys, *args, "--out", str(tmp_path / "set"))
    assert code == 2 and message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert not (tmp_path / "set").exists()


def _baseline(body: dict, _count: int):
    """Answers as the logged model did (see `conversation`): so tool-call tasks pass."""
    position = sum(1 for m in body["messages"] if m["role"] == "assistant")
    if position % 3 == 2:
        return tool_calls(ToolCall("lookup", {"q": f"order-{position}"}))
    return text(f"answer {position}.")


def test_the_engine_runs_a_sampled_set(tmp_path, capsys):
    log = _traffic(tmp_path)
    assert _sample(capsys, str(log), "--out", str(tmp_path / "set"), "--samples", "12")[0] == 0
    goldset = load_golden_set(tmp_path / "set")
    tool_tasks = sum(1 for t in goldset.tasks if t.expected.tool_call)
    with FakeServer(_baseline) as server:
        catalogue = tmp_path / "models.toml"
        catalogue.write_text(
            f'[[model]]\nname = "fake"\nkind = "hosted"\nendpoint = "{server.url}"\nmodel = "fake-model"\nrevision = "r1"\n'
            f'weights_digest = "sha256:{"0" * 64}"\n[model.cost]\nbasis = "token_price"\nusd_per_mtok_input = 1.0\n'
            'usd_per_mtok_output = 2.0\ncaptured = "2026-12-01"\nsource = "test"\n'
        )
        env = {k: v for k, v in os.environ.items() if not k.startswith("COMPARE_TUI_")} | {
            "PYTHONPATH": str(ROOT),
            "COMPARE_TUI_STATE_DIR": str(tmp_path / "state"),
        }
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "compare_tui",
                "run",
                str(tmp_path / "set"),
                "--model",
                "fake",
                "--models",
                str(catalogue),
                "--store",
                str(tmp_path / "runs.sqlite"),
                "--json",
            ],
            env=env,
            capture_output=True,
            text=True,
            timeout=180,
        )
        assert done.returncode in (0, 1), done.stderr
        chats = [r.body for r in server.requests if r.path.endswith("/chat/completions")]
    assert len(chats) == 12
    assert all(
        body["tools"] and {m["role"] for m in body["messages"]} <= {"system", "user", "assistant", "tool"}
        for body in chats
    )
    from compare_tui.store import Store

    with Store.open(tmp_path / "runs.sqlite") as store:
        run = store.list_runs()[0]
        outcomes = [a.outcome for a in store.attempts_for_run(run.id)]
    assert outcomes.count("pass") == tool_tasks and outcomes.count("review") == 12 - tool_tasks, outcomes


def test_a_torn_gzip_file_and_a_file_changed_mid_run_are_clear_errors(tmp_path, capsys):
    log = _traffic(tmp_path, gz=True)
    torn = tmp_path / "torn.jsonl.gz"
    torn.write_bytes(log.read_bytes()[:-40])
    code, _out, err = _sample(capsys, str(torn), "--out", str(tmp_path / "set"), "--samples", "3")
    assert code == 2 and "cannot be read past byte" in err and "Traceback" not in err
    source = Source.open_path(log)
    log.write_bytes(log.read_bytes() + b"\n")
    with pytest.raises(SamplingError, match="changed while it was being sampled"):
        source.check_unchanged()

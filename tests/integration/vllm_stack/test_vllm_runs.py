"""Golden-set runs against a real vLLM server (SmolLM2-135M-Instruct, converted from the bundled
GGUF): `models add` from the model folder and the endpoint, a run end to end, the error shapes
vLLM answers (a too-long prompt, a model it does not serve, tools without a parser), Ctrl-C in
the middle of a run and its resume, and the server's own latency figures read beside the client's.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
from pathlib import Path

import httpx
import pytest

from compare_tui.catalogue import load_catalogue
from compare_tui.catalogue.verify import ANSWER_SHAPING_FILES as SHAPING
from compare_tui.cli import main
from compare_tui.store import Store
from tests.goldset_factory import make_set, manifest_data, task_data
from tests.support.vllm_server import SMOLLM, VllmServer, sha256_of

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[3]
SET = ROOT / "sample_sets" / "support-triage"
TOOL_TASKS = {"create-ticket-01", "lookup-order-01", "no-tool-01"}
"""The sample set's tasks that send tools: vLLM without a tool-call parser refuses them (400)."""


def _add(server: VllmServer, catalogue: Path, name: str = "smollm2-vllm", model: str = SMOLLM) -> int:
    return main(
        [
            "models",
            "add",
            name,
            "--endpoint",
            server.url,
            "--model",
            model,
            "--weights-dir",
            str(server.folder),
            "--revision",
            "converted-from-bundled-gguf",
            "--usd-per-hour",
            "0.1",
            "--models",
            str(catalogue),
        ]
    )


@pytest.fixture
def catalogue(smollm: VllmServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    path = tmp_path / "models.toml"
    assert _add(smollm, path) == 0, capsys.readouterr().err
    capsys.readouterr()
    return path


def _run(catalogue: Path, store: Path, goldset: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> dict:
    args = ["run", str(goldset), "--model", "smollm2-vllm", "--models", str(catalogue), "--store", str(store)]
    code = main([*args, "--json", *extra])
    captured = capsys.readouterr()
    assert captured.out, captured.err  # a refusal prints its reason, not JSON
    summary = json.loads(captured.out)
    assert code in (0, 1), (code, captured.err)
    return summary


def test_models_add_pins_the_safetensors_and_reads_the_serving_facts(catalogue: Path, smollm: VllmServer):
    entry = load_catalogue(catalogue).get("smollm2-vllm")
    weights = sorted(p.name for p in smollm.folder.glob("*.safetensors"))
    assert weights == ["model.safetensors"]
    assert entry.files["model.safetensors"] == sha256_of(smollm.folder / "model.safetensors")
    # The files beside the weights that shape answers are pinned with them (config.json is not).
    assert set(entry.files) == {"model.safetensors", *SHAPING} & {p.name for p in smollm.folder.iterdir()}
    assert {"chat_template.jinja", "tokenizer_config.json", "generation_config.json"} <= set(entry.files)
    # From GET /v1/models: vLLM's own fields, recorded as read from the server.
    assert entry.serving.stack == "vLLM" and entry.serving.context_size == 2048
    assert entry.serving.extra["vllm_root"] == str(smollm.folder)
    assert main(["models", "verify", "smollm2-vllm", "--models", str(catalogue)]) == 0


def test_a_golden_set_end_to_end(catalogue: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    store_path = tmp_path / "runs.sqlite"
    summary = _run(catalogue, store_path, SET, capsys)
    [row] = summary["runs"]
    assert (row["status"], row["provenance"], row["not_done"]) == ("completed", "verified", 0)
    with Store.open(store_path) as store:
        run = store.get_run(row["id"])
        attempts = {a.task_id: a for a in store.attempts_for_run(run.id)}
        ledger = store.audit_for_run(run.id)
    fingerprint = run.serving[-1]["fingerprint"]
    assert (fingerprint["stack"], fingerprint["max_model_len"], fingerprint["engine_version"]) == (
        "vLLM",
        2048,
        "0.32.0",
    )
    assert run.serving[-1]["loaded"]["status"] == "matched"  # the folder it loaded is the pinned one
    # One audit row per request: 200 for every answer, 400 for each tool task.
    assert sorted((r.task_id, r.status) for r in ledger) == sorted(
        (t, 400 if t in TOOL_TASKS else 200) for t in attempts
    )
    assert attempts["echo-01"].outcome == "pass" and attempts["echo-01"].answer_text.strip(" .") == "42"
    for task_id, a in attempts.items():
        if task_id in TOOL_TASKS:
            # Refused by the server's setup (no tool-call parser): a recorded error, not "not done".
            assert (a.outcome, a.error_class) == ("error", "http_4xx")
            assert "--enable-auto-tool-choice" in (a.error or "")
            continue
        assert a.outcome in ("pass", "fail", "review") and a.answer_text
        # Tokens from vLLM's usage chunk (the last one, `choices: []`), never counted here.
        assert a.prompt_tokens and a.prompt_tokens > 10 and a.completion_tokens and not a.usage_missing
        assert a.finish_reason in ("stop", "length")
        assert a.ttft_ms is not None and a.e2e_ms is not None and 0 < a.ttft_ms <= a.e2e_ms
    # The server's own latency histograms, read before and after: one count per answered request.
    latency = run.environment["server_latency"]
    answered = len(attempts) - len(TOOL_TASKS)
    assert latency["requests_answered"] == answered
    assert latency["ttft"]["buckets"][-1] == ["+Inf", answered]
    assert latency["e2e"]["buckets"][-1] == ["+Inf", answered]
    # Its KV cache's fill, read beside the GPU figure while the run lasted (not device memory).
    kv_cache = run.gpu["kv_cache"]
    assert (kv_cache["source"], kv_cache["metric"]) == ("vLLM /metrics", "vllm:kv_cache_usage_perc")
    assert 0 <= kv_cache["baseline"] <= kv_cache["peak"] <= 1 and kv_cache["samples"] >= 2


def test_the_report_shows_the_servers_ttft_beside_the_clients(catalogue, tmp_path, capsys):
    store_path = tmp_path / "runs.sqlite"
    [row] = _run(catalogue, store_path, SET, capsys)["runs"]
    assert main(["report", row["id"], "--store", str(store_path), "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    [check] = report["server_latency"]
    assert check["source"] == "vLLM /metrics" and check["requests"] == 18
    server, client = check["server_ttft_p50_ms"], check["client_ttft_p50_ms"]
    assert check["server_ttft_bucket_ms"][0] <= server <= check["server_ttft_bucket_ms"][1]
    assert server > 0 and client > 0 and check["server_ttft_mean_ms"] > 0
    # The server starts its clock after the request arrived: the client's mean is never below it.
    assert check["client_ttft_mean_ms"] >= check["server_ttft_mean_ms"]
    assert main(["report", row["id"], "--store", str(store_path)]) == 0
    assert "vLLM's own TTFT (arrival at the server" in " ".join(capsys.readouterr().out.split())  # wraps at 80


def test_a_prompt_longer_than_the_context_is_a_recorded_error(catalogue, tmp_path, capsys):
    long_prompt = "Please classify this ticket. " + "The invoice total is wrong again. " * 400
    goldset = make_set(
        tmp_path / "set",
        manifest=manifest_data(run={"attempts": 1, "temperature": 0.0, "max_tokens": 8}),
        tasks={
            "short.toml": task_data("short"),
            "long.toml": task_data("long", input={"prompt": long_prompt}),
        },
    )
    [row] = _run(catalogue, tmp_path / "runs.sqlite", goldset, capsys)["runs"]
    # vLLM answers 400 ("maximum context length"): the task was measured (the server refused
    # it), so the run completes with an error outcome; nothing is left to resume.
    assert (row["status"], row["not_done"], row["error"]) == ("completed", 0, 1)
    with Store.open(tmp_path / "runs.sqlite") as store:
        attempts = {a.task_id: a for a in store.attempts_for_run(row["id"])}
    long = attempts["long"]
    assert (long.outcome, long.error_class) == ("error", "http_4xx")
    assert "HTTP 400" in long.error and "2048" in long.error
    assert attempts["short"].outcome in ("pass", "fail")


def test_a_model_the_server_does_not_serve_is_refused_before_the_run(smollm, tmp_path, capsys):
    catalogue = tmp_path / "models.toml"
    assert _add(smollm, catalogue) == 0
    text = catalogue.read_text().replace(f'model = "{SMOLLM}"', 'model = "no-such-model"')
    catalogue.write_text(text)
    capsys.readouterr()
    store = tmp_path / "runs.sqlite"
    code = main(["run", str(SET), "--model", "smollm2-vllm", "--models", str(catalogue), "--store", str(store)])
    err = capsys.readouterr().err
    assert code == 2
    assert "does not serve model 'no-such-model'" in err and f"lists {SMOLLM}" in err
    with Store.open(store) as s:
        assert s.list_runs() == []  # nothing stored, nothing sent


def _interrupt_after(command: list[str], env: dict[str, str], tasks: int) -> tuple[int, str]:
    """Start `command` (a run, showing plain progress lines) and Ctrl-C it the moment its own
    progress says `tasks` tasks are done; return its exit code and everything it printed.

    The run's own progress line, read as it is written, and nothing slower: the server's
    metrics page (fetched twice a loop) let a machine fast enough at answering finish the whole
    run between the count and the signal, and the store commits attempts in batches."""
    proc = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert proc.stdout is not None
    lines: list[str] = []
    reached = threading.Event()

    def read() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line)
            done = re.match(r"\s+\[(\d+)\] ", line)
            if done and int(done.group(1)) >= tasks and not reached.is_set():
                proc.send_signal(signal.SIGINT)  # what Ctrl-C sends, from the reader: no delay
                reached.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    assert reached.wait(timeout=240), f"{tasks} tasks not done in 240 s:\n{''.join(lines)}"
    code = proc.wait(timeout=120)
    reader.join(timeout=30)
    return code, "".join(lines)


def test_ctrl_c_mid_run_then_resume(catalogue, tmp_path):
    store_path = tmp_path / "runs.sqlite"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    cli = [sys.executable, "-m", "compare_tui"]
    metrics_url = load_catalogue(catalogue).get("smollm2-vllm").endpoint.removesuffix("/v1") + "/metrics"
    command = [*cli, "run", str(SET), "--model", "smollm2-vllm", "--models", str(catalogue)]
    code, err = _interrupt_after([*command, "--store", str(store_path), "--concurrency", "1"], env, tasks=4)
    assert code == 130, err
    with Store.open(store_path) as store:
        run_id = store.list_runs()[0].id
    assert "--resume" in err and run_id in err
    with Store.open(store_path) as store:
        assert store.get_run(run_id).status == "interrupted"
        before = {a.task_id for a in store.attempts_for_run(run_id)}
    assert 4 <= len(before) < 21  # every task it said was done is stored
    # The request in flight was aborted by the disconnect: vLLM runs nothing for it.
    metrics = httpx.get(metrics_url, timeout=10).text
    running = [line for line in metrics.splitlines() if line.startswith("vllm:num_requests_running")]
    assert running and all(line.endswith(" 0.0") for line in running), running

    resumed = subprocess.run(
        [*cli, "run", "--resume", run_id, "--models", str(catalogue), "--store", str(store_path), "--json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads(resumed.stdout)["runs"][0]["status"] == "completed"
    with Store.open(store_path) as store:
        run = store.get_run(run_id)
        attempts = store.attempts_for_run(run_id)
    assert sorted(a.task_id for a in attempts) == sorted(p.stem for p in (SET / "tasks").iterdir())
    assert run.environment.get("resumes")  # the report says the run was interrupted
    # The server-side figures cover the resumed execution alone (an interrupted one is not read).
    resumed_tasks = {a.task_id for a in attempts} - before
    latency = run.environment["server_latency"]
    assert (latency["executions"], latency["requests_answered"]) == (1, len(resumed_tasks - TOOL_TASKS))


@pytest.fixture
def smollm_cache_details(smollm: VllmServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    """SmolLM2 on vLLM, started with `--enable-prompt-tokens-details` (`conftest.SMOLLM_ARGS`:
    answers say what came from the prefix cache), added to a catalogue."""
    path = tmp_path / "models.toml"
    assert _add(smollm, path) == 0, capsys.readouterr().err
    capsys.readouterr()
    return path


def test_vllms_prefix_cache_is_measured_and_a_cold_run_holds_it_off_with_a_salt(smollm_cache_details, tmp_path, capsys):
    """A set run twice meets vLLM's prefix cache the second time (`usage.prompt_tokens_details.
    cached_tokens`, stored per attempt); `--prompt-cache cold` sends a fresh `cache_salt` per
    request (vLLM 0.32 validates it and salts its cache blocks with it): nothing comes from the
    cache, the run records the condition as held, and the report shows it."""
    system = "You are the triage desk of a web shop. " * 20
    goldset = make_set(
        tmp_path / "set",
        manifest=manifest_data(run={"attempts": 1, "temperature": 0.0, "max_tokens": 4}),
        tasks={
            f"{n}.toml": task_data(f"t{n}", input={"system": system, "prompt": f"Parcel {n} is late."}) for n in "ab"
        },
    )
    store = tmp_path / "runs.sqlite"
    runs = [
        _run(smollm_cache_details, store, goldset, capsys, *extra)["runs"][0]
        for extra in ((), (), ("--prompt-cache", "cold"))
    ]
    assert [row["status"] for row in runs] == ["completed"] * 3  # a salt vLLM refused would be a 400
    with Store.open(store) as s:
        cached = [[a.cached_tokens for a in s.attempts_for_run(row["id"])] for row in runs]
        cold = s.get_run(runs[2]["id"])
    assert all(c and c > 0 for c in cached[1]), cached  # the second run met the first's prompts
    assert cached[2] == [0, 0], cached
    assert cold.settings["prompt_cache"] == "cold"
    assert cold.environment["prompt_cache"] == {
        "asked": "cold",
        "held": True,
        "how": "cold: a fresh cache_salt on every request (vLLM)",
    }
    assert main(["report", runs[2]["id"], "--store", str(store), "--format", "md"]) == 0
    md = capsys.readouterr().out
    assert "| prompt cache | cold: a fresh cache_salt on every request (vLLM); 0% of " in md
    assert "| tool-call parser | not stated (vLLM does not report its --tool-call-parser) |" in md

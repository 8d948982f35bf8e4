"""`compare-tui toolcall` end to end over the scripted server: what is printed, what is stored
(and what is not), the key policy, publishable runs kept apart, and `show` side by side."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from compare_tui.cli import main
from compare_tui.store import Store
from compare_tui.toolcall import NOT_AN_AGENT_TEST, NOTES_LABEL, ToolcallStore, build_table, official_suite
from tests.support.fake_openai import FakeServer, ToolCall, http_error, text, tool_calls

PARIS = tool_calls(ToolCall("get_weather", {"city": "Paris"}))


def catalogue(tmp_path: Path, url: str, *, key_env: str | None = None, name: str = "fake") -> str:
    path = tmp_path / f"{name}.toml"
    path.write_text(f"""[[model]]
name = "{name}"
kind = "hosted"
endpoint = "{url}"
model = "fake-model"
revision = "2026-12-01"
weights_digest = "sha256:{"0" * 64}"
{f'key_env = "{key_env}"' if key_env else ""}
""")
    return str(path)


def toolcall(tmp_path, url, *args, capsys, key_env=None, name="fake"):
    code = main(
        [
            "toolcall",
            "--model",
            name,
            "--models",
            catalogue(tmp_path, url, key_env=key_env, name=name),
            "--store",
            str(tmp_path / "runs.sqlite"),
            *args,
        ]
    )
    out = capsys.readouterr()
    return code, out.out, out.err


def stored_rows(tmp_path, table="toolcall_results") -> list[str]:
    with sqlite3.connect(tmp_path / "runs.sqlite") as db:
        return [row[0] for row in db.execute(f"SELECT result FROM {table}")]


def _keys(value) -> list[str]:
    if isinstance(value, dict):
        return [*value, *(k for v in value.values() for k in _keys(v))]
    if isinstance(value, list):
        return [k for v in value for k in _keys(v)]
    return []


def test_json_run_states_its_limits_and_labels_the_notes(tmp_path, capsys):
    with FakeServer(default=PARIS) as server:
        code, out, _ = toolcall(
            tmp_path,
            server.url,
            "--scenario",
            "S01",
            "--scenario",
            "irrelevance.*",
            "--json",
            "--note",
            "chat_template=chatml",
            "--note",
            "parser=hermes",
            capsys=capsys,
        )
    assert code == 0
    data = json.loads(out)
    assert data["statement"] == NOT_AN_AGENT_TEST and data["user_notes_label"] == NOTES_LABEL
    [run] = data["runs"]
    assert run["user_notes"] == {"chat_template": "chatml", "parser": "hermes"}
    assert (run["model_name"], run["endpoint"], run["suite_version"]) == ("fake", server.url, official_suite().version)
    assert run["created_at"] and run["suite_digest"] == official_suite().digest
    assert [r["scenario_id"] for r in run["results"]] == ["S01", "S19", "S20"]
    assert run["outcome_counts"] == {"pass": 1, "fail": 2, "unsupported": 0, "error": 0}
    assert not any(word in key for key in _keys(data) for word in ("score", "rank", "rate"))
    assert run["results"][0]["calls"][0]["arguments"] is None  # not kept
    assert all("Paris" not in row for row in stored_rows(tmp_path))


def test_keep_arguments_stores_the_values(tmp_path, capsys):
    with FakeServer(default=PARIS) as server:
        code, out, err = toolcall(tmp_path, server.url, "--scenario", "S01", "--keep-arguments", capsys=capsys)
    assert code == 0 and "S01 simple.basic" in out and "✓ pass" in out and "[ 1/1]" in err
    assert NOT_AN_AGENT_TEST in out
    [row] = stored_rows(tmp_path)
    assert json.loads(row)["calls"][0]["arguments"] == {"city": "Paris"}


def test_unsupported_is_explained_as_the_serving_setup(tmp_path, capsys):
    with FakeServer(default=http_error(500, "tools param requires --jinja flag")) as server:
        code, out, _ = toolcall(tmp_path, server.url, "--scenario", "S0[12]", capsys=capsys)
    grid = [line for line in out.splitlines() if line.startswith(("S01 ", "S02 ")) and ":" not in line]
    assert code == 0 and len(grid) == 2 and all(line.endswith("⊘ unsupported") for line in grid)
    assert "serving setup" in out and "not the model" in out


def test_a_provider_key_is_refused_before_anything_is_sent(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("TC_KEY", "sk-proj-" + "a" * 40)
    with FakeServer(default=PARIS) as server:
        code, _, err = toolcall(tmp_path, server.url, "--scenario", "S01", capsys=capsys, key_env="TC_KEY")
        assert server.requests == []
    assert code == 2 and "provider API key" in err and "a" * 40 not in err


def test_a_virtual_key_is_sent_as_bearer(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("TC_KEY", "vk-team-123")
    with FakeServer(default=PARIS) as server:
        code, _, _ = toolcall(tmp_path, server.url, "--scenario", "S01", capsys=capsys, key_env="TC_KEY")
        chats = [r for r in server.requests if r.path.endswith("/chat/completions")]
    assert code == 0 and chats[0].headers["authorization"] == "Bearer vk-team-123"


def test_publishable_runs_are_stored_apart_and_hold_no_user_tools(tmp_path, capsys):
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps([{"name": "lookup", "parameters": {"type": "object"}}]))
    with FakeServer(default=PARIS) as server:
        code, _, err = toolcall(tmp_path, server.url, "--publishable", "--tools", str(tools), capsys=capsys)
        assert code == 2 and "official suite only" in err and server.requests == []
        code, _, err = toolcall(tmp_path, server.url, "--publishable", "--scenario", "S01", capsys=capsys)
        assert code == 2 and "drop --scenario" in err
        code, _, _ = toolcall(tmp_path, server.url, "--publishable", capsys=capsys)
        assert code == 0
    assert len(stored_rows(tmp_path, "toolcall_published_results")) == len(official_suite().scenarios)
    assert stored_rows(tmp_path, "toolcall_results") == []
    main(["toolcall", "runs", "--store", str(tmp_path / "runs.sqlite")])
    assert "no tool-call runs stored" in capsys.readouterr().out
    main(["toolcall", "runs", "--publishable", "--store", str(tmp_path / "runs.sqlite")])
    assert "fake" in capsys.readouterr().out


def test_user_tools_run_under_their_original_names(tmp_path, capsys):
    tools = tmp_path / "mcp.json"
    tools.write_text(
        json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "result": {
                    "tools": [
                        {
                            "name": "files.read",
                            "inputSchema": {
                                "type": "object",
                                "properties": {"path": {"type": "string", "format": "uri"}},
                                "required": ["path"],
                            },
                        }
                    ]
                },
            }
        )
    )
    plan = tool_calls(ToolCall("files_read", {"path": "/etc/hosts"}))
    with FakeServer(default=plan) as server:
        code, out, _ = toolcall(
            tmp_path, server.url, "--tools", str(tools), "--scenario", "T*", "--json", capsys=capsys
        )
        sent = server.requests[-1].body
    assert code == 0 and sent["tools"][0]["function"]["name"] == "files_read"
    run = json.loads(out)["runs"][0]
    named, auto, required, irrelevance = run["results"]
    assert auto["name"] == "user.auto:files.read" and auto["outcome"] == "pass"
    assert named["name"] == "user.named:files.read" and named["outcome"] == "pass"
    assert named["calls"][0]["name"] == "files.read"
    assert any("format" in n for n in named["not_checked"])
    assert irrelevance["outcome"] == "fail" and required["outcome"] == "pass"
    assert run["tools_file"]["tools"][0] == {
        "name": "files.read",
        "wire_name": "files_read",
        "source": "mcp",
        "not_checked": ["format at /properties/path (not evaluated by these checks)"],
        "kept_for_report": [],
    }


def test_show_puts_runs_side_by_side(tmp_path, capsys):
    with (
        FakeServer(default=PARIS) as good,
        FakeServer(default=http_error(500, "tools param requires --jinja flag")) as bad,
    ):
        toolcall(tmp_path, good.url, "--scenario", "S0[1-3]", capsys=capsys, name="alpha")
        toolcall(tmp_path, bad.url, "--scenario", "S01", capsys=capsys, name="beta")
    with Store.open(tmp_path / "runs.sqlite") as store:
        newest, older = ToolcallStore(store).list_runs()
        runs = [ToolcallStore(store).get(older.id[:6]), ToolcallStore(store).get(newest.id)]
    assert main(["toolcall", "show", older.id, newest.id[:8], "--store", str(tmp_path / "runs.sqlite")]) == 0
    out = capsys.readouterr().out
    assert "[1] alpha" in out and "[2] beta" in out and "· not run" in out
    table = build_table(runs)
    assert [row.scenario_id for row in table.rows] == ["S01", "S02", "S03"]
    assert table.cell(0, 1).text == "⊘ unsupported" and table.cell(1, 1) is None
    assert any("not the model" in c for c in table.caveats)


@pytest.mark.parametrize(
    "args, message",
    [
        (["--note", "novalue"], "expected KEY=VALUE"),
        (["--scenario", "nothing-matches"], "no scenario matches"),
        (["--tools", "/nonexistent/tools.json"], "cannot be read"),
    ],
)
def test_bad_input_is_one_clear_line(tmp_path, capsys, args, message):
    with FakeServer(default=PARIS) as server:
        code, _, err = toolcall(tmp_path, server.url, *args, capsys=capsys)
    assert code == 2 and message in err and "Traceback" not in err


def test_unknown_model_and_missing_model(tmp_path, capsys):
    assert main(["toolcall", "--model", "nope", "--models", catalogue(tmp_path, "http://127.0.0.1:9/v1")]) == 2
    assert "unknown model 'nope'" in capsys.readouterr().err
    assert main(["toolcall"]) == 2
    assert "give --model" in capsys.readouterr().err


def test_list_shows_every_scenario_with_its_checks(capsys):
    assert main(["toolcall", "list", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["version"] == official_suite().version and len(data["scenarios"]) == 28
    s17 = next(s for s in data["scenarios"] if s["id"] == "S17")
    assert s17["checks"] == ["refused"]
    assert "stream_assembly" in next(s for s in data["scenarios"] if s["id"] == "S26")["checks"]


def test_an_answer_the_model_never_finished_is_still_recorded(tmp_path, capsys):
    with FakeServer(default=text("no call")) as server:
        code, out, _ = toolcall(tmp_path, server.url, "--scenario", "S1[45]", "--json", capsys=capsys)
    assert code == 0
    assert [r["outcome"] for r in json.loads(out)["runs"][0]["results"]] == ["pass", "fail"]


async def test_an_interrupted_run_keeps_what_finished(tmp_path):
    import asyncio

    from compare_tui.toolcall import RunRequest, execute, select
    from tests.support.builders import hosted_entry
    from tests.support.fake_openai import Answer

    slow_when_streamed = lambda body, count: Answer(headers_delay_s=30) if body["stream"] else PARIS  # noqa: E731
    suite = official_suite()
    with FakeServer(slow_when_streamed) as server, Store.open(tmp_path / "runs.sqlite") as store:
        heard = asyncio.Event()
        request = RunRequest(hosted_entry(server.url), suite, select(suite.scenarios, ["S01", "S26"]))
        task = asyncio.create_task(execute(request, store=ToolcallStore(store), on_result=lambda *_: heard.set()))
        await asyncio.wait_for(heard.wait(), 10)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        [run] = ToolcallStore(store).list_runs()
        stored = ToolcallStore(store).get(run.id)
    assert stored.status == "interrupted" and [r.scenario_id for r in stored.results] == ["S01"]
    assert "A run did not finish" in " ".join(build_table([stored]).caveats)

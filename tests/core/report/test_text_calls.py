"""Tool calls written as text that the server did not parse read as serving-stack results
(issue 37): a caveat per model and a note on the decision line on every surface, and the
`tool_call` scorer's opt-in `accept_text_calls` ("passed as text", its own column).

The runs go through the real engine and store against the scripted loopback server, which
answers like a llama.cpp whose parser does not read the model's calls: as a ```json block in
the answer's content.
"""

from __future__ import annotations

import html
import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from compare_tui.goldset.models import Task, ToolCallScorer
from compare_tui.scoring.result import Answer as ScoredAnswer
from compare_tui.scoring.result import Outcome, ToolCall
from compare_tui.scoring.tool_call import score_tool_call
from tests.core.experiment.test_experiment_helpers import catalogue, cli, entry
from tests.support.builders import write_set
from tests.support.fake_openai import FakeServer, text, tool_calls
from tests.support.fake_openai import ToolCall as WireCall

WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
}
PARIS = {"city": "Paris"}


def fenced(arguments: dict) -> str:
    return "```json\n" + json.dumps({"name": "get_weather", "arguments": arguments}) + "\n```"


def weather_set(root: Path, *, accept: bool = False) -> Path:
    """w1…w4 expect get_weather(city=Paris); h1 expects plain text (exact)."""
    scorer = {"kind": "tool_call", "match": "exact"} | ({"accept_text_calls": True} if accept else {})
    tool_task = {
        "input": {"prompt": "", "tools": [WEATHER], "tool_choice": "auto"},
        "expected": {"tool_call": {"name": "get_weather", "arguments": PARIS}},
        "scorer": scorer,
    }
    extra = {t: json.loads(json.dumps(tool_task)) for t in ("w1", "w2", "w3", "w4")}
    for task_id, task in extra.items():
        task["input"]["prompt"] = task_id
    return write_set(root, {"w1": "", "w2": "", "w3": "", "w4": "", "h1": "hello"}, extra=extra)


def script(body: dict, count: int):
    """`base` writes its calls as text (w1, w2 right; w3 wrong city), parses w4; `cand` calls
    properly everywhere. Both answer h1 with "hello"."""
    prompt = body["messages"][-1]["content"]
    if prompt == "h1":
        return text("hello")
    if body["model"] == "base" and prompt in ("w1", "w2"):
        return text(fenced(PARIS))
    if body["model"] == "base" and prompt == "w3":
        return text(fenced({"city": "Lyon"}))
    return tool_calls(WireCall("get_weather", PARIS))


@pytest.fixture
def world(tmp_path):
    server = FakeServer(script).__enter__()
    models = catalogue(tmp_path / "models.toml", entry(server.url, "base"), entry(server.url, "cand"))
    yield tmp_path, models
    server.__exit__(None, None, None)


def run_both(tmp_path: Path, models: Path, goldset: Path):
    """Run `base` (the baseline) and `cand` over the set; a function giving the comparison's
    report in a format."""
    store = str(tmp_path / "runs.sqlite")
    args = ("run", str(goldset), "--baseline", "base", "--model", "cand", "--models", str(models))
    ran = cli(*args, "--store", store, "--json")
    assert ran.code == 0, ran.err
    comparison = json.loads(ran.out)["comparison"]

    def report(fmt: str) -> str:
        if fmt == "html":  # the published page
            shown = cli("publish", comparison, "--store", store, "--out", str(tmp_path / "page"))
            assert shown.code == 0, shown.err
            return (tmp_path / "page" / "index.html").read_text(encoding="utf-8")
        shown = cli("report", comparison, "--store", store, "--format", fmt)
        assert shown.code == 0, shown.err
        return shown.out

    report.store, report.comparison = store, comparison  # type: ignore[attr-defined]
    return report


CAVEAT = (
    "base: 3 of 3 failed tasks are tool calls written as text that this server did not parse (name and "
    "arguments right in 2 of them): a serving-stack result — chat template / tool parser — not the model's ability."
)
NOTE = (
    "Note: 3 of the 3 failed tasks of the baseline base are tool calls written as text that the server did not "
    "parse (a serving-stack result, not the model's ability)."
)


def test_text_calls_are_named_at_the_top_of_every_surface(world):
    tmp_path, models = world
    reported = run_both(tmp_path, models, weather_set(tmp_path / "set"))
    report = json.loads(reported("json"))
    assert {"code": "text_calls", "text": CAVEAT} in report["caveats"]
    assert not [c for c in report["caveats"] if c["text"].startswith("cand:") and c["code"] == "text_calls"]
    assert report["decision"]["summary"].endswith(NOTE)
    figures = {m["label"]: m["text_calls"] for m in report["models"]}
    assert figures["base"] == {"failed": 3, "as_text": 3, "right": 2, "unknown": 0, "passed_as_text": 0}
    assert figures["cand"] == {"failed": 0, "as_text": 0, "right": 0, "unknown": 0, "passed_as_text": 0}
    # The same sentences in the terminal, Markdown and JUnit (one place computes them).
    plain = " ".join(re.sub("[┃│]", " ", reported("text")).split())  # unwrapped, box borders gone
    assert CAVEAT in plain and NOTE in plain
    markdown = reported("md")
    assert CAVEAT in markdown and NOTE in markdown and "✓ as text" not in markdown
    page = html.unescape(reported("html"))
    assert CAVEAT in page and NOTE in page
    junit = ET.fromstring(reported("junit"))
    assert CAVEAT in [p.get("value") for p in junit.iter("property") if p.get("name") == "text_calls"]
    assert NOTE in [p.get("value") for p in junit.iter("property") if p.get("name") == "summary"][0]


@pytest.fixture
def text_call_runs(world):
    """The two runs stored (in a sync fixture: the CLI runs its own event loop)."""
    tmp_path, models = world
    return tmp_path, models, run_both(tmp_path, models, weather_set(tmp_path / "set"))


async def test_the_tui_report_names_them_too(text_call_runs):
    from textual.widgets import Static

    from compare_tui.store import Store
    from compare_tui.tui.app import create_app
    from tests.support.home_app import settle
    from tests.tui.test_tui_data import fixed_probe

    tmp_path, models, reported = text_call_runs
    store = Store.open(Path(reported.store))
    app = create_app(store=store, catalogue_path=models, sets_dir=tmp_path, reviewer="tester", probe=fixed_probe)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        pilot.app.open_report(reported.comparison)
        await settle(pilot)
        shown = {w.id: " ".join(str(w.render()).split()) for w in pilot.app.screen.query(Static) if w.id}
        assert NOTE in shown["decision"]
        assert CAVEAT in shown["caveats"]
    store.close()


def test_accept_text_calls_passes_right_calls_as_text_and_counts_them_apart(world):
    tmp_path, models = world
    reported = run_both(tmp_path, models, weather_set(tmp_path / "set", accept=True))
    report = json.loads(reported("json"))
    base = next(m for m in report["models"] if m["label"] == "base")
    assert base["text_calls"] == {"failed": 1, "as_text": 1, "right": 0, "unknown": 0, "passed_as_text": 2}
    assert base["pass_rate"]["passed"] == 4  # w1, w2 (as text), w4, h1
    details = {t["id"]: t["detail"] for t in base["tasks"]}
    assert details["w1"].startswith("passed as text: [tool call] get_weather(")
    assert any(c["code"] == "passed_as_text" for c in report["caveats"])
    markdown = reported("md")
    header = next(line for line in markdown.splitlines() if line.startswith("| model |"))
    row = next(line for line in markdown.splitlines() if line.startswith("| base |"))
    cells = dict(zip(header.split("|"), row.split("|"), strict=True))
    assert cells[" ✓ as text "].strip() == "2"
    assert "✓ as text" in reported("text")


def _task(accept: bool, arguments: dict) -> tuple[Task, ToolCallScorer]:
    task = Task.model_validate(
        {
            "id": "w",
            "input": {"prompt": "weather?", "tools": [WEATHER]},
            "expected": {"tool_call": {"name": "get_weather", "arguments": arguments}},
        }
    )
    return task, ToolCallScorer(kind="tool_call", accept_text_calls=accept)


@pytest.mark.parametrize(
    ("accept", "written", "outcome", "right"),
    [
        (False, PARIS, Outcome.FAIL, True),
        (True, PARIS, Outcome.PASS, True),
        (True, {"city": "Lyon"}, Outcome.FAIL, False),
    ],
)
def test_scorer_option_is_off_by_default_and_needs_the_right_call(accept, written, outcome, right):
    task, spec = _task(accept, PARIS)
    result = score_tool_call(task, spec, ScoredAnswer(text=fenced(written)))
    assert result.outcome is outcome
    assert result.data["text_call_right"] is right
    assert result.data.get("passed_as_text", False) is (outcome is Outcome.PASS)
    parsed = score_tool_call(task, spec, ScoredAnswer(tool_calls=(ToolCall("get_weather", json.dumps(PARIS)),)))
    assert parsed.outcome is Outcome.PASS and "passed as text" not in parsed.detail


def test_the_option_left_off_keeps_a_sets_digest(tmp_path):
    from compare_tui.goldset import load_golden_set

    plain = load_golden_set(weather_set(tmp_path / "a")).digest
    (tmp_path / "b").mkdir()
    stated_off = weather_set(tmp_path / "b")
    for path in (stated_off / "tasks").glob("w*.json"):
        task = json.loads(path.read_text())
        task["scorer"]["accept_text_calls"] = False
        path.write_text(json.dumps(task))
    assert load_golden_set(stated_off).digest == plain
    assert load_golden_set(weather_set(tmp_path / "c", accept=True)).digest != plain


def test_runs_scored_before_the_flag_was_stored_still_tell_right_from_wrong():
    from compare_tui.report.inputs import text_call_kind

    old = {"expected_name": "get_weather", "expected_arguments": PARIS, "match": "exact"}
    right = old | {"written_as_text": '[tool call] get_weather({"city":"Paris"})'}
    wrong = old | {"written_as_text": '[tool call] get_weather({"city":"Lyon"})'}
    assert text_call_kind(right) == "right" and text_call_kind(wrong) == "wrong"
    assert text_call_kind({"written_as_text": "[tool call] get_weather({})"}) == "unknown"
    assert text_call_kind(right | {"text_call_right": False}) == "wrong"  # the recorded answer wins
    assert text_call_kind({"calls": []}) is None

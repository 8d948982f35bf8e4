"""The optional analyst (`compare-tui insights … --analyst MODEL`) against a scripted server:
its reply's sentences checked against the data (a false citation dropped and counted), its one
request audited with no run, its cost apart; and the citation checker's rules, one by one."""

from __future__ import annotations

import json
import sqlite3

from compare_tui.cli import main
from compare_tui.insights import FailedAttempt, InsightInputs, ModelAttempts, build_insights
from compare_tui.judge.analyst import check_claims
from compare_tui.vocabulary import Outcome
from tests.core.test_insights import CATALOGUE, stored  # noqa: F401  (stored is a fixture)
from tests.support.fake_openai import FakeServer, text

# Groups of the `stored` comparison: 1 wrong label (fake-a 1, fake-b 3), 2 truncated (fake-b 2),
# 3 empty, 4 no JSON, 5 refusal, … (docs/insights.md shows them).
REPLY = """SUMMARY: fake-b fails far more often than fake-a, mostly on wrong labels and cut answers [G1, G2]. fake-a truncates its answers [G2].
INSIGHT: Both models answer billing where wrong-key expects bug: check the golden set [T:wrong-key].
INSIGHT: fake-b refuses on tool tasks [G5, T:tool-args].
INSIGHT: The German tickets are all lost [T:de-9].
INSIGHT: Keep the current model."""


def test_a_false_citation_is_dropped_and_counted_and_the_request_audited(stored, tmp_path, capsys):  # noqa: F811
    with FakeServer(lambda body, count: text(REPLY)) as server:
        models = tmp_path / "analyst.toml"
        models.write_text(CATALOGUE.format(name="analyst", url=server.url, zeros="0" * 64))
        capsys.readouterr()
        args = ["insights", "latest", "--store", str(stored), "--analyst", "analyst", "--models", str(models)]
        assert main([*args, "--format", "json"]) == 0
        (request,) = [r for r in server.requests if r.path.endswith("/chat/completions")]
    doc = json.loads(capsys.readouterr().out)["analyst"]
    evidence = request.body["messages"][-1]["content"]
    assert 'G1: wrong label: expected "bug", got "billing"' in evidence and "Tasks: de-1, label, wrong-key." in evidence
    assert "The decision (fixed statistics): Keep fake-a" in evidence
    kept = [c["text"] for c in doc["claims"] if c["dropped"] is None]
    assert kept == [
        "fake-b fails far more often than fake-a, mostly on wrong labels and cut answers [G1, G2].",
        "Both models answer billing where wrong-key expects bug: check the golden set [T:wrong-key].",
    ]
    dropped = {c["text"]: c["dropped"] for c in doc["claims"] if c["dropped"] is not None}
    assert dropped == {
        "fake-a truncates its answers [G2].": "names fake-a for group 2, where it failed",
        "fake-b refuses on tool tasks [G5, T:tool-args].": "cites task tool-args, which is in none of its groups (G5)",
        "The German tickets are all lost [T:de-9].": "cites task de-9, which the evidence does not show",
        "Keep the current model.": "cites no group or task",
    }
    assert (doc["kept"], doc["dropped"]) == (2, 4)
    usage = doc["usage"]
    assert (usage["calls"], usage["failed"]) == (1, 0) and usage["cost"] is not None  # the entry's token price
    with sqlite3.connect(stored) as conn:
        rows = conn.execute("SELECT run_id, model, task_id, state FROM audit WHERE model = 'analyst'").fetchall()
    assert rows == [(None, "analyst", "(insights)", "done")]
    # The text: the insights, then the analyst's kept sentences, the dropped ones with why, the cost.
    with FakeServer(lambda body, count: text(REPLY)) as server:
        models.write_text(CATALOGUE.format(name="analyst", url=server.url, zeros="0" * 64))
        assert main(args) == 0
    out = capsys.readouterr().out
    assert "Analyst analyst (" in out and "2 sentences kept, 4 dropped" in out
    assert "dropped: The German tickets are all lost [T:de-9]. — cites task de-9" in out
    assert "Analyst cost (apart from every model's figures): 1 call" in out
    assert max(len(line) for line in out.splitlines()) <= 80


def test_an_analyst_the_catalogue_lacks_is_refused_before_anything_is_sent(stored, tmp_path, capsys):  # noqa: F811
    models = tmp_path / "analyst.toml"
    models.write_text(CATALOGUE.format(name="analyst", url="http://127.0.0.1:9/v1", zeros="0" * 64))
    assert main(["insights", "latest", "--store", str(stored), "--analyst", "nobody", "--models", str(models)]) == 2
    assert "nobody" in capsys.readouterr().err
    assert main(["insights", "latest", "--store", str(stored), "--analyst", "x", "--group", "1"]) == 2
    assert "leave out --group" in capsys.readouterr().err


def test_the_checker_reads_citations_in_their_forms() -> None:
    def failed(task: str) -> FailedAttempt:
        return FailedAttempt(task, 1, Outcome.FAIL, "exact", "x", score_data={"expected": "a", "got": "b"})

    model = ModelAttempts("m", "r", {"t1": (Outcome.FAIL,), "t2": (Outcome.FAIL,)}, (failed("t1"), failed("t2")))
    insights = build_insights(InsightInputs(ref="c", models=(model,)))
    claims = check_claims(
        "- **Summary**: m gets t1 wrong [group 1]. Also [T t2]\nINSIGHT: see [G1,T:t1] and [task:t2].\n"
        "INSIGHTS: nothing [G2]. A note [see above].",
        insights,
    )
    assert [(c.kind, c.groups, c.tasks, c.dropped) for c in claims] == [
        ("summary", (1,), (), None),
        ("summary", (), ("t2",), None),
        ("insight", (1,), ("t1", "t2"), None),
        ("insight", (2,), (), "cites group 2, which does not exist"),
        ("insight", (), (), "cites no group or task (see above is not a citation)"),
    ]

"""`compare-tui experiment …` end to end against fake OpenAI servers: a real store, the real
engine, scripted plans that make one task flaky, run reuse, runs in flight, and confounds."""

from __future__ import annotations

import json

import pytest

from compare_tui.catalogue import load_catalogue
from compare_tui.engine import RunOverrides, prepare_run
from compare_tui.goldset import load_golden_set
from compare_tui.store import Store
from tests.core.experiment.test_experiment_helpers import catalogue, cli, entry, three_task_set
from tests.support.fake_openai import FakeServer, text

# alpha: t2 passes on its 1st and 3rd request only, t3 never passes; beta passes everything.
ALPHA = {
    "t1": text("ok"),
    "t2": [text("ok"), text("no"), text("ok")],
    "t3": text("no"),
    "s1": text("ok"),
    "h1": text("hello"),
}
BETA = {"t1": text("ok"), "t2": text("ok"), "t3": text("ok"), "s1": text("ok"), "h1": text("hello")}


@pytest.fixture
def world(tmp_path):
    """Two fake servers, a catalogue naming them alpha and beta, a set, a store path."""
    with FakeServer(ALPHA) as alpha, FakeServer(BETA) as beta:
        models = catalogue(tmp_path / "models.toml", entry(alpha.url, "alpha"), entry(beta.url, "beta"))
        goldset = three_task_set(tmp_path / "set", human=True, scorer_error=True)
        yield {
            "alpha": alpha,
            "beta": beta,
            "models": str(models),
            "set": str(goldset),
            "store": str(tmp_path / "runs.sqlite"),
            "tmp": tmp_path,
        }


def new(world, name="e1", *extra):
    return cli(
        "experiment",
        "new",
        name,
        world["set"],
        "--arm",
        "alpha",
        "--arm",
        "beta",
        "--repeats",
        "3",
        "--models",
        world["models"],
        "--store",
        world["store"],
        *extra,
    )


def run(world, name="e1", *extra, models=None):
    return cli(
        "experiment", "run", name, "--json", "--models", models or world["models"], "--store", world["store"], *extra
    )


def show(world, name="e1"):
    result = cli("experiment", "show", name, "--json", "--store", world["store"])
    assert result.code == 0, result.err
    return json.loads(result.out)


def requests(world) -> int:
    return len([r for s in (world["alpha"], world["beta"]) for r in s.requests if r.path.endswith("/chat/completions")])


def test_an_experiment_runs_each_arm_n_times_and_shows_intervals_flaky_tasks_and_exclusions(world):
    created = new(world)
    assert created.code == 0, created.err
    assert "alpha: 0 of 3 runs already held" in created.out
    launched = run(world)
    assert launched.code == 0, launched.err
    assert "launched 6 run(s)" in launched.err
    doc = json.loads(launched.out)
    assert doc["complete"] and doc["to_launch"] == 0 and doc["confounds"] == []
    alpha, beta = doc["arms"]
    assert (alpha["observed"], alpha["desired"]) == (3, 3)
    assert alpha["flaky"] == ["t2"]
    states = {t["task_id"]: (t["state"], t["passed"], t["conclusive"]) for t in alpha["tasks"]}
    assert states == {
        "t1": ("consistent pass", 3, 3),
        "t2": ("flaky", 2, 3),
        "t3": ("consistent fail", 0, 3),
        "s1": ("inconclusive", 0, 0),
    }
    # h1 is scored by a person and s1's check program fails on its own: both leave the pass rate.
    assert alpha["human_tasks"] == 1 and alpha["inconclusive"] == 3
    assert [r["rate"] for r in alpha["runs"]] == pytest.approx([2 / 3, 1 / 3, 2 / 3])
    assert alpha["pass_rate"] == pytest.approx(5 / 9)
    assert alpha["interval"]["low"] <= alpha["pass_rate"] <= alpha["interval"]["high"]
    assert beta["pass_rate"] == 1.0 and beta["flaky"] == []
    # Every surface shows identical numbers: reading again gives the same document.
    assert show(world) == doc
    text_view = cli("experiment", "show", "e1", "--store", world["store"]).out
    assert "flaky: t2 (2/3 runs passed)" in text_view and "95% CI" in text_view
    listing = cli("experiment", "list", "--store", world["store"])
    assert "e1" in listing.out and "alpha 3/3" in listing.out


def test_a_complete_experiment_launches_nothing_and_delete_keeps_the_runs(world):
    assert new(world).code == 0 and run(world).code == 0
    sent = requests(world)
    again = run(world)
    assert again.code == 0 and "is complete" in again.err and "nothing launched" in again.err
    assert requests(world) == sent
    assert cli("experiment", "delete", "e1", "--store", world["store"]).code == 0
    with Store.open(world["store"]) as store:
        assert len(store.list_runs()) == 6 and store.list_experiments() == []


def test_a_plain_run_of_the_same_cell_is_taken_in_and_a_second_experiment_over_it_launches_nothing(world):
    plain = cli(
        "run", world["set"], "--model", "alpha", "--models", world["models"], "--store", world["store"], "--json"
    )
    assert plain.code == 0, plain.err
    plain_id = json.loads(plain.out)["runs"][0]["id"]
    created = new(world)
    assert "alpha: 1 of 3 runs already held" in created.out and "2 to launch" in created.out
    launched = run(world)
    assert "launched 5 run(s)" in launched.err
    doc = json.loads(launched.out)
    assert doc["arms"][0]["runs"][0]["id"] == plain_id  # the plain run holds the first place
    sent = requests(world)
    assert new(world, "e2").code == 0
    second = run(world, "e2")
    assert second.code == 0 and "is complete" in second.err and requests(world) == sent
    assert [a["cell"] for a in show(world, "e2")["arms"]] == [a["cell"] for a in doc["arms"]]


def test_runs_in_flight_hold_a_place_and_n_can_be_raised_and_lowered(world):
    assert new(world).code == 0
    with Store.open(world["store"]) as store:  # a run prepared elsewhere and not yet executed
        goldset = load_golden_set(world["tmp"] / "set")
        pending = prepare_run(store, goldset, load_catalogue(world["models"]).get("alpha"), RunOverrides()).run.id
    launched = run(world)
    assert "launched 5 run(s)" in launched.err  # alpha: 3 − 0 held − 1 in flight
    doc = json.loads(launched.out)
    assert doc["arms"][0]["in_flight"] == [pending] and doc["arms"][0]["observed"] == 2 and not doc["complete"]
    raised = run(world, "e1", "--repeats", "4")
    doc = json.loads(raised.out)
    assert "launched 2 run(s)" in raised.err  # one more for each arm (alpha still has one in flight)
    assert [(a["observed"], a["desired"]) for a in doc["arms"]] == [(3, 4), (4, 4)]
    lowered = json.loads(run(world, "e1", "--repeats", "2").out)
    assert [(a["observed"], a["spare"]) for a in lowered["arms"]] == [(2, 1), (2, 2)]


def test_a_run_against_a_different_model_file_or_server_build_is_a_confound(world):
    assert new(world).code == 0 and run(world).code == 0
    # The same catalogue name, endpoint and serving notes, but other weights: a copied entry.
    other = world["tmp"] / "other-file.toml"
    catalogue(
        other,
        entry(world["alpha"].url, "alpha", weights_digest="sha256:" + "e" * 64, revision="2027-02-02"),
        entry(world["beta"].url, "beta"),
    )
    stray = cli("run", world["set"], "--model", "alpha", "--models", str(other), "--store", world["store"], "--json")
    stray_id = json.loads(stray.out)["runs"][0]["id"]
    assert cli("experiment", "delete", "e1", "--store", world["store"]).code == 0
    assert (
        cli(
            "experiment",
            "new",
            "e3",
            world["set"],
            "--arm",
            "alpha",
            "--arm",
            "beta",
            "--repeats",
            "4",
            "--models",
            world["models"],
            "--store",
            world["store"],
        ).code
        == 0
    )
    world["beta"].props = {**world["beta"].props, "build_info": "b10000-rebuilt"}
    doc = json.loads(run(world, "e3").out)
    found = {(c["arm"], c["variable"]): c for c in doc["confounds"]}
    assert set(found) == {("alpha", "weights digest"), ("alpha", "revision"), ("beta", "server build")}
    odd = found[("alpha", "weights digest")]["values"][-1]
    assert odd == {"value": "sha256:" + "e" * 64, "sources": [stray_id]}
    banner = cli("experiment", "show", "e3", "--store", world["store"]).out
    assert banner.startswith("⚠ CONFOUND") and stray_id[:8] in banner and "b10000-rebuilt" in banner
    listing = cli("experiment", "list", "--store", world["store"]).out
    assert "⚠ 3 confound(s)" in listing and "CONFOUND — alpha: weights digest" in listing
    # Launching from the changed catalogue is refused before anything is sent.
    sent = requests(world)
    refused = run(world, "e3", "--repeats", "5", models=str(other))
    assert refused.code == 2 and "changed since the experiment was made" in refused.err and requests(world) == sent


@pytest.mark.parametrize(
    "args, message",
    [
        (("--arm", "alpha"), "at least two arms"),
        (("--arm", "alpha", "--arm", "alpha"), "identical configuration"),
        (("--arm", "alpha", "--arm", "beta", "--repeats", "51"), "1..50"),
        (("--arm", "alpha", "--arm", "gamma"), "unknown model 'gamma'"),
        (("--arm", "alpha", "--arm", "beta temperature=7"), "temperature"),
    ],
)
def test_bad_experiments_are_refused_with_exit_2(world, args, message):
    result = cli(
        "experiment", "new", "bad", world["set"], *args, "--models", world["models"], "--store", world["store"]
    )
    assert result.code == 2 and message in result.err, result.err


def test_unknown_and_duplicate_names_exit_2(world):
    assert cli("experiment", "show", "nope", "--store", world["store"]).code == 2
    assert cli("experiment", "run", "nope", "--store", world["store"]).code == 2
    assert cli("experiment", "delete", "nope", "--store", world["store"]).code == 2
    assert new(world).code == 0
    duplicate = new(world)
    assert duplicate.code == 2 and "already exists" in duplicate.err
    assert (
        cli(
            "experiment",
            "new",
            "bad name",
            world["set"],
            "--arm",
            "alpha",
            "--arm",
            "beta",
            "--models",
            world["models"],
            "--store",
            world["store"],
        ).code
        == 2
    )


def test_asked_to_arms_on_different_endpoints_of_one_host_run_at_the_same_time_one_endpoint_one_run(tmp_path):
    slow = text("ok", chunk_chars=1, chunk_delay_s=0.02)
    with FakeServer(default=slow) as one, FakeServer(default=slow) as two:
        # alpha and gamma share an endpoint (one server), beta has its own.
        models = catalogue(
            tmp_path / "models.toml", entry(one.url, "alpha"), entry(two.url, "beta"), entry(one.url, "gamma")
        )
        goldset = three_task_set(tmp_path / "set")
        store_path = str(tmp_path / "runs.sqlite")
        arms = ["--arm", "alpha", "--arm", "beta", "--arm", "gamma"]
        created = cli(
            "experiment",
            "new",
            "e",
            str(goldset),
            *arms,
            "--repeats",
            "2",
            "--models",
            str(models),
            "--store",
            store_path,
        )
        assert created.code == 0, created.err
        launched = cli(
            "experiment", "run", "e", "--json", "--same-host-at-once", "--models", str(models), "--store", store_path
        )
        assert launched.code == 0, launched.err
    with Store.open(store_path) as store:
        runs = {r.model_name: [] for r in store.list_runs()}
        for r in store.list_runs():
            runs[r.model_name].append((r.started_at, r.finished_at))

    def overlap(a, b):
        return a[0] < b[1] and b[0] < a[1]

    assert {name: len(spans) for name, spans in runs.items()} == {"alpha": 2, "beta": 2, "gamma": 2}
    shared = runs["alpha"] + runs["gamma"]
    # One endpoint never serves two runs at once...
    assert not any(overlap(a, b) for i, a in enumerate(shared) for b in shared[i + 1 :])
    # ...while the other endpoint's runs go alongside them.
    assert all(any(overlap(b, s) for s in shared) for b in runs["beta"])


def test_by_default_arms_whose_servers_share_a_machine_never_run_at_the_same_time(tmp_path):
    # Two servers on one machine share its cores: runs beside each other would each measure the
    # other's load (measured on 2 cores: an E2E p50 of 12.7 s beside another arm, 5.3 s alone).
    slow = text("ok", chunk_chars=1, chunk_delay_s=0.02)
    with FakeServer(default=slow) as one, FakeServer(default=slow) as two:
        models = catalogue(tmp_path / "models.toml", entry(one.url, "alpha"), entry(two.url, "beta"))
        goldset = three_task_set(tmp_path / "set")
        store_path = str(tmp_path / "runs.sqlite")
        new = ["experiment", "new", "e", str(goldset), "--arm", "alpha", "--arm", "beta", "--repeats", "2"]
        created = cli(*new, "--models", str(models), "--store", store_path)
        assert created.code == 0, created.err
        launched = cli("experiment", "run", "e", "--json", "--models", str(models), "--store", store_path)
        assert launched.code == 0, launched.err
    with Store.open(store_path) as store:
        spans = [(r.started_at, r.finished_at) for r in store.list_runs()]
    assert len(spans) == 4
    assert not any(a[0] < b[1] and b[0] < a[1] for i, a in enumerate(spans) for b in spans[i + 1 :])


def test_lanes_are_machines_unless_asked_for_endpoints():
    from compare_tui.experiment.launch import endpoint_lanes, host_of

    assert host_of("http://127.0.0.1:8080/v1") == host_of("http://localhost:9000/v1") == "this machine"
    assert host_of("http://[::1]:8000/v1") == "this machine"
    assert host_of("http://gpu-a.internal:8000/v1") == "gpu-a.internal"

    class Arm:
        def __init__(self, label):
            self.label = label

    class Config:
        arms = [Arm("a"), Arm("b"), Arm("c")]

    class Entry:
        def __init__(self, endpoint):
            self.endpoint = endpoint

    entries = {
        "a": Entry("http://gpu-a.internal:8000/v1"),
        "b": Entry("http://gpu-a.internal:8001/v1"),
        "c": Entry("http://gpu-b.internal:8000/v1"),
    }
    by_host = endpoint_lanes(Config(), entries)  # type: ignore[arg-type]
    assert [[arm.label for arm in lane] for lane in by_host] == [["a", "b"], ["c"]]
    by_endpoint = endpoint_lanes(Config(), entries, same_host_at_once=True)  # type: ignore[arg-type]
    assert [[arm.label for arm in lane] for lane in by_endpoint] == [["a"], ["b"], ["c"]]

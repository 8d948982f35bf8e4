"""Candidates for a workload (`compare_tui.candidates`, `models list --for SET`): blended prices at
the measured token mix, savings, measured quality with its interval, price groups and the
recommended pre-selection, on a store holding past runs."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compare_tui.candidates import build_shortlist, load_shortlist, read_gateway_log
from compare_tui.candidates.measure import ModelMeasures, Quality
from compare_tui.catalogue import load_catalogue
from compare_tui.cli import main
from compare_tui.goldset import load_golden_set
from compare_tui.report.stats import Interval, proportion_interval
from compare_tui.store import AttemptRecord, DecisionRecord, RunRecord, Store
from compare_tui.vocabulary import PriceGroup, SpendSource

REPO = Path(__file__).resolve().parents[3]
SET = REPO / "sample_sets" / "ticket-labels"
WORKLOAD = "ticket-labels"
NOW = datetime(2026, 12, 7, 12, 0, tzinfo=UTC)

CATALOGUE = """
[[model]]
name = "today-model"
kind = "hosted"
endpoint = "http://127.0.0.1:9/v1"
model = "today"
[model.cost]
basis = "token_price"
usd_per_mtok_input = 2.0
usd_per_mtok_output = 8.0
captured = "2026-11-30"
source = "test"

[[model]]
name = "cheap-hosted"
kind = "hosted"
endpoint = "http://127.0.0.1:9/v1"
model = "cheap"
[model.cost]
basis = "token_price"
usd_per_mtok_input = 0.5
usd_per_mtok_output = 1.5
captured = "2026-11-30"
source = "test"

[[model]]
name = "cheap-unmeasured"
kind = "hosted"
endpoint = "http://127.0.0.1:9/v1"
model = "cheap2"
[model.cost]
basis = "token_price"
usd_per_mtok_input = 0.1
usd_per_mtok_output = 0.1
captured = "2026-11-30"
source = "test"

[[model]]
name = "same-hosted"
kind = "hosted"
endpoint = "http://127.0.0.1:9/v1"
model = "same"
[model.cost]
basis = "token_price"
usd_per_mtok_input = 2.2
usd_per_mtok_output = 8.0
captured = "2026-11-30"
source = "test"

[[model]]
name = "dear-hosted"
kind = "hosted"
endpoint = "http://127.0.0.1:9/v1"
model = "dear"
[model.cost]
basis = "token_price"
usd_per_mtok_input = 10.0
usd_per_mtok_output = 30.0
captured = "2026-11-30"
source = "test"

[[model]]
name = "local-box"
kind = "hosted"
endpoint = "http://127.0.0.1:9/v1"
model = "box"
[model.cost]
basis = "hardware"
usd_per_hour = 0.36
gpu_count = 0

[[model]]
name = "local-new"
kind = "hosted"
endpoint = "http://127.0.0.1:9/v1"
model = "new"
[model.cost]
basis = "hardware"
usd_per_hour = 0.36
gpu_count = 0
"""

TOKEN = {"basis": "token_price", "captured": "2026-11-30", "source": "test"}


def stamp(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def stored_run(
    store: Store,
    run_id: str,
    model: str,
    outcomes: str,
    *,
    cost: dict,
    finished: datetime,
    seconds: float = 64.0,
    tokens: tuple[int, int] = (300, 20),
    digest: str,
) -> None:
    """A finished run of `model` on the workload: one attempt per letter (p pass, f fail,
    e error), each `tokens` prompt/completion tokens, lasting `seconds`."""
    store.create_run(
        RunRecord(
            id=run_id,
            status="completed",
            goldset_id=WORKLOAD,
            goldset_digest=digest,
            model_name=model,
            cost_basis=cost,
            settings={"concurrency": 2},
            started_at=stamp(finished - timedelta(seconds=seconds)),
            finished_at=stamp(finished),
            task_count=len(outcomes),
        )
    )
    names = {"p": "pass", "f": "fail", "e": "error"}
    store.record_attempts(
        AttemptRecord(
            run_id=run_id,
            task_id=f"t{i:02d}",
            attempt=1,
            outcome=names[c],
            error_class="connect" if c == "e" else None,
            prompt_tokens=None if c == "e" else tokens[0],
            completion_tokens=None if c == "e" else tokens[1],
            finished_at=stamp(finished),
        )
        for i, c in enumerate(outcomes)
    )


@pytest.fixture
def catalogue_file(tmp_path: Path) -> Path:
    path = tmp_path / "models.toml"
    path.write_text(CATALOGUE)
    return path


@pytest.fixture
def store(tmp_path: Path):
    """today-model promoted, with three runs (2 h, 3 d and 20 d ago: 15/20 on the latest);
    cheap-hosted 18/20; local-box 12/20 at 100 tok/s; everything else never run."""
    digest = load_golden_set(SET).digest
    today = {**TOKEN, "usd_per_mtok_input": 2.0, "usd_per_mtok_output": 8.0}
    with Store.open(tmp_path / "runs.sqlite") as opened:
        stored_run(
            opened,
            "base-1",
            "today-model",
            "p" * 15 + "f" * 5,
            cost=today,
            finished=NOW - timedelta(hours=2),
            digest=digest,
        )
        stored_run(
            opened, "base-2", "today-model", "p" * 20, cost=today, finished=NOW - timedelta(days=3), digest=digest
        )
        stored_run(
            opened, "base-3", "today-model", "p" * 20, cost=today, finished=NOW - timedelta(days=20), digest=digest
        )
        cheap = {**TOKEN, "usd_per_mtok_input": 0.5, "usd_per_mtok_output": 1.5}
        stored_run(
            opened,
            "cheap-1",
            "cheap-hosted",
            "p" * 18 + "f" + "e",
            cost=cheap,
            finished=NOW - timedelta(days=1, hours=1),
            digest=digest,
        )
        box = {"basis": "hardware", "usd_per_hour": 0.36, "gpu_count": 0}
        # An older run on an earlier version of the set, then the newest on this one.
        stored_run(
            opened, "box-old", "local-box", "f" * 20, cost=box, finished=NOW - timedelta(days=9), digest="sha256:old"
        )
        stored_run(
            opened, "box-1", "local-box", "p" * 12 + "f" * 8, cost=box, finished=NOW - timedelta(days=2), digest=digest
        )
        opened.record_decision(
            DecisionRecord(workload_id=WORKLOAD, model="today-model", kind="initial", reason="what we run")
        )
        yield opened


def by_name(shortlist):
    return {c.name: c for c in shortlist.candidates}


def test_blended_prices_at_the_measured_mix_savings_and_spend(store, catalogue_file):
    shortlist = load_shortlist(
        store, load_catalogue(catalogue_file), WORKLOAD, digest=load_golden_set(SET).digest, now=NOW
    )
    # The mix: 300 in / 20 out a request over the baseline's 60 requests.
    assert (shortlist.mix.input_tokens, shortlist.mix.output_tokens, shortlist.mix.requests) == (300, 20, 60)
    assert "measured over 60 requests of today-model's runs" in shortlist.mix.sentence()
    rows = by_name(shortlist)
    assert rows["today-model"].price.usd_per_mtok == pytest.approx((300 * 2 + 20 * 8) / 320)  # 2.375
    assert rows["cheap-hosted"].price.usd_per_mtok == pytest.approx((300 * 0.5 + 20 * 1.5) / 320)
    assert "captured 2026-11-30" in rows["cheap-hosted"].price.basis_note
    # Hourly: 20 requests × 320 tokens in 64 s = 100 tok/s; $0.36/h → $1.00 per million tokens.
    assert rows["local-box"].price.usd_per_mtok == pytest.approx(1.0)
    assert "100.0 tok/s measured on this workload at concurrency 2" in rows["local-box"].price.basis_note
    assert rows["local-new"].price.usd_per_mtok is None
    assert "no throughput measured yet" in rows["local-new"].price.basis_note
    # Savings against 2.375, and over the baseline's 30-day spend.
    share = (2.375 - 0.5625) / 2.375
    assert rows["cheap-hosted"].savings_share == pytest.approx(share)
    per_run = 20 * (300 * 2 + 20 * 8) / 1e6
    today = shortlist.today
    assert today is not None and (today.name, today.source) == ("today-model", "promoted")
    assert today.spend == pytest.approx({1: per_run, 7: 2 * per_run, 30: 3 * per_run})
    assert rows["cheap-hosted"].savings_30d == pytest.approx(3 * per_run * share)


def test_measured_quality_with_interval_date_and_version(store, catalogue_file):
    shortlist = load_shortlist(
        store, load_catalogue(catalogue_file), WORKLOAD, digest=load_golden_set(SET).digest, now=NOW
    )
    rows = by_name(shortlist)
    cheap = rows["cheap-hosted"].quality
    # The errored task is not measured: 18 of 19.
    assert cheap is not None and (cheap.passed, cheap.measured, cheap.date) == (18, 19, "2026-12-06")
    assert cheap.interval == proportion_interval(18, 19)
    box = rows["local-box"].quality
    assert box is not None and (box.passed, box.measured, box.run_id, box.same_version) == (12, 20, "box-1", True)
    assert rows["today-model"].quality.run_id == "base-1"  # the newest run: 15 of 20
    for name in ("cheap-unmeasured", "same-hosted", "dear-hosted", "local-new"):
        assert rows[name].quality is None


def test_a_newer_run_that_decided_no_task_does_not_hide_the_measured_one(store, catalogue_file):
    # cheap-hosted's newest run ended with every request failed (nothing decided, as a run
    # stopped before its first task): its quality is still the run that measured 18 of 19.
    stored_run(
        store,
        "cheap-2",
        "cheap-hosted",
        "ee",
        cost=TOKEN,
        finished=NOW - timedelta(hours=1),
        digest=load_golden_set(SET).digest,
    )
    shortlist = load_shortlist(
        store, load_catalogue(catalogue_file), WORKLOAD, digest=load_golden_set(SET).digest, now=NOW
    )
    cheap = by_name(shortlist)["cheap-hosted"].quality
    assert cheap is not None and (cheap.run_id, cheap.passed, cheap.measured) == ("cheap-1", 18, 19)


def test_grouping_and_the_recommended_pre_selection(store, catalogue_file):
    shortlist = load_shortlist(
        store, load_catalogue(catalogue_file), WORKLOAD, digest=load_golden_set(SET).digest, now=NOW
    )
    groups = {c.name: c.group for c in shortlist.candidates}
    assert groups == {
        "cheap-unmeasured": PriceGroup.CHEAPER,
        "cheap-hosted": PriceGroup.CHEAPER,
        "local-box": PriceGroup.CHEAPER,
        "today-model": PriceGroup.ABOUT_THE_SAME,
        "same-hosted": PriceGroup.ABOUT_THE_SAME,  # +7.9 %, inside the ±10 % band
        "dear-hosted": PriceGroup.DEARER,
        "local-new": PriceGroup.UNPRICED,
    }
    # Cheapest first within a group, groups in order.
    assert [c.name for c in shortlist.candidates][:3] == ["cheap-unmeasured", "cheap-hosted", "local-box"]
    # Today's model, the measured ones at or below its price, and the unmeasured one below it;
    # never one above the price, nor one without a price.
    assert set(shortlist.recommended) == {"today-model", "cheap-hosted", "local-box", "cheap-unmeasured"}
    assert shortlist.price_range(set(shortlist.recommended)) == pytest.approx((0.1, 2.375))


def test_only_the_best_measured_by_quality_per_dollar_are_pre_selected():
    """Five measured candidates under the baseline's price: the three with the best pass rate per
    dollar are kept, whatever their order in the catalogue."""
    entries = load_catalogue_text(
        "".join(_token_entry(f"m{i}", price) for i, price in enumerate([4.0, 1.0, 1.0, 2.0, 3.0, 0.5]))
    ).models
    rates = {"m1": 0.9, "m2": 0.5, "m3": 0.9, "m4": 0.9, "m5": 0.1}  # per dollar: m1 .9, m2 .5, m3 .45, m4 .3, m5 .2
    measures = {name: ModelMeasures(name, 1, 0, 0, 0, _quality(rate), None) for name, rate in rates.items()}
    shortlist = build_shortlist("w", entries, measures, baseline="m0")
    assert set(shortlist.recommended) == {"m0", "m1", "m2", "m3"}


def test_a_candidate_clearly_worse_than_today_is_not_pre_selected():
    """Cheaper but its whole interval lies below today's measured pass rate: shown, not pre-selected."""
    entries = load_catalogue_text(
        _token_entry("base", 2.0) + _token_entry("weak", 1.0) + _token_entry("close", 1.0)
    ).models
    measures = {
        "base": ModelMeasures("base", 1, 0, 0, 0, Quality(9, 10, proportion_interval(9, 10), "r", "d", True), None),
        "weak": ModelMeasures("weak", 1, 0, 0, 0, Quality(1, 10, proportion_interval(1, 10), "r", "d", True), None),
        "close": ModelMeasures("close", 1, 0, 0, 0, Quality(7, 10, proportion_interval(7, 10), "r", "d", True), None),
    }
    shortlist = build_shortlist("w", entries, measures, baseline="base")
    assert set(shortlist.recommended) == {"base", "close"}
    assert {c.name: c.group for c in shortlist.candidates}["weak"] is PriceGroup.CHEAPER


def _quality(rate: float) -> Quality:
    return Quality(round(rate * 10), 10, Interval(0.0, 1.0), "r", "2026-12-01", True)


def _token_entry(name: str, price: float) -> str:
    return (
        f'[[model]]\nname = "{name}"\nkind = "hosted"\nendpoint = "http://127.0.0.1:9/v1"\nmodel = "{name}"\n'
        f'[model.cost]\nbasis = "token_price"\nusd_per_mtok_input = {price}\nusd_per_mtok_output = {price}\n'
        'captured = "2026-11-30"\nsource = "test"\n'
    )


def load_catalogue_text(text: str):
    import tomllib

    from compare_tui.catalogue import Catalogue

    return Catalogue.model_validate({"models": tomllib.loads(text)["model"]})


def test_without_measured_usage_the_default_mix_is_stated(tmp_path, catalogue_file):
    with Store.open(tmp_path / "empty.sqlite") as empty:
        shortlist = load_shortlist(empty, load_catalogue(catalogue_file), WORKLOAD, baseline="today-model", now=NOW)
    assert not shortlist.mix.measured and "the default mix" in shortlist.mix.sentence()
    assert shortlist.today is not None and shortlist.today.source == "named"
    assert shortlist.today.spend == {1: 0.0, 7: 0.0, 30: 0.0}


def test_without_a_baseline_the_mix_is_every_models_and_no_price_is_grouped_against_one(tmp_path, catalogue_file):
    with Store.open(tmp_path / "no-baseline.sqlite") as store:
        digest = load_golden_set(SET).digest
        stored_run(store, "c1", "cheap-hosted", "pf", cost=TOKEN, finished=NOW, tokens=(100, 10), digest=digest)
        stored_run(store, "c2", "dear-hosted", "pp", cost=TOKEN, finished=NOW, tokens=(300, 30), digest=digest)
        shortlist = load_shortlist(store, load_catalogue(catalogue_file), WORKLOAD, now=NOW)
    assert shortlist.today is None
    assert (shortlist.mix.input_tokens, shortlist.mix.output_tokens, shortlist.mix.requests) == (200, 20, 4)
    assert "measured over 4 requests of every model's runs" in shortlist.mix.sentence()
    rows = by_name(shortlist)
    assert rows["cheap-hosted"].group is PriceGroup.NOT_COMPARED and rows["cheap-hosted"].savings_share is None


def test_todays_spend_comes_from_the_managed_gateways_traffic_log_where_it_carries_the_workload(
    store, catalogue_file, tmp_path
):
    def line(hours_ago: float, **fields) -> str:
        moment = (NOW - timedelta(hours=hours_ago)).timestamp()
        return json.dumps({"model_group": WORKLOAD, "startTime": moment - 1, "endTime": moment} | fields)

    log = tmp_path / "traffic.jsonl"
    log.write_text(
        "\n".join(
            [
                line(2, response_cost=0.01),  # priced by LiteLLM
                line(50, prompt_tokens=1000, completion_tokens=100),  # today-model: $2 in, $8 out a Mtok
                line(3, response_cost=5.0, is_silent_experiment=True),  # a shadow copy: not the traffic
                json.dumps({"model_group": "other-workload", "endTime": NOW.timestamp(), "response_cost": 9.0}),
                '{"model_group": "cut short',  # a line a crash cut short
            ]
        )
        + "\n"
    )
    shortlist = load_shortlist(
        store,
        load_catalogue(catalogue_file),
        WORKLOAD,
        digest=load_golden_set(SET).digest,
        now=NOW,
        traffic=read_gateway_log(log, [WORKLOAD]),
    )
    today = shortlist.today
    assert today is not None and today.spend_source is SpendSource.GATEWAY_LOG
    tokens = (1000 * 2.0 + 100 * 8.0) / 1e6
    assert today.spend == pytest.approx({1: 0.01, 7: 0.01 + tokens, 30: 0.01 + tokens})
    assert "the managed gateway's traffic log" in today.spend_note
    # A log without the workload's traffic leaves the store's runs as the source.
    other = tmp_path / "other.jsonl"
    other.write_text(json.dumps({"model_group": "other-workload", "endTime": NOW.timestamp()}) + "\n")
    again = load_shortlist(
        store, load_catalogue(catalogue_file), WORKLOAD, now=NOW, traffic=read_gateway_log(other, [WORKLOAD])
    )
    assert again.today is not None and again.today.spend_source is SpendSource.STORE_RUNS


def test_models_list_for_a_set_prints_the_table_and_the_json(store, catalogue_file, capsys):
    common = ["--models", str(catalogue_file), "--store", str(store.path)]
    assert main(["models", "list", "--for", str(SET), *common, "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["today"]["model"] == "today-model" and data["today"]["spend_source"] == "store runs"
    assert data["token_mix"]["measured_requests"] == 60
    cheap = next(c for c in data["candidates"] if c["model"] == "cheap-hosted")
    assert cheap["group"] == "cheaper" and cheap["recommended"] is True
    assert cheap["quality"]["ci95"]["method"] == "Clopper-Pearson exact"
    assert main(["models", "list", "--for", str(SET), *common, "--baseline", "dear-hosted"]) == 0
    text = capsys.readouterr().out
    assert "Today's model: dear-hosted (named baseline)" in text
    assert "* cheap-hosted" in text and "quality: 95% (" in text and "not measured yet" in text
    assert max(len(line) for line in text.splitlines()) <= 80
    assert main(["models", "list", "--for", str(SET), *common, "--baseline", "nope"]) == 2
    assert "unknown model 'nope'" in capsys.readouterr().err


@settings(max_examples=60, deadline=None)
@given(
    price_in=st.floats(0, 100),
    price_out=st.floats(0, 100),
    mix_in=st.floats(1, 1e5),
    mix_out=st.floats(1, 1e5),
    base=st.floats(0.01, 100),
)
def test_a_blended_price_lies_between_its_two_prices_and_its_group_follows_the_band(
    price_in, price_out, mix_in, mix_out, base
):
    from compare_tui.candidates.model import TokenMix, blended_price, price_group

    [entry] = load_catalogue_text(_token_entry("m", 1.0)).models
    entry = entry.model_copy(
        update={
            "cost": entry.cost.model_copy(update={"usd_per_mtok_input": price_in, "usd_per_mtok_output": price_out})
        }
    )
    value = blended_price(entry, TokenMix(mix_in, mix_out, 1, "b"), None).usd_per_mtok
    assert value is not None
    assert min(price_in, price_out) - 1e-9 <= value <= max(price_in, price_out) + 1e-9
    group = price_group(value, base)
    ratio = value / base  # the band is ±10 % of today's price
    if ratio < 1 - 0.10:
        assert group is PriceGroup.CHEAPER
    elif ratio > 1 + 0.10:
        assert group is PriceGroup.DEARER
    else:
        assert group is PriceGroup.ABOUT_THE_SAME

"""Bundles opened in a real headless Chromium from file:// (driven through the DevTools protocol
over a pipe: tests/support/chromium.py says why): the DOM holds the figures and task ids, the
filter and search work, the page attempts no request and violates no policy, and screenshots at
1280×800 and 390×844 are not blank and do not overflow sideways; the page prints (print media hides
the navigation and the filter, keeps opened tasks) and an experiment's bundle passes the same checks.

scripts/test.sh installs Debian's `chromium`; without it these tests fail (they never skip)."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from tests.core.experiment.test_experiment_cli import new, run, world  # noqa: F401  (world is a fixture)
from tests.core.experiment.test_experiment_helpers import cli
from tests.core.publish.test_publish import VIRTUAL, fill_store
from tests.support.chromium import Browser, chromium_path, ink_share

VIEWPORTS = {"desktop": (1280, 800, False), "phone": (390, 844, True)}


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("bundle")
    store = fill_store(root / "runs.sqlite")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("WT17_TEST_KEY", VIRTUAL)
        result = cli("publish", "cmp-1", "--out", str(root / "b"), "--store", str(store))
    assert result.code == 0, result.err
    return root / "b"


@pytest.fixture(scope="module")
def browser():
    if chromium_path() is None:
        pytest.fail("chromium is not installed: run the tests through scripts/test.sh, which installs it")
    with Browser() as opened:
        yield opened


def shown_rows(browser: Browser) -> list[str]:
    return browser.evaluate(
        "Array.prototype.filter.call(document.querySelectorAll('#task-table tbody'),"
        "function(b){return !b.hidden;}).map(function(b){return b.querySelector('th').textContent;})"
    )


def test_the_dom_holds_the_figures_and_every_task_id(bundle, browser):
    browser.viewport(1280, 800)
    browser.open(bundle.joinpath("index.html").as_uri())
    doc = json.loads(bundle.joinpath("report.json").read_text())
    text = browser.evaluate("document.body.innerText")
    assert doc["decision"]["summary"] in text and doc["recommendation"]["summary"] in text
    assert browser.evaluate("document.getElementById('confidence').textContent") == doc["recommendation"]["confidence"]
    assert shown_rows(browser) == doc["task_ids"]
    assert browser.evaluate("document.querySelectorAll('svg.plot polyline.series').length") >= 4
    # The mark's word is drawn by the stylesheet, so colour is never the only signal.
    word = browser.evaluate("getComputedStyle(document.querySelector('#task-table td.p'),'::after').content")
    assert word == '" pass"'


def test_the_filter_and_search_work_without_a_server(bundle, browser):
    browser.viewport(1280, 800)
    browser.open(bundle.joinpath("index.html").as_uri())
    doc = json.loads(bundle.joinpath("report.json").read_text())
    statuses = {
        t["id"]: [m["tasks"][i]["status"] for m in doc["models"]] for i, t in enumerate(doc["models"][0]["tasks"])
    }

    def pick(value: str) -> list[str]:
        browser.evaluate(f"document.querySelector('#task-filter input[value={value}]').click()")
        return shown_rows(browser)

    assert pick("c") == [t for t, s in statuses.items() if len(set(s)) > 1]
    assert pick("f") == [t for t, s in statuses.items() if {"fail", "error"} & set(s)]
    assert pick("r") == [t for t, s in statuses.items() if "review" in s]
    assert (
        browser.evaluate("document.getElementById('task-count').textContent")
        == f"Showing {len(pick('r'))} of {len(statuses)} tasks"
    )
    pick("all")
    # Search covers ids, inputs and answers; a change event applies it at once.
    browser.evaluate(
        "var q=document.querySelector('#task-filter input[type=search]');q.value='charged twice';"
        "q.dispatchEvent(new Event('change',{bubbles:true}))"
    )
    assert shown_rows(browser) == ["refund-01"]
    browser.evaluate(
        "var q=document.querySelector('#task-filter input[type=search]');q.value='';"
        "q.dispatchEvent(new Event('change',{bubbles:true}))"
    )
    assert len(shown_rows(browser)) == len(statuses)


def test_a_task_opens_to_its_input_answers_and_review(bundle, browser):
    browser.open(bundle.joinpath("index.html").as_uri())
    browser.evaluate(
        "Array.prototype.find.call(document.querySelectorAll('#task-table th[scope=row]'),"
        "function(t){return t.textContent==='reply-01';}).click()"
    )
    text = browser.evaluate("document.querySelector('#task-table tr.d').innerText")
    assert "[redacted]" in text and VIRTUAL not in text and "<b>answer" in text  # shown as text, not markup
    assert "smollm2-135m: a person said pass: kind enough (ana," in text
    assert "smollm2-135m · attempt 1 · ? needs a person" in text and "Expected outcome" in text
    browser.evaluate("document.getElementById('open-all').click()")
    assert browser.evaluate("document.querySelectorAll('#task-table tr.d').length") == 21


def test_no_request_is_attempted_and_no_policy_is_violated(bundle, browser):
    url = bundle.joinpath("index.html").as_uri()
    browser.open(url)
    browser.evaluate("document.getElementById('open-all').click()")
    assert browser.requests() == [url]
    assert browser.evaluate("window.__violations") == []


def test_the_policy_would_block_a_request_and_the_test_would_see_it(bundle, browser, tmp_path):
    """The checks above can fail: the same page with a remote image added shows the attempt
    (Chromium reports it, then blocks it for the policy) and the violation."""
    page = bundle.joinpath("index.html").read_text(encoding="utf-8")
    tampered = tmp_path / "index.html"
    tampered.write_text(page.replace("<main>", '<main><img src="http://127.0.0.1:9/pixel.png" alt="">', 1))
    browser.open(tampered.as_uri())
    assert browser.evaluate("window.__violations") == ["img-src http://127.0.0.1:9/pixel.png"]
    assert "http://127.0.0.1:9/pixel.png" in browser.requests()
    blocked = [e["params"].get("blockedReason") for e in browser.events if e.get("method") == "Network.loadingFailed"]
    assert blocked == ["csp"]


@pytest.mark.parametrize("name", VIEWPORTS)
def test_screenshots_are_not_blank_and_nothing_overflows_sideways(bundle, browser, name, tmp_path):
    width, height, mobile = VIEWPORTS[name]
    browser.viewport(width, height, mobile=mobile)
    browser.open(bundle.joinpath("index.html").as_uri())
    browser.evaluate("document.getElementById('open-all').click()")
    assert browser.evaluate("document.documentElement.scrollWidth") <= width
    wide = browser.evaluate(
        "Array.prototype.filter.call(document.querySelectorAll('main *'),function(e){"
        "var r=e.getBoundingClientRect();return r.right>window.innerWidth+1&&!e.closest('.scroll');"
        "}).map(function(e){return e.tagName+'#'+e.id+'.'+e.className;})"
    )
    assert wide == []
    shot = browser.screenshot()
    (tmp_path / f"{name}.png").write_bytes(shot)
    assert ink_share(browser, shot) > 0.05


def test_it_prints_without_the_navigation_and_with_every_opened_task(bundle, browser):
    browser.viewport(1280, 800)
    browser.open(bundle.joinpath("index.html").as_uri())
    browser.evaluate("document.getElementById('open-all').click()")
    browser.call("Emulation.setEmulatedMedia", {"media": "print"})
    try:
        hidden = browser.evaluate(
            "[getComputedStyle(document.querySelector('nav.toc')).display,"
            "getComputedStyle(document.getElementById('task-filter')).display]"
        )
        opened = browser.evaluate("document.querySelectorAll('#task-table tr.d').length")
        pdf = base64.b64decode(browser.call("Page.printToPDF", {})["data"])
    finally:
        browser.call("Emulation.setEmulatedMedia", {"media": ""})
    assert hidden == ["none", "none"] and opened == 21
    assert pdf.startswith(b"%PDF") and len(pdf) > 10_000


def test_an_experiment_bundle_shows_its_arms_and_fits_a_desktop_and_a_phone(world, browser, tmp_path):  # noqa: F811
    assert new(world).code == 0 and run(world).code == 0
    out = tmp_path / "exp"
    assert cli("publish", "--experiment", "e1", "--out", str(out), "--store", world["store"]).code == 0
    url = out.joinpath("index.html").as_uri()
    for name, (width, height, mobile) in VIEWPORTS.items():
        browser.viewport(width, height, mobile=mobile)
        browser.open(url)
        text = browser.evaluate("document.body.innerText")
        assert "alpha" in text and "beta" in text and "95% CI" in text, name
        assert browser.evaluate("document.querySelector('#flaky-list').innerText") == "alpha: t2"
        assert browser.requests() == [url] and browser.evaluate("window.__violations") == []
        assert browser.evaluate("document.documentElement.scrollWidth") <= width, name
        shot = browser.screenshot()
        (tmp_path / f"experiment-{name}.png").write_bytes(shot)
        assert ink_share(browser, shot) > 0.05, name

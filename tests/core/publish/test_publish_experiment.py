"""The published experiment page's intervals (issue 48, item 6): each arm's two 95% intervals,
each named by the rate it covers, with the figures and words `compare-tui experiment show`
prints; where fewer than five tasks were scored, the CLI's sentence saying there is none."""

from __future__ import annotations

import html

from compare_tui.experiment import experiment_figures, load_experiment
from compare_tui.experiment.figures import RERUN_ESTIMAND, TASKS_ESTIMAND
from compare_tui.experiment.render import TOO_FEW_TASKS, interval_text, tasks_interval_figure
from compare_tui.store import Store
from tests.core.experiment.test_experiment_cli import new, run, world  # noqa: F401  (world is a fixture)
from tests.core.experiment.test_experiment_helpers import cli, six_task_experiment


def test_the_page_shows_both_intervals_each_named_by_its_rate_as_the_cli_does(tmp_path):
    # Issue 48, item 6: the page showed one interval and did not say which rate it covers.
    store = six_task_experiment(tmp_path)
    out = tmp_path / "exp"
    assert cli("publish", "--experiment", "helpdesk", "--out", str(out), "--store", store).code == 0
    page = (out / "index.html").read_text(encoding="utf-8")
    shown = cli("experiment", "show", "helpdesk", "--store", store).out
    with Store.open(store) as opened:
        figures = experiment_figures(load_experiment(opened, "helpdesk"))
    head = page.split('<table id="arms-table">', 1)[1].split("</thead>", 1)[0]
    assert "95% interval or range: this set under re-running" in head and "95% interval: tasks like these" in head
    for arm in figures.arms:
        assert arm.tasks_interval is not None
        row = page.split(f'<th scope="row">{arm.label}</th>', 1)[1].split("</tr>", 1)[0]
        # The CLI's figures, spelled by the same functions: never recomputed by the page.
        assert f'<td class="n">{interval_text(arm)}</td><td class="n">{tasks_interval_figure(arm)}</td>' in row
        assert interval_text(arm) in shown and tasks_interval_figure(arm) in shown
    note = html.unescape(page.split('<p class="note" id="arms-intervals">', 1)[1].split("</p>", 1)[0])
    assert f"The first covers {RERUN_ESTIMAND}" in note and f"The second covers {TASKS_ESTIMAND}" in note


def test_an_experiment_with_fewer_than_five_tasks_says_it_has_no_tasks_like_these_interval(world, tmp_path):  # noqa: F811
    assert new(world).code == 0 and run(world).code == 0
    out = tmp_path / "exp"
    assert cli("publish", "--experiment", "e1", "--out", str(out), "--store", world["store"]).code == 0
    page = (out / "index.html").read_text(encoding="utf-8")
    shown = cli("experiment", "show", "e1", "--store", world["store"]).out
    assert TOO_FEW_TASKS in shown and page.count(f'<td class="n">{TOO_FEW_TASKS}</td>') == 2  # both arms

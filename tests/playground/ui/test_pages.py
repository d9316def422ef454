"""`playground ui` in a real browser on real folders: the demo's run, two tiny runs, a 20-trial adaptive ASHA sweep
and a several-objective sweep, each made by its command. Each test opens a page and checks what a person sees
(rows, values, chart traces, rung marks) against the folders' own files, and saves a screenshot."""
from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path
from urllib.parse import quote

import pytest

from tests.playground.sweeps.synthetic import add_finished_trials
from tests.playground.ui.browser import UiProcess, shot
from tests.playground.ui.folders import (asha_sweep, demo_run, full_passes, make_all, pareto_sweep, tiny_run,
                                         trials)

LR = "model_param.base_learning_rate"


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """The folders, made once for the module, and `playground ui` serving runs/ and sweeps/ (no actions)."""
    root = tmp_path_factory.mktemp("ui-pages")
    runs, sweeps = root / "runs", root / "sweeps"
    make_all(demo_run(runs / "demo", root / "digits"), tiny_run(runs / "tiny-a", 0.05), tiny_run(runs / "tiny-b", 0.2),
             asha_sweep(sweeps / "asha20"), pareto_sweep(sweeps / "two-objectives"))
    many = sweeps / "many"                 # 400 trials: the ASHA sweep's, and copies of its last one
    shutil.copytree(sweeps / "asha20", many)
    stored = json.loads((many / "sweep.json").read_text())
    stored["spec"]["name"] = "many"
    (many / "sweep.json").write_text(json.dumps(stored))
    add_finished_trials(str(many), 380)
    ui = UiProcess([runs, sweeps])
    yield ui, runs, sweeps
    assert ui.stop() == 0


def open_page(page, ui: UiProcess, hash_: str) -> None:
    page.goto(f"{ui.base}/{hash_}")
    page.wait_for_selector("#live.live-ok")


def key(root_index: int, path: str) -> str:
    return quote(f"{root_index}/{path}", safe="")


def chart_traces(page, selector: str) -> list[dict]:
    """The traces a plotly chart draws: name, mode and number of points."""
    return page.evaluate("(s) => [...document.querySelector(s).data].map(t => ({name: t.name, mode: t.mode, "
                         "points: (t.x || []).filter(x => x !== null).length, type: t.type}))", selector)


CURVE_POINTS = """(selector) => { const points = {};
  for (const trace of document.querySelector(selector).data) {
    if (trace.name === 'reached a rung') continue;
    (trace.text || []).forEach((label, i) => { if (label && trace.x[i] !== null) {
      const id = label.split(' ')[0]; points[id] = (points[id] || 0) + 1; } });
  }
  return points; }"""


def curve_points(page, selector: str = "#curves") -> dict[str, int]:
    """Each trial's points on the learning-curves chart (its trials share traces, each point names its trial)."""
    return page.evaluate(CURVE_POINTS, selector)


def expected_traces(run_dir: Path, ys: list[str]) -> int:
    """As `playground plot` draws a spec: a test metric with full passes and interval points twice, others once."""
    records = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]
    tests = {m["name"] for m in json.loads((run_dir / "opts.json").read_text())["opts"]["output"]["metrics"]
             if not m.get("is_train", True)}
    count = 0
    for y in ys:
        kinds = {r["kind"] for r in records if isinstance(r.get(y), (int, float))}
        count += 2 if y in tests and kinds == {"epoch", "interval"} else 1 if kinds else 0
    return count


def test_the_list_shows_every_run_and_sweep_with_state_best_and_exit(page, served, tmp_path):
    ui, runs, sweeps = served
    open_page(page, ui, "#/")
    page.wait_for_function("() => document.querySelectorAll('tbody tr[data-key]').length === 6")
    rows = page.evaluate("() => [...document.querySelectorAll('tbody tr[data-key]')].map(r => "
                         "[...r.querySelectorAll('td')].map(c => c.textContent))")
    by_name = {r[0] if not r[0] == "" else r[1]: r for r in rows}
    for name in ("runs/demo", "runs/tiny-a", "runs/tiny-b"):
        row = by_name[name]
        best = json.loads((runs / name.split("/")[1] / "results.json").read_text())["best"]["test_loss"]["value"]
        assert row[2:4] == ["finished", "0"] and row[6] == f"test_loss {best:.5g}", row
    asha = by_name["asha20"]
    assert asha[1:4] == ["finished", "adaptive_asha", "20 of 20"], asha
    states = [t["state"] for t in trials(sweeps / "asha20").values()]
    assert set(asha[4].split(", ")) == {f"{states.count(s)} {s}" for s in states}, asha
    assert by_name["two-objectives"][3] == "4 of 4" and by_name["many"][3] == "400 of 20"   # its budget is 20
    shot(page, tmp_path, "list")


def test_a_runs_page_draws_its_plots_checkpoints_log_and_opts(page, served, tmp_path):
    ui, runs, _ = served
    run_dir = runs / "demo"
    opts = json.loads((run_dir / "opts.json").read_text())["opts"]
    open_page(page, ui, f"#/run/{key(0, 'demo')}")
    page.wait_for_function(f"() => [...document.querySelectorAll('.charts .chart')].filter(c => c.data)"
                           f".length === {len(opts['output']['plots'])}")
    for index, spec in enumerate(opts["output"]["plots"]):
        drawn = chart_traces(page, f".charts .chart:nth-child({index + 1})")
        assert len(drawn) == expected_traces(run_dir, spec["ys"]) > 0, (spec, drawn)
    records = len((run_dir / "metrics.jsonl").read_text().splitlines())
    assert page.text_content("#record-count") == f"{records} records"
    checkpoints = sorted(p.name for p in (run_dir / "checkpoints").glob("*.pt"))
    listed = page.evaluate("() => [...document.querySelectorAll('section tbody tr')].map(r => "
                           "[...r.querySelectorAll('td')].map(c => c.textContent))")
    assert sorted(r[0] for r in listed) == checkpoints
    for row in listed:
        info = json.loads((run_dir / "checkpoints" / row[0].replace(".pt", ".json")).read_text())
        assert row[1] == str(info["epoch"]) and row[3].endswith(("KB", "MB"))
    last_line = (run_dir / "train.log").read_text().splitlines()[-1]
    assert last_line in page.text_content("#log")
    assert json.loads(page.text_content("#opts"))["opts"] == opts
    page.check("label:has-text('lr') input")
    page.wait_for_function("() => !document.getElementById('series-chart').hidden && "
                           "document.getElementById('series-chart').data.length === 1")
    assert page.locator("#stop-run").count() == 0          # no actions unless --allow-actions
    shot(page, tmp_path, "run")


def test_a_sweeps_page_lists_sorts_and_filters_its_trials(page, served, tmp_path):
    ui, _, sweeps = served
    recorded = trials(sweeps / "asha20")
    open_page(page, ui, f"#/sweep/{key(1, 'asha20')}")
    page.wait_for_function("() => document.querySelectorAll('#trials tbody tr').length === 20")
    shown = page.evaluate("() => [...document.querySelectorAll('#trials tbody tr')].map(r => "
                          "[r.dataset.trial, r.children[2].textContent])")
    assert dict(shown) == {t: r["state"] for t, r in recorded.items()}
    page.click("#trials th:has-text('test_loss (min)')")       # ascending by the objective
    first = page.evaluate("() => document.querySelector('#trials tbody tr').dataset.trial")
    assert first == min(recorded, key=lambda t: recorded[t]["values"][0])
    page.fill("input[data-column='state']", "pruned")
    pruned = sum(r["state"] == "pruned" for r in recorded.values())
    page.wait_for_function(f"() => document.querySelectorAll('#trials tbody tr').length === {pruned}")
    page.fill("input[data-column='state']", "")
    page.fill(f"input[data-column='{LR}']", ">0.1")
    fast = sum(r["params"][LR] > 0.1 for r in recorded.values())
    page.wait_for_function(f"() => document.querySelectorAll('#trials tbody tr').length === {fast}")
    assert page.text_content("#trial-count") == f"{fast} of 20 trials shown"
    with (sweeps / "asha20" / "summary.csv").open() as handle:
        best = next(csv.DictReader(handle))["id"]          # the sweep's own ranking: complete trials by value
    assert page.text_content("#best").startswith(f"trial {best}:")
    assert page.locator("#pause-sweep").count() == 0
    shot(page, tmp_path, "sweep-trials")


def test_a_sweeps_learning_curves_mark_the_asha_rungs(page, served, tmp_path):
    ui, _, sweeps = served
    sweep = sweeps / "asha20"
    open_page(page, ui, f"#/sweep/{key(1, 'asha20')}")
    page.wait_for_function("() => document.getElementById('curves').dataset.trials === '20'")
    assert curve_points(page) == {t: len(full_passes(sweep / "trials" / t)) for t in trials(sweep)}
    traces = {t["name"]: t for t in chart_traces(page, "#curves")}
    state = json.loads((sweep / "searcher.json").read_text())
    reached = sum(len(rung) for bracket in state["rungs"] for rung in bracket)
    assert traces["reached a rung"]["points"] == reached
    lines = page.evaluate("() => document.getElementById('curves').layout.shapes.map(s => s.x0)")
    assert sorted(lines) == [2, 4, 8]                           # the rungs of brackets of 3 and 2 rungs, max_time 8
    page.wait_for_function("() => (document.getElementById('importances').data || []).length === 1")
    bars = page.evaluate("() => document.getElementById('importances').data[0].y")
    assert sorted(bars) == ["base_learning_rate", "weight_decay"]
    axes = page.evaluate("() => document.getElementById('parallel').layout.annotations.map(a => a.text)")
    assert {"<b>base_learning_rate</b>", "<b>weight_decay</b>", "<b>test_loss</b>"} <= set(axes)
    page.locator("#curves").scroll_into_view_if_needed()
    shot(page, tmp_path, "sweep-curves")


def test_a_several_objective_sweep_shows_its_pareto_front(page, served, tmp_path):
    ui, _, sweeps = served
    front = [t["id"] for t in json.loads((sweeps / "two-objectives" / "best.json").read_text())["pareto_front"]]
    open_page(page, ui, f"#/sweep/{key(1, 'two-objectives')}")
    page.wait_for_function("() => (document.getElementById('pareto').data || []).length === 2")
    drawn = {t["name"]: t["points"] for t in chart_traces(page, "#pareto")}
    assert drawn["Pareto front"] == len(front) and drawn["Pareto front"] + drawn["other trials"] == 4
    listed = page.evaluate("() => [...document.querySelectorAll('#best li a')].map(a => a.textContent)")
    assert sorted(listed) == sorted(front)
    page.locator("#pareto").scroll_into_view_if_needed()
    shot(page, tmp_path, "pareto")


def test_a_trials_link_opens_its_run_page_with_the_sweep_named(page, served):
    ui, _, sweeps = served
    open_page(page, ui, f"#/sweep/{key(1, 'asha20')}")
    page.click("#trials a:text-is('t0003')")
    page.wait_for_selector("h1 a")
    assert page.text_content("h1") == "trial t0003 of sweep sweeps/asha20"
    page.wait_for_function("() => document.getElementById('opts').textContent.length > 0")
    log = (sweeps / "asha20" / "trials" / "t0003" / "sweep-trial.log").read_text()   # the trial's terminal output
    assert page.text_content("#log") == log


def test_two_ticked_runs_compare_their_opts_and_curves(page, served, tmp_path):
    ui, _, _ = served
    open_page(page, ui, "#/")
    page.check("input[aria-label='compare runs/tiny-a']")
    page.check("input[aria-label='compare runs/tiny-b']")
    page.click("text=compare the ticked runs")
    page.wait_for_selector("#opts-diff tbody tr")
    diff = page.evaluate("() => [...document.querySelectorAll('#opts-diff tbody tr')].map(r => "
                         "[...r.children].map(c => c.textContent))")
    assert [LR, "0.05", "0.2"] in diff and all(len(row) == 3 for row in diff)
    page.wait_for_function("() => [...document.querySelectorAll('#compare-charts .chart')].filter(c => c.data)"
                           ".length === 2")
    for index in (1, 2):
        names = [t["name"] for t in chart_traces(page, f"#compare-charts .chart:nth-child({index})")]
        assert {n.split(" (")[0] for n in names} == {"run 1", "run 2"}, names
    shot(page, tmp_path, "compare")


def test_a_table_of_hundreds_of_trials_holds_the_rows_in_view_and_shows_others_on_scroll(page, served):
    ui, _, sweeps = served
    open_page(page, ui, f"#/sweep/{key(1, 'many')}")
    page.wait_for_function("() => document.getElementById('trial-count').textContent === '400 of 400 trials shown'")
    rows = "() => [...document.querySelectorAll('#trials tbody tr[data-trial]')].map(r => r.dataset.trial)"
    in_page = page.evaluate(rows)
    assert 0 < len(in_page) < 120 and in_page[0] == "t0000"            # sorted by number, the first in view
    page.evaluate("() => { const box = document.querySelector('.scroll'); box.scrollTop = box.scrollHeight; }")
    page.wait_for_function(rows + ".includes('t0399')")
    assert len(page.evaluate(rows)) < 120
    page.fill("input[data-column='trial']", ">=390")                   # a filter works on every row, not the shown
    page.wait_for_function("() => document.getElementById('trial-count').textContent === '10 of 400 trials shown'")
    assert page.evaluate(rows) == [f"t{n:04d}" for n in range(390, 400)]

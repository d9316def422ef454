"""`playground ui` at real sizes, measured in the browser: the trials table of a 10,000-trial sweep and the learning
curves of 200 trials x 100 epochs, each from the page's load to the drawn table or chart (target: <= 1 s each).

Each sweep starts as a real `sweep run` of two contract trials (tests/playground/sweeps/contract_trial.py), then
grows to its size with copies of a finished trial folder (tests/playground/sweeps/synthetic.py): the folders the
server reads are what a sweep leaves. `playground ui` serves them as a real process; headless Chromium (Debian's
/usr/bin/chromium, driven by Playwright) loads each page once to let the server read the folders (its first
reading, timed apart), then the timed loads. Times are taken in the page (performance.now(), from the start of
the navigation to the animation frame that first shows all rows, or all curves drawn), median of `--repeat`.
Beside them: a sort and a filter of the whole table, the chart drawn again alone (Plotly.newPlot), and the
server's answer to a poll with nothing new. Without a browser the timings are skipped, with the reason.

    python benchmarks/ui.py [--trials 10000] [--curve-trials 200] [--epochs 100] [--repeat 3]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TARGET = 1.0

# Installed before the page's own scripts: each animation frame counts the trials the table shows (its count line,
# once its rows are in the page: above 300 rows only those in view are) and the trials whose curves the chart has
# drawn (its data-trials, set once plotly has drawn them), and keeps the time (ms since the navigation started) of
# the frame each count was first seen at.
WATCH = """
window.__shown = {table: [0, 0], curves: [0, 0]};
(function look() {
  const body = document.querySelector('#trials tbody');
  const count = document.getElementById('trial-count');
  const rows = body && body.rows.length && count ? parseInt(count.textContent) : 0;
  const chart = document.getElementById('curves');
  const traces = chart ? parseInt(chart.dataset.trials || '0') : 0;
  if (rows !== window.__shown.table[0]) window.__shown.table = [rows, performance.now()];
  if (traces !== window.__shown.curves[0]) window.__shown.curves = [traces, performance.now()];
  requestAnimationFrame(look);
})();
"""


def make_sweep(folder: Path, trials: int, epochs: int) -> Path:
    """A sweep folder of `trials` finished trials of `epochs` full test passes each."""
    from tests.playground.sweeps.synthetic import add_finished_trials
    from tests.playground.ui.folders import asha_sweep
    sweep = folder / f"{trials}-trials"
    command = asha_sweep(sweep, searcher={"name": "random", "max_trials": 2, "seed": 0}, epochs=epochs,
                         contract_epoch_seconds=0.0)
    subprocess.run([sys.executable, *command], check=True, cwd=REPO)
    if trials > 2:
        add_finished_trials(str(sweep), trials - 2)
    return sweep


def shown(page, url: str, count: int, key: str) -> float:
    """Seconds from the start of loading `url` (a new document) to the first frame that shows `count` rows or
    drawn curves (`key`: table or curves)."""
    page.goto("about:blank")
    page.goto(url)
    page.wait_for_function(f"(n) => window.__shown.{key}[0] >= n", arg=count, timeout=600_000)
    return page.evaluate(f"() => window.__shown.{key}[1]") / 1000


def in_page(page, script: str) -> float:
    """Seconds a piece of the page's own work takes (a promise of ms)."""
    return page.evaluate(script) / 1000


SORT = """async () => { const th = [...document.querySelectorAll('#trials thead tr:first-child th')]
  .find(t => t.textContent.startsWith('test_loss')); const t0 = performance.now(); th.click();
  await new Promise(r => requestAnimationFrame(r)); return performance.now() - t0; }"""
FILTER = """async () => { const box = document.querySelector("input[data-column='state']"); const t0 = performance.now();
  box.value = 'complete'; box.dispatchEvent(new Event('input')); await new Promise(r => requestAnimationFrame(r));
  const ms = performance.now() - t0; box.value = ''; box.dispatchEvent(new Event('input')); return ms; }"""
REDRAW = """async () => { const old = document.getElementById('curves'); const div = document.createElement('div');
  document.body.append(div); const t0 = performance.now();
  await Plotly.newPlot(div, old.data, old.layout); await new Promise(r => requestAnimationFrame(r));
  const ms = performance.now() - t0; Plotly.purge(div); div.remove(); return ms; }"""


def measure(args: argparse.Namespace, folder: Path) -> dict:
    from tests.playground.ui.browser import UiProcess, chromium, skip_reason
    out: dict = {"load_start": os.getloadavg()}
    started = time.monotonic()
    table = make_sweep(folder / "sweeps", args.trials, 4)
    curves = make_sweep(folder / "sweeps", args.curve_trials, args.epochs)
    out["made"] = time.monotonic() - started
    reason = skip_reason()
    if reason:
        out["skipped"] = reason
        return out
    ui = UiProcess([folder / "sweeps"])
    try:
        with chromium(folder / "profile") as browser:
            page = browser.new_page()
            page.add_init_script(WATCH)
            table_url = f"{ui.base}/#/sweep/0%2F{table.name}"
            curves_url = f"{ui.base}/#/sweep/0%2F{curves.name}"
            out["first_table"] = shown(page, table_url, args.trials, "table")
            out["first_curves"] = shown(page, curves_url, args.curve_trials, "curves")
            out["table"] = [shown(page, table_url, args.trials, "table") for _ in range(args.repeat)]
            page.wait_for_selector("input[data-column='state']")
            out["sort"] = [in_page(page, SORT) for _ in range(args.repeat)]
            out["filter"] = [in_page(page, FILTER) for _ in range(args.repeat)]
            out["curves"] = [shown(page, curves_url, args.curve_trials, "curves")
                             for _ in range(args.repeat)]
            out["redraw"] = [in_page(page, REDRAW) for _ in range(args.repeat)]
            version = json.loads(urllib.request.urlopen(f"{ui.base}/api/sweep?key=0/{table.name}").read())["version"]
            polls = []
            for _ in range(args.repeat * 3):
                began = time.perf_counter()
                urllib.request.urlopen(f"{ui.base}/api/sweep?key=0/{table.name}&since={version}").read()
                polls.append(time.perf_counter() - began)
                time.sleep(0.5)
            out["poll"] = polls
    finally:
        ui.stop()
    out["load_end"] = os.getloadavg()
    return out


def report(args: argparse.Namespace, out: dict) -> list[str]:
    median = statistics.median
    lines = [f"playground ui: trials table of {args.trials} trials, learning curves of {args.curve_trials} trials x "
             f"{args.epochs} epochs; load average {out['load_start'][0]:.2f} at the start",
             f"  sweep folders made in {out['made']:.1f} s (not measured)"]
    if "skipped" in out:
        lines += [f"  browser timings skipped: {out['skipped']}", "  targets (<= 1 s each): not measured"]
        return lines
    lines += [
        f"  first load, the server reading every trial folder once: table {out['first_table']:.2f} s, "
        f"curves {out['first_curves']:.2f} s",
        f"  trials table of {args.trials} rows, page load to all rows shown: median {median(out['table']):.3f} s "
        f"({', '.join(f'{t:.3f}' for t in out['table'])})",
        f"    sort by the objective: {median(out['sort']) * 1000:.0f} ms; filter by state: "
        f"{median(out['filter']) * 1000:.0f} ms",
        f"  learning curves of {args.curve_trials} x {args.epochs}, page load to all curves drawn: median "
        f"{median(out['curves']):.3f} s ({', '.join(f'{t:.3f}' for t in out['curves'])})",
        f"    the chart drawn again alone (Plotly.newPlot): {median(out['redraw']) * 1000:.0f} ms",
        f"  a poll with nothing new ({args.trials} trials): {median(out['poll']) * 1000:.1f} ms",
        f"  load average {out['load_end'][0]:.2f} at the end",
        f"  targets (<= 1 s each): table {'met' if median(out['table']) <= TARGET else 'MISSED'}, curves "
        f"{'met' if median(out['curves']) <= TARGET else 'MISSED'}"]
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=10000, help="trials of the table's sweep (default 10000)")
    parser.add_argument("--curve-trials", type=int, default=200, help="trials of the curves' sweep (default 200)")
    parser.add_argument("--epochs", type=int, default=100, help="full test passes per curve (default 100)")
    parser.add_argument("--repeat", type=int, default=3, help="timed loads of each page (default 3)")
    args = parser.parse_args()
    sys.path.insert(0, str(REPO))      # the contract trial, the synthetic trials and the browser of the tests
    with tempfile.TemporaryDirectory(dir=os.environ.get("BENCH_DIR")) as folder:
        out = measure(args, Path(folder))
    print("\n".join(report(args, out)))
    return 0


if __name__ == "__main__":
    sys.exit(main())

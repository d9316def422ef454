"""`playground ui --allow-actions` in a real browser on a run and a sweep that are running: a record the run or
trial writes appears on the open page within 2 s (no reload), the stop button ends the run with a checkpoint
(exit 75), and pause and resume go through `sweep pause`/`resume` (its trials checkpoint and the sweep exits 75)."""
from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import quote

import pytest

from playground.processes.exit_codes import EXIT_STOPPED
from tests.conftest import HANG, tiny_opts
from tests.playground.ui.browser import UiProcess, shot
from tests.playground.ui.folders import asha_sweep, full_passes, write_json

LIVE_SECONDS = 2.0


def wait_until(test, what: str, seconds: float = 120.0, step: float = 0.01):
    """The first true value of test(), polled every `step` seconds (a failure names `what` after `seconds`)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = test()
        if value:
            return value
        time.sleep(step)
    raise AssertionError(f"waited {seconds} s for {what}")


def lines(path: Path) -> int:
    try:
        return path.read_text().count("\n")
    except OSError:
        return 0


def seen_within(page, script: str, argument, seconds: float = LIVE_SECONDS) -> None:
    """The page shows what `script(argument)` tests within `seconds`, without a reload."""
    from playwright.sync_api import TimeoutError as Timeout
    try:
        page.wait_for_function(script, arg=argument, timeout=seconds * 1000)
    except Timeout:
        raise AssertionError(f"not on the page within {seconds} s: {script} ({argument!r})") from None


@pytest.fixture
def running_run(tmp_path):
    """A tiny run of many epochs, started as `python AnyExpOnTerm.py ... --run-dir` (its command line names its
    folder, as a person's does); stopped at the end if a test left it running."""
    run_dir = tmp_path / "runs" / "long"
    opts = write_json(tmp_path / "long.json", {"opts": tiny_opts(epoch_iter={"num_epochs": 10000})})
    process = subprocess.Popen([sys.executable, "AnyExpOnTerm.py", "--parameters-file", str(opts), "--run-dir",
                                str(run_dir)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                               cwd=Path(__file__).resolve().parents[3])
    yield run_dir, process
    if process.poll() is None:
        process.kill()
    process.wait(timeout=HANG)
    process.stderr.close()


def test_a_running_runs_records_appear_live_and_its_stop_button_checkpoints_it(page, running_run, tmp_path):
    run_dir, process = running_run
    metrics = run_dir / "metrics.jsonl"
    wait_until(lambda: lines(metrics) >= 1, "the run's first record")
    ui = UiProcess([run_dir.parent], "--allow-actions")
    try:
        page.goto(f"{ui.base}/#/run/{quote('0/long', safe='')}")
        page.wait_for_selector("#stop-run")
        for _ in range(2):                    # twice: the page goes on following, not once
            count = lines(metrics)
            grown = wait_until(lambda: lines(metrics) > count and lines(metrics), "a new record")
            seen_within(page, "(n) => parseInt(document.getElementById('record-count').textContent) >= n", grown)
        seen_within(page, "(line) => document.getElementById('log').textContent.includes(line)",
                    (run_dir / "train.log").read_text().splitlines()[-1], seconds=LIVE_SECONDS + 1)
        shot(page, tmp_path, "run-live", docs=False)
        page.click("#stop-run")
        assert process.wait(timeout=HANG) == EXIT_STOPPED, process.stderr.read()
        page.wait_for_function("() => document.querySelector('.facts .state').textContent === 'stopped'")
        page.wait_for_selector("section tbody tr td:text-is('preemption')")
        assert "sent SIGTERM" in page.text_content("#action-result")
    finally:
        assert ui.stop() == 0


@pytest.fixture
def running_sweep(tmp_path):
    """A random search of contract trials that take a second an epoch (30 epochs), running four at a time."""
    sweep_dir = tmp_path / "sweeps" / "slow"
    command = [sys.executable, *asha_sweep(sweep_dir, searcher={"name": "random", "max_trials": 6, "seed": 0},
                                           epochs=30, contract_epoch_seconds=1.0)]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    yield sweep_dir, process
    if process.poll() is None:
        process.kill()
    process.wait(timeout=HANG)
    process.stderr.close()


def test_a_running_sweep_updates_live_and_pauses_and_resumes_from_its_buttons(page, running_sweep, tmp_path):
    sweep_dir, process = running_sweep
    first = sweep_dir / "trials" / "t0000"
    wait_until(lambda: full_passes(first) if (first / "metrics.jsonl").exists() else [], "t0000's first full pass")
    ui = UiProcess([sweep_dir.parent], "--allow-actions")
    try:
        page.goto(f"{ui.base}/#/sweep/{quote('0/slow', safe='')}")
        page.wait_for_selector("#trials tbody tr[data-trial='t0000']")
        done = len(full_passes(first))
        grown = wait_until(lambda: len(full_passes(first)) > done and full_passes(first)[-1]["epochs"],
                           "t0000's next full pass")
        seen_within(page, "(e) => document.querySelector(\"#trials tr[data-trial='t0000']\").children[5]"
                          ".textContent === String(e)", grown)
        seen_within(page, "(n) => document.getElementById('curves').data.flatMap(t => t.text || [])"
                          ".filter(label => label.startsWith('t0000 ')).length >= n", len(full_passes(first)))
        shot(page, tmp_path, "sweep-live", docs=False)
        page.click("#pause-sweep")
        assert process.wait(timeout=HANG) == EXIT_STOPPED, process.stderr.read()
        page.wait_for_function("() => document.querySelector('.facts .state').textContent === 'paused'")
        paused = [t for t, record in ((p.parent.name, json.loads(p.read_text()))
                                      for p in sweep_dir.glob("trials/*/trial.json")) if record["state"] == "paused"]
        states = {p.parent.name: json.loads(p.read_text())["state"] for p in sweep_dir.glob("trials/*/trial.json")}
        assert paused, f"the running trials were stopped after a checkpoint and marked paused: {states}"
        for trial_id in paused:
            page.wait_for_selector(f"#trials tr[data-trial='{trial_id}'] .state-paused")
        assert "paused" in page.text_content("#action-result")
        page.click("#resume-sweep")
        wait_until(lambda: not (sweep_dir / "control" / "PAUSE").exists(), "the PAUSE flag removed")
        page.wait_for_selector("#pause-sweep")
        page.wait_for_function("() => document.querySelector('.facts .state').textContent === 'stopped'")
    finally:
        assert ui.stop() == 0

"""`benchmarks/sweep.py --scale N`: what a trial costs the sweep at N trials, start and end.

Trials are the contract trial program (tests/playground/sweeps/contract_trial.py), run by `sweep run` with
`--workers` slots, so every number is the sweep layer's own. The orchestration gap of a slot is from one trial's
last act (its own timestamp just before exiting, contract_times.json) to the start of the next trial in the
same slot (attempts.jsonl): noticing the exit, reading metrics, telling the study, the reports, claiming and
asking. Phases, all in one sweep folder:

1. the first `edge` trials, real: the gap at the start and trials/min;
2. trials `edge` .. N-edge-1: real with --real-fill, else made synthetically (tests/playground/sweeps/synthetic.py:
   copies of a real finished trial folder with their own values) and taken into the study by `sweep summary
   --rebuild`, as folders whose journal was lost are;
3. the budget raised to N and the last `edge` trials run for real by a new `sweep run`: the gap at the end;
4. `sweep status` and `sweep summary --rebuild` on the N trials, each a fresh process (wall and CPU seconds),
   and whether the rebuilt summary.csv is byte for byte the one the sweep wrote incrementally. Status four ways
   (search/journal_snapshot.py): on the N-edge trials after the fill, the whole journal folded and its snapshot
   written; after phase 3, the snapshot and the last `edge` trials' records; again, nothing appended; and with
   the snapshot removed, the whole journal of N trials (what status cost before the snapshot, plus its writing).

`epochs`: each trial's epochs (2), so many full test passes reported to the study (a record each in the journal).
"""
from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def measure(folder: str, n: int, workers: int, edge: int, real_fill: bool, write_spec, epochs: int = 2) -> dict:
    sweep = os.path.join(folder, "sweep")
    out: dict = {"load_start": os.getloadavg(), "epochs": epochs}
    write_spec = _with_epochs(write_spec, epochs)
    edge = min(edge, n)
    out["start"] = _phase(write_spec, folder, sweep, edge, workers, range(0, edge))
    fill = max(n - 2 * edge, 0)
    if fill and real_fill:
        _run(write_spec(folder, {"name": "random", "max_trials": edge + fill}), sweep, workers)
    elif fill:
        from tests.playground.sweeps.synthetic import add_finished_trials
        add_finished_trials(sweep, fill)
        out["fill_rebuild"] = _timed(["summary", sweep, "--rebuild"])
    out["status_whole"] = _timed(["status", sweep])       # no snapshot yet: the whole journal, the snapshot written
    if n > edge:
        out["end"] = _phase(write_spec, folder, sweep, n, workers, range(edge + fill, n))
    with open(os.path.join(sweep, "summary.csv"), "rb") as handle:
        incremental = handle.read()
    out["status_tail"] = _timed(["status", sweep])        # the snapshot, then the last trials' records
    out["status"] = _timed(["status", sweep])             # the snapshot, nothing appended since
    snapshot = os.path.join(sweep, "study.journal.digest")
    if os.path.exists(snapshot):
        os.unlink(snapshot)
    out["status_cold"] = _timed(["status", sweep])        # the whole journal of N trials again
    out["rebuild"] = _timed(["summary", sweep, "--rebuild"])
    with open(os.path.join(sweep, "summary.csv"), "rb") as handle:
        out["same_summary"] = handle.read() == incremental
    out["trials"] = len(os.listdir(os.path.join(sweep, "trials")))
    out["load_end"] = os.getloadavg()
    return out


def _with_epochs(write_spec, epochs: int):
    """write_spec(folder, searcher) with `epochs` epochs per trial in the spec it writes."""
    def write(folder: str, searcher: dict) -> str:
        path = write_spec(folder, searcher)
        with open(path, encoding="utf-8") as handle:
            spec = json.load(handle)
        spec["space"]["epoch_iter.num_epochs"] = epochs
        with open(path, "w", encoding="utf-8") as handle:
            json.dump(spec, handle)
        return path
    return write


def _phase(write_spec, folder: str, sweep: str, budget: int, workers: int, numbers: range) -> dict:
    spec = write_spec(folder, {"name": "random", "max_trials": budget})
    _run(spec, sweep, workers)
    attempts = [_attempt(sweep, f"t{i:04d}") for i in numbers]
    by_slot: dict[int, list[dict]] = {}
    for a in attempts:
        by_slot.setdefault(a["slot"], []).append(a)
    gaps = []
    for runs in by_slot.values():
        runs.sort(key=lambda a: a["start"])
        gaps += [b["start"] - a["finished"] for a, b in zip(runs, runs[1:])]
    span = max(a["end"] for a in attempts) - min(a["start"] for a in attempts)
    return {"trials": len(attempts), "gaps": gaps, "per_minute": 60 * len(attempts) / span if span else 0.0}


def _attempt(sweep: str, trial_id: str) -> dict:
    folder = os.path.join(sweep, "trials", trial_id)
    with open(os.path.join(folder, "attempts.jsonl"), encoding="utf-8") as handle:
        ended = [json.loads(line) for line in handle if '"end"' in line]
    with open(os.path.join(folder, "contract_times.json"), encoding="utf-8") as handle:
        return {**ended[-1], **json.load(handle)}


def _run(spec: str, sweep: str, workers: int) -> None:
    subprocess.run([sys.executable, "-m", "playground", "sweep", "run", spec, "--workers", str(workers),
                    "--sweep-dir", sweep, "--quiet"], cwd=REPO, check=True)


def _timed(arguments: list[str]) -> dict:
    """A `playground sweep ...` command in a fresh process: its wall and CPU seconds (interpreter included)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "playground", "sweep", *arguments], cwd=REPO, check=True,
                   stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return {"wall": wall, "cpu": after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime}


def report(n: int, workers: int, out: dict) -> list[str]:
    lines = [f"scale {n} trials ({out['trials']} trial folders) of {out['epochs']} epochs, {workers} workers, "
             f"contract trial program; {os.cpu_count()} CPUs, load average {_load(out['load_start'])} at the start"]
    for name in ("start", "end"):
        if name in out:
            phase = out[name]
            lines.append(f"  gap at the {name} ({phase['trials']} real trials, {len(phase['gaps'])} gaps): "
                         f"{_spread(phase['gaps'])}; {phase['per_minute']:.0f} trials/min")
    if "fill_rebuild" in out:
        lines.append(f"  synthetic fill taken in by summary --rebuild: {_seconds(out['fill_rebuild'])}")
    lines.append(f"  sweep status: {_seconds(out['status'])} (target 1 s at 10,000 trials); after the last trials "
                 f"{_seconds(out['status_tail'])}; the whole journal without a snapshot {_seconds(out['status_cold'])}"
                 f" (and before the last trials, writing the snapshot: {_seconds(out['status_whole'])})")
    lines.append(f"  sweep summary --rebuild: {_seconds(out['rebuild'])} (target 10 s at 10,000 trials); "
                 f"summary.csv byte for byte as the sweep wrote it: {'yes' if out['same_summary'] else 'NO'}")
    lines.append(f"  load average at the end {_load(out['load_end'])}")
    return lines


def _spread(gaps: list[float]) -> str:
    if not gaps:
        return "none (one trial per slot)"
    ordered = sorted(gaps)
    p90 = ordered[min(len(ordered) - 1, int(round(0.9 * (len(ordered) - 1))))]
    return f"median {statistics.median(ordered):.3f} s, p90 {p90:.3f} s, max {ordered[-1]:.3f} s"


def _seconds(timing: dict) -> str:
    return f"{timing['wall']:.2f} s wall, {timing['cpu']:.2f} s CPU"


def _load(values: tuple) -> str:
    return " / ".join(f"{v:.1f}" for v in values)

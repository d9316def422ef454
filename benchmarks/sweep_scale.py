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
   and whether the rebuilt summary.csv is byte for byte the one the sweep wrote incrementally.
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


def measure(folder: str, n: int, workers: int, edge: int, real_fill: bool, write_spec) -> dict:
    sweep = os.path.join(folder, "sweep")
    out: dict = {"load_start": os.getloadavg()}
    edge = min(edge, n)
    out["start"] = _phase(write_spec, folder, sweep, edge, workers, range(0, edge))
    fill = max(n - 2 * edge, 0)
    if fill and real_fill:
        _run(write_spec(folder, {"name": "random", "max_trials": edge + fill}), sweep, workers)
    elif fill:
        from tests.playground.sweeps.synthetic import add_finished_trials
        add_finished_trials(sweep, fill)
        out["fill_rebuild"] = _timed(["summary", sweep, "--rebuild"])
    if n > edge:
        out["end"] = _phase(write_spec, folder, sweep, n, workers, range(edge + fill, n))
    with open(os.path.join(sweep, "summary.csv"), "rb") as handle:
        incremental = handle.read()
    out["status"] = _timed(["status", sweep])
    out["rebuild"] = _timed(["summary", sweep, "--rebuild"])
    with open(os.path.join(sweep, "summary.csv"), "rb") as handle:
        out["same_summary"] = handle.read() == incremental
    out["trials"] = len(os.listdir(os.path.join(sweep, "trials")))
    out["load_end"] = os.getloadavg()
    return out


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
    lines = [f"scale {n} trials ({out['trials']} trial folders), {workers} workers, contract trial program; "
             f"{os.cpu_count()} CPUs, load average {_load(out['load_start'])} at the start"]
    for name in ("start", "end"):
        if name in out:
            phase = out[name]
            lines.append(f"  gap at the {name} ({phase['trials']} real trials, {len(phase['gaps'])} gaps): "
                         f"{_spread(phase['gaps'])}; {phase['per_minute']:.0f} trials/min")
    if "fill_rebuild" in out:
        lines.append(f"  synthetic fill taken in by summary --rebuild: {_seconds(out['fill_rebuild'])}")
    lines.append(f"  sweep status: {_seconds(out['status'])} (target 1 s at 10,000 trials)")
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

"""`benchmarks/sweep.py --start`: how long a real trial takes to start, and a sweep of one-epoch digits trials
end to end, with the agent's trial server (trials forked from a process that imported torch once) and without it
(PLAYGROUND_TRIAL_SERVER=0: each trial a fresh interpreter).

The trials are `playground run` on experiments/digits_mlp.json, one epoch, the learning rate drawn by a seeded
random searcher (the same trials in both modes), with benchmarks/first_step_hook.py added to the opts. A trial's
start-to-first-step time runs from the agent's start stamp of its attempt (attempts.jsonl `start`, taken just
before the agent starts the trial's process) to the end of its first optimizer step (first_step.json, written by
the hook, which also records the CPU time the trial's process had spent by then: its imports, fresh, or what it does
after the fork, forked). The first trial of a sweep with the server also waits for the server to start (its
imports): it is reported apart. The sweeps of the two modes alternate (fresh, forked, then forked, fresh, ...) so that the
machine's load, shared with others, weighs on both alike; each sweep's wall time, the CPU time of all its
processes (the agent, the server, the trials: all reaped into this process's children) and the load average
at its start are kept.
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
HERE = os.path.join(REPO, "benchmarks")
MODES = ("fresh", "forked")


def measure(folder: str, trials: int, rounds: int, workers: int) -> dict[str, list[dict]]:
    """Per mode, one entry per sweep: wall, cpu, load, first (the first trial's start) and starts (the others')."""
    out: dict[str, list[dict]] = {mode: [] for mode in MODES}
    for index in range(rounds):
        for mode in (MODES if index % 2 == 0 else MODES[::-1]):
            out[mode].append(_sweep(os.path.join(folder, f"{mode}{index}"), mode, trials, workers, seed=index))
            done = out[mode][-1]
            print(f"  {mode} sweep {index}: {done['wall']:.1f} s wall, {done['cpu']:.1f} s CPU, load "
                  f"{done['load']:.2f}, start to first step median {statistics.median(done['starts']):.3f} s "
                  f"(first trial {done['first']:.2f} s)", flush=True)
    return out


def report(trials: int, workers: int, out: dict[str, list[dict]]) -> list[str]:
    lines = []
    for mode in MODES:
        cpu = statistics.median(c for sweep in out[mode] for c in sweep["cpu_before"])
        starts = [s for sweep in out[mode] for s in sweep["starts"]]
        firsts = ", ".join(f"{sweep['first']:.2f}" for sweep in out[mode])
        lines.append(f"trial start to first step, {mode}: median {statistics.median(starts):.3f} s, min "
                     f"{min(starts):.3f}, max {max(starts):.3f} ({len(starts)} trials; each sweep's first: {firsts} s); CPU before the first step, median {cpu:.3f} s"
                     + (" (target median <= 0.5 s)" if mode == "forked" else ""))
    for mode in MODES:
        runs = "; ".join(f"{s['wall']:.1f} s wall, {s['cpu']:.1f} s CPU, load {s['load']:.2f}" for s in out[mode])
        lines.append(f"{trials} one-epoch digits trials, {workers} worker(s), {mode}: {runs}")
    fresh = sum(s["wall"] for s in out["fresh"])
    forked = sum(s["wall"] for s in out["forked"])
    cpu_fresh = sum(s["cpu"] for s in out["fresh"])
    cpu_forked = sum(s["cpu"] for s in out["forked"])
    lines.append(f"sweep end to end, fresh / forked: {fresh / forked:.2f}x wall, {cpu_fresh / cpu_forked:.2f}x CPU "
                 f"(target >= 2x)")
    return lines


def _sweep(folder: str, mode: str, trials: int, workers: int, seed: int) -> dict:
    os.makedirs(folder)
    spec = os.path.join(folder, "spec.json")
    with open(spec, "w", encoding="utf-8") as handle:
        json.dump({"name": "start", "base": os.path.join(REPO, "experiments", "digits_mlp.json"),
                   "objective": {"metric": "test_accuracy_top1", "mode": "max"},
                   "searcher": {"name": "random", "max_trials": trials, "seed": seed},
                   "space": {"model_param.base_learning_rate": {"type": "log", "minval": -3, "maxval": 0},
                             "epoch_iter.num_epochs": 1, "model.hooks_py": ["first_step_hook"]}}, handle)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [HERE, os.environ.get("PYTHONPATH")])))
    env.pop("PLAYGROUND_TRIAL_SERVER", None)
    if mode == "fresh":
        env["PLAYGROUND_TRIAL_SERVER"] = "0"
    sweep = os.path.join(folder, "sweep")
    load = os.getloadavg()[0]
    cpu = _children_cpu()
    started = time.time()
    subprocess.run([sys.executable, "-m", "playground", "sweep", "run", spec, "--sweep-dir", sweep, "--workers",
                    str(workers), "--quiet"], cwd=REPO, env=env, check=True)
    wall = time.time() - started
    starts = sorted(_start_to_first_step(os.path.join(sweep, "trials", name))
                    for name in os.listdir(os.path.join(sweep, "trials")))
    first = starts[0]       # by start stamp: the trial that started first
    return {"wall": wall, "cpu": _children_cpu() - cpu, "load": load, "first": first[1],
            "starts": [s[1] for s in starts[1:]], "cpu_before": [s[2] for s in starts]}


def _start_to_first_step(trial: str) -> tuple[float, float, float]:
    """(the attempt's start stamp, seconds from it to the end of the first step, the trial's CPU seconds by then)."""
    with open(os.path.join(trial, "attempts.jsonl"), encoding="utf-8") as handle:
        start = json.loads(handle.readline())["start"]
    with open(os.path.join(trial, "first_step.json"), encoding="utf-8") as handle:
        first = json.load(handle)
    return start, first["time"] - start, first["cpu"]


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime

"""Sweep orchestration: time per trial apart from the run, parallel efficiency, claim-and-tell throughput.

    .venv/bin/python benchmarks/sweep.py [--trials 20] [--busy 2.0] [--tells 200]
    .venv/bin/python benchmarks/sweep.py --scale N [--workers 4] [--edge 20] [--real-fill] [--epochs 2]
    .venv/bin/python benchmarks/sweep.py --start [--start-trials 100] [--rounds 2] [--start-workers 1]

`--scale N` measures only the cost per trial at N trials, start and end (benchmarks/sweep_scale.py). `--start`
measures only a real trial's start-to-first-step time and a sweep of one-epoch digits trials end to end, with the
agent's trial server and without it, alternately (benchmarks/sweep_start.py).

1. Orchestration per trial: a 1-worker sweep of N trials of the contract trial program (the run-folder
   contract in a ~50 ms pure-Python process, tests/playground/sweeps/contract_trial.py). For trial i the
   orchestration time is from trial i's last act (its own timestamp just before exit) to the moment the agent
   starts trial i+1: noticing the exit, reading metrics, telling the study, rewriting the summary, claiming
   and asking for the next. The run's own start-up (interpreter, imports) is not in it. Target median <= 0.5 s.
2. Parallel efficiency: 2 workers, CPU-bound trials (each burns --busy CPU seconds), efficiency = sum of trial
   times / (workers x sweep wall), the wall from the first trial's start to the last one's end. Target >= 0.85.
3. Claim-and-tell throughput per storage: the coordinator's claim (ask) and finish (tell) on a random searcher,
   one process, then 4 processes on one study, through the journal file (target >= 20 per second), PostgreSQL
   (a throwaway cluster, or --postgres URL; target >= 10 per second on 2 cores) and the `sweep serve` gRPC proxy
   (in front of a journal). A storage whose server or extra is missing is reported as skipped, with the reason.
"""
from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import statistics
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)
CONTRACT = os.path.join(REPO, "tests", "playground", "sweeps", "contract_trial.py")


def _spec(folder: str, searcher: dict, base_extra: dict | None = None) -> str:
    from tests.playground.sweeps.conftest import tiny_mlp_opts
    opts = tiny_mlp_opts()
    opts["model_param"].update(base_extra or {})
    with open(os.path.join(folder, "base.json"), "w") as handle:
        json.dump({"opts": opts}, handle)
    spec = {"name": "bench", "base": "base.json", "trial_program": [sys.executable, CONTRACT],
            "objective": {"metric": "test_loss", "mode": "min"}, "searcher": searcher,
            "space": {"model_param.base_learning_rate": {"type": "log", "minval": -3, "maxval": 0},
                      "epoch_iter.num_epochs": 2}}
    path = os.path.join(folder, "spec.json")
    with open(path, "w") as handle:
        json.dump(spec, handle)
    return path


def _run(spec: str, sweep: str, workers: int) -> float:
    started = time.time()
    subprocess.run([sys.executable, "-m", "playground", "sweep", "run", spec, "--workers", str(workers),
                    "--sweep-dir", sweep, "--quiet"], cwd=REPO, check=True)
    return time.time() - started


def _attempts(sweep: str) -> list[dict]:
    out = []
    for trial in sorted(os.listdir(os.path.join(sweep, "trials"))):
        folder = os.path.join(sweep, "trials", trial)
        ends = [json.loads(line) for line in open(os.path.join(folder, "attempts.jsonl")) if '"end"' in line]
        with open(os.path.join(folder, "contract_times.json")) as handle:
            own = json.load(handle)
        out.append({**ends[-1], **own})
    return sorted(out, key=lambda a: a["start"])


def orchestration(trials: int) -> list[float]:
    with tempfile.TemporaryDirectory() as folder:
        spec = _spec(folder, {"name": "random", "max_trials": trials}, {})
        sweep = os.path.join(folder, "sweep")
        _run(spec, sweep, 1)
        attempts = _attempts(sweep)
        return [b["start"] - a["finished"] for a, b in zip(attempts, attempts[1:])]


def efficiency(trials: int, busy: float) -> tuple[float, float, float]:
    with tempfile.TemporaryDirectory() as folder:
        spec = _spec(folder, {"name": "random", "max_trials": trials},
                     {"contract_epoch_seconds": busy / 2, "contract_busy": True})
        sweep = os.path.join(folder, "sweep")
        _run(spec, sweep, 2)
        attempts = _attempts(sweep)
        total = sum(a["end"] - a["start"] for a in attempts)
        wall = max(a["end"] for a in attempts) - min(a["start"] for a in attempts)
        return total / (2 * wall), total, wall


def _tells(sweep: str, count: int, results, storage: str | None = None) -> None:
    from playground.sweeps.agents.coordinator import Coordinator
    from playground.sweeps.files.sweep_folder import SweepFolder
    from playground.sweeps.inputs.spec import load_spec
    from playground.sweeps.search.study import load_study
    spec = load_spec(os.path.join(os.path.dirname(sweep), "spec.json"))
    folder = SweepFolder(sweep)
    study = load_study(folder, spec.searcher, spec.objectives, create=True, storage=storage)
    coordinator = Coordinator(study, spec, folder, total=10 ** 9, adopt=False)
    started = time.time()
    for i in range(count):
        ticket = coordinator.claim()
        coordinator.finish(ticket, "complete", [float(i)])
    results.put(time.time() - started)


def throughput(tells: int, processes: int, storage: str | None = None) -> float:
    with tempfile.TemporaryDirectory() as folder:
        spec = _spec(folder, {"name": "random", "max_trials": 10 ** 9}, {})
        sweep = os.path.join(folder, "sweep")
        from playground.sweeps.files.sweep_folder import SweepFolder
        from playground.sweeps.inputs.spec import load_spec
        from playground.sweeps.search.study import load_study
        loaded = load_spec(spec)
        proxy = _serve(sweep) if storage == "grpc" else None
        try:
            storage = proxy[1] if proxy else storage
            SweepFolder(sweep).write_spec(loaded.raw, loaded.identity())
            load_study(SweepFolder(sweep), loaded.searcher, loaded.objectives, create=True, storage=storage)
            context = multiprocessing.get_context("fork")
            results = context.Queue()
            workers = [context.Process(target=_tells, args=(sweep, tells // processes, results, storage))
                       for _ in range(processes)]
            started = time.time()
            for worker in workers:
                worker.start()
            for worker in workers:
                worker.join()
            return tells / (time.time() - started)
        finally:
            if proxy:
                proxy[0].terminate()
                proxy[0].wait(timeout=30)


def _serve(sweep: str) -> tuple[subprocess.Popen, str]:
    """`playground sweep serve` on the sweep folder, on a free port of 127.0.0.1: (process, URL)."""
    os.makedirs(sweep, exist_ok=True)
    server = subprocess.Popen([sys.executable, "-m", "playground", "sweep", "serve", sweep, "--host", "127.0.0.1"],
                              cwd=REPO, stdout=subprocess.PIPE, text=True)
    line = server.stdout.readline()
    return server, line.split(" at ")[1].strip()


def storages(postgres: str | None):
    """(label, storage URL or None, target, skip reason) for each storage; a throwaway PostgreSQL cluster is
    started when no --postgres URL is given and the server binaries exist."""
    from contextlib import ExitStack
    from tests.playground.sweeps import pg_cluster
    stack = ExitStack()
    yield "journal", None, 20, None
    try:
        import psycopg  # noqa: F401
        reason = None if postgres else pg_cluster.skip_reason()
    except ImportError:
        reason = "psycopg missing: pip install 'playground[postgres]'"
    if reason is None and postgres is None:
        postgres = stack.enter_context(pg_cluster.Cluster())
    with stack:
        yield "PostgreSQL", postgres, 10, reason
    try:
        import grpc  # noqa: F401
        reason = None
    except ImportError:
        reason = "grpcio missing: pip install 'playground[grpc]'"
    yield "gRPC proxy", "grpc", 10, reason


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--busy", type=float, default=2.0, help="CPU seconds per trial for the efficiency run")
    parser.add_argument("--tells", type=int, default=200)
    parser.add_argument("--postgres", metavar="URL", help="a PostgreSQL database to measure (default: a throwaway "
                        "cluster, when the server binaries exist)")
    parser.add_argument("--only-storages", action="store_true", help="measure only claim-and-tell per storage")
    parser.add_argument("--scale", type=int, metavar="N", help="measure only the cost per trial at N trials")
    parser.add_argument("--workers", type=int, default=4, help="slots of the --scale sweep")
    parser.add_argument("--edge", type=int, default=20, help="real trials at the start and at the end of --scale")
    parser.add_argument("--real-fill", action="store_true", help="--scale: run every trial for real (slow)")
    parser.add_argument("--epochs", type=int, default=2, help="--scale: epochs per trial (a journal record each)")
    parser.add_argument("--start", action="store_true", help="measure only trial start-up, with and without the "
                        "trial server")
    parser.add_argument("--start-trials", type=int, default=100, help="--start: trials per sweep")
    parser.add_argument("--rounds", type=int, default=2, help="--start: sweeps per mode, the modes alternating")
    parser.add_argument("--start-workers", type=int, default=1, help="--start: slots of each sweep")
    args = parser.parse_args()
    if args.scale:
        return _scale(args)
    if args.start:
        return _start(args)
    print(f"load average at start: {os.getloadavg()}")
    if args.only_storages:
        _storages(args)
        print(f"load average at end: {os.getloadavg()}")
        return 0
    gaps = orchestration(args.trials)
    print(f"orchestration per trial ({len(gaps)} gaps, 1 worker): median {statistics.median(gaps):.3f} s, "
          f"min {min(gaps):.3f}, max {max(gaps):.3f} (target median <= 0.5 s)")
    ratio, total, wall = efficiency(8, args.busy)
    print(f"parallel efficiency, 2 workers, 8 CPU-bound trials: {ratio:.3f} (sum of trial times {total:.1f} s, "
          f"wall {wall:.1f} s; target >= 0.85)")
    _storages(args)
    print(f"load average at end: {os.getloadavg()}")
    return 0


def _scale(args: argparse.Namespace) -> int:
    from sweep_scale import measure, report
    with tempfile.TemporaryDirectory() as folder:
        out = measure(folder, args.scale, args.workers, args.edge, args.real_fill, _spec, args.epochs)
    print("\n".join(report(args.scale, args.workers, out)))
    return 0


def _start(args: argparse.Namespace) -> int:
    from sweep_start import measure, report
    if args.start_trials < 2:
        sys.exit("sweep.py: --start-trials must be at least 2 (a sweep's first trial is reported apart)")
    print(f"load average at start: {os.getloadavg()}", flush=True)
    with tempfile.TemporaryDirectory() as folder:
        out = measure(folder, args.start_trials, args.rounds, args.start_workers)
    print("\n".join(report(args.start_trials, args.start_workers, out)))
    print(f"load average at end: {os.getloadavg()}")
    return 0


def _storages(args: argparse.Namespace) -> None:
    for label, storage, target, reason in storages(args.postgres):
        if reason:
            print(f"claim-and-tell on {label}: skipped ({reason})")
            continue
        for processes in (1, 4):
            rate = throughput(args.tells, processes, storage)
            print(f"claim-and-tell on {label}, {processes} process(es): {rate:.1f} trials/s (target >= {target})",
                  flush=True)


if __name__ == "__main__":
    sys.exit(main())

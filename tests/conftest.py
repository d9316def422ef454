"""Shared test helpers: the smoke opts, a tiny-run variant of them, and running the real command line."""
from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest


def share_the_cores_among_the_workers() -> None:
    """Each of the suite's n workers (pytest-xdist), and every process its tests start, computes with cores // n
    threads. With torch's default, a thread per core in each of n workers' processes at once, OpenMP threads
    busy-wait for each other between operations and the same work costs more CPU. Only in a worker: a suite run
    without xdist is alone on the machine, and the serial tests compare a Slurm task's threads (torch's default:
    its CPU mask) with the built-in launcher's. What the caller set is kept; a run whose opts give its threads
    still uses them.

    Done when pytest imports this file, the first of the suite's conftest files: torch reads OMP_NUM_THREADS
    when it is imported, and a conftest below this folder (tests/playground's) imports torch before any hook
    here runs. A worker computing with more threads than its children ends a reference run made in the worker
    with other bits than the same run killed and resumed in child processes (tests/experiments, the
    checkpoint tests). Where torch was imported even earlier (a plugin), its threads are set here."""
    workers = os.environ.get("PYTEST_XDIST_WORKER_COUNT")   # set by xdist in a worker before it reads conftests
    if not (workers and os.environ.get("PYTEST_XDIST_WORKER")):
        return
    os.environ.setdefault("OMP_NUM_THREADS", str(max(len(os.sched_getaffinity(0)) // int(workers), 1)))
    threads = os.environ["OMP_NUM_THREADS"]
    if "torch" in sys.modules and threads.isdigit():
        sys.modules["torch"].set_num_threads(int(threads))


share_the_cores_among_the_workers()

REPO = Path(__file__).resolve().parent.parent
DATA = Path(__file__).resolve().parent / "data"
# seconds: the limit on a test's subprocess or wait, which only turns a hang into a failure. Never a speed
# expectation: on a machine shared with other work a test may take several times its usual time.
HANG = 900


def load_experiment(name: str) -> dict:
    with open(REPO / "experiments" / name, encoding="utf-8") as handle:
        return json.load(handle)["opts"]


def tiny_opts(**sections) -> dict:
    """The smoke experiment shrunk to run in about a second: 64x(3x8x8) samples, 2 epochs of 4 iterations."""
    opts = copy.deepcopy(load_experiment("smoke.json"))
    opts["input"].update(synthetic_shape=[3, 8, 8], synthetic_train_size=128, synthetic_test_size=40)
    opts["model_param"]["cnn_channels"] = [8, 8]
    opts["epoch_iter"].update(num_train_sample_per_epoch=64, num_epochs=2, batch_per_device=16,
                              num_train_iteration_per_test=2, num_test_iter=1)
    opts["output"]["progress"] = "log"
    for section, values in sections.items():
        opts.setdefault(section, {}).update(values)
    return opts


def run_cli(*args: str, cwd: str | os.PathLike | None = None, timeout: float = HANG,
            env: dict | None = None, script: str = "AnyExpOnTerm.py") -> subprocess.CompletedProcess:
    """Run `python AnyExpOnTerm.py ARGS` (or another entry) as a real process; returns the completed process."""
    from tests import zygote
    full_env = dict(os.environ, PYTHONUNBUFFERED="1", **(env or {}))
    command = [sys.executable, str(REPO / script), *args] if script.endswith(".py") else [sys.executable, "-m", script, *args]
    return zygote.run(command, cwd=cwd, env=full_env, capture_output=True, text=True, timeout=timeout)


@pytest.fixture
def opts_file(tmp_path):
    """Write opts to a JSON file in the blob form and return its path."""
    def write(opts: dict, name: str = "opts.json") -> str:
        path = tmp_path / name
        path.write_text(json.dumps({"opts": opts}))
        return str(path)
    return write



def _started(make, skip_reason, failure: str):
    """Yield `make()` started, stopping it afterwards; skip with the reason where it cannot be (a session fixture's
    body: `yield from _started(...)`)."""
    reason = skip_reason()
    if reason:
        pytest.skip(reason)
    thing = make()
    try:
        try:
            thing.start()
        except (RuntimeError, OSError, subprocess.SubprocessError) as err:
            pytest.skip(f"{failure}: {err}")
        yield thing
    finally:
        thing.stop()


@pytest.fixture(scope="session")
def slurm_cluster():
    """A Slurm cluster of two nodes (n1, n2) on this host for the whole session (tests/slurm_cluster.py); the tests
    that use it are skipped, with the reason, only where its daemons cannot start."""
    from tests.slurm_cluster import SlurmCluster, skip_reason
    yield from _started(SlurmCluster, skip_reason, "the Slurm daemons did not start")


@pytest.fixture(scope="session")
def two_hosts():
    """Two hosts with their own names and addresses, made of network namespaces (tests/separate_hosts.py); the
    tests that use them are skipped, with the reason, only where the namespaces cannot be made."""
    from tests.separate_hosts import TwoHosts, skip_reason
    yield from _started(TwoHosts, skip_reason, "the network namespaces could not be made")


# session fixtures that every worker can use at once (made once under a file lock, read by all): their tests need not
# share a worker (tests/playground/conftest.py)
WORKER_SHARED = {("tests.playground.conftest", "uninterrupted")}


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """Under pytest-xdist (`make test`: --dist loadgroup), the tests that share one of our session- or module-scoped
    fixtures run on one worker, so it is made once (the reference runs of the resume tests, a PostgreSQL server, a
    module's trained runs); the tests marked serial (a real Slurm, network namespaces) run one after the other on one
    worker; the other tests are spread one by one. Without xdist this does nothing."""
    if not config.pluginmanager.hasplugin("xdist"):
        return
    for item in items:
        info = getattr(item, "_fixtureinfo", None)
        if info is None or item.get_closest_marker("xdist_group"):
            continue
        if item.get_closest_marker("serial"):     # one after the other on one worker: one Slurm, one pair of hosts
            item.add_marker(pytest.mark.xdist_group("serial"))
            continue
        shared = sorted((defs[-1].scope == "module", name) for name, defs in info.name2fixturedefs.items()
                        if defs and defs[-1].scope in ("session", "package", "module")
                        and getattr(defs[-1].func, "__module__", "").startswith("tests.")
                        and (defs[-1].func.__module__, name) not in WORKER_SHARED)
        if shared:      # by the session fixture; else every test of the module that has a module fixture together
            by_module, name = shared[0]
            item.add_marker(pytest.mark.xdist_group(item.module.__name__ if by_module else name))


_SERIAL: dict[str, list] = {}   # node id -> [seconds of setup, call and teardown, outcome]


def pytest_runtest_logreport(report):
    """Keep the outcome and time of each test marked serial (in the controller too, under xdist)."""
    if "serial" not in report.keywords:
        return
    entry = _SERIAL.setdefault(report.nodeid, [0.0, "PASSED"])
    entry[0] += report.duration
    if report.when == "call" and hasattr(report, "wasxfail"):
        entry[1] = "XFAIL" if report.skipped else "XPASS"
    elif report.outcome != "passed":
        entry[1] = f"{report.outcome.upper()} (in {report.when})" if report.when != "call" else report.outcome.upper()


def pytest_terminal_summary(terminalreporter):
    """The serial tests (a real Slurm, network namespaces) by name with outcome and time: CI's log shows they ran."""
    if not _SERIAL:
        return
    terminalreporter.section("serial tests: a real Slurm, network namespaces")
    for nodeid, (seconds, outcome) in _SERIAL.items():
        terminalreporter.write_line(f"{outcome:8} {seconds:7.1f} s  {nodeid}")

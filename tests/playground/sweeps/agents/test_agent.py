"""Several agent processes on one sweep (real `playground sweep run` / `sweep agent` processes, the contract
trial program): a stopped agent is fenced out by the one that adopts its trial, agents with distinct host ids
share a sweep, and a sweep whose process trees are SIGKILLed again and again ends exactly as an uninterrupted
one."""
from __future__ import annotations

import json
import os
import random
import signal
import socket
import subprocess
import threading
import sys
import time
from pathlib import Path

import pytest

from playground.cli import main
from playground.restarts.attempts import read_attempts
from playground.restarts.fence import claims, read_claim
from playground.sweeps.operations.reports import open_sweep
from tests.conftest import HANG
from tests.proc_state import state, stopped


_STARTED: list[subprocess.Popen] = []     # the running test's `started` (conftest.py): killed at its end


@pytest.fixture(autouse=True)
def _agents_end_with_their_test(started, monkeypatch):
    monkeypatch.setattr(sys.modules[__name__], "_STARTED", started)


def _start(args: list[str], host: str, log: Path) -> subprocess.Popen:
    """A playground command as its own process group (so the whole tree can be signalled) on host `host`; its
    group is killed when the test ends, passed or failed."""
    env = dict(os.environ, PLAYGROUND_HOST_ID=host)
    with open(log, "ab") as out:
        _STARTED.append(subprocess.Popen([sys.executable, "-m", "playground", *args], env=env, stdout=out,
                                         stderr=subprocess.STDOUT, start_new_session=True))
    return _STARTED[-1]


def _wait_for(condition, what: str, *processes: subprocess.Popen, story=lambda: "") -> None:
    """Until `condition()`; fails when one of `processes` ended first, adding `story()` (their output, say)."""
    deadline = time.monotonic() + HANG
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}\n{story()}"
        assert all(p.poll() is None for p in processes), f"a process ended before {what}\n{story()}"
        time.sleep(0.05)


def _contract(base_file: Path, **param) -> None:
    """Settings of the contract trial program, in the base opts (they are no opts keys of playground run)."""
    opts = json.loads(base_file.read_text())
    opts["opts"]["model_param"].update(param)
    base_file.write_text(json.dumps(opts))


def _finish(process: subprocess.Popen, log: Path) -> int:
    try:
        return process.wait(timeout=HANG)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        raise AssertionError(f"hung; its output:\n{log.read_text()[-3000:]}")


def _initialise(spec: Path, sweep: Path) -> None:
    """Create the sweep folder and its study, running nothing: `sweep run` on a paused folder does just that."""
    (sweep / "control").mkdir(parents=True)
    (sweep / "control" / "PAUSE").write_text("")
    assert main(["sweep", "run", str(spec), "--sweep-dir", str(sweep), "--quiet"]) == 75
    (sweep / "control" / "PAUSE").unlink()


def _story(run_dirs: list[Path]) -> str:
    """Each run folder's claims, attempts and terminal output, for a failure message."""
    return "\n".join(f"{d.name}: claims {[read_claim(str(d), n) for n in claims(str(d))]}\n"
                     f"attempts {read_attempts(str(d))}\n"
                     f"log {(d / 'sweep-trial.log').read_text()[-2000:] if (d / 'sweep-trial.log').is_file() else ''}"
                     for d in run_dirs)


def _states(sweep: Path) -> dict[str, str]:
    _, _, study = open_sweep(str(sweep))
    return {t.user_attrs["trial_id"] if "trial_id" in t.user_attrs else f"t{t.number:04d}": t.state.name
            for t in study.get_trials()}


def _files(root: Path, skip) -> dict[str, tuple[bytes, int]]:
    """Every file under `root` but those `skip(relative path)` names: its bytes and its mtime in ns."""
    out = {}
    for path in sorted(root.rglob("*")):
        rel = str(path.relative_to(root))
        if path.is_file() and not skip(rel):
            out[rel] = (path.read_bytes(), path.stat().st_mtime_ns)
    return out


def _stop_between_writes(agent: subprocess.Popen, journal_lock: Path) -> None:
    """SIGSTOP the agent's process group at a moment it does not hold the journal's lock. Stopped inside an append
    for longer than the lock's grace (Optuna's JournalFileOpenLock: 30 s), its lock would be broken as stale and it
    would write on waking: not this test's story (noted in issue 27's closing note)."""
    for _ in range(500):
        os.killpg(agent.pid, signal.SIGSTOP)
        while state(agent.pid) not in ("T", "Z", None):    # the signal is delivered, not yet acted on
            time.sleep(0.001)
        if not journal_lock.exists():
            return
        os.killpg(agent.pid, signal.SIGCONT)
        time.sleep(0.005)
    raise AssertionError(f"agent {agent.pid} held {journal_lock} at each of 500 tries")


def test_a_stopped_agent_whose_trial_was_adopted_writes_nothing_after_waking_and_exits(write_spec, base_file,
                                                                                         tmp_path):
    _contract(base_file, contract_epoch_seconds=0.3)
    spec = write_spec({"name": "single"}, {"model_param.base_learning_rate": 0.1, "epoch_iter.num_epochs": 8},
                      agents={"heartbeat_seconds": 0.2, "grace_seconds": 2})
    sweep = tmp_path / "sweep"
    run_dir = sweep / "trials" / "t0000"
    _initialise(spec, sweep)
    a = _start(["sweep", "agent", str(sweep), "--quiet"], "host-a", tmp_path / "a.log")
    # stopped between two of A's writes to the study (its report of epoch 1 is in; epoch 2's comes 0.3 s later)
    _wait_for(lambda: (run_dir / "checkpoint.json").is_file()
              and b'"intermediate_value"' in (sweep / "study.journal").read_bytes(), "A's first report", a)
    _stop_between_writes(a, sweep / "study.journal.lock")   # agent A and its trial: a node that only looks dead
    try:
        b = _start(["sweep", "agent", str(sweep)], "host-b", tmp_path / "b.log")
        assert _finish(b, tmp_path / "b.log") == 0, (tmp_path / "b.log").read_text()
        assert claims(str(run_dir)) == [1, 2]
        assert read_claim(str(run_dir), 1)["host"] == "host-a" and read_claim(str(run_dir), 2)["host"] == "host-b"
        assert _states(sweep) == {"t0000": "COMPLETE"}
        a_heartbeat = f"control/agents/host-a-{a.pid}.json"
        log = "trials/t0000/sweep-trial.log"      # the terminal output of the runs; checked on its own below
        before = _files(sweep, lambda rel: rel in (a_heartbeat, log))
        log_before = (sweep / log).read_bytes()
    finally:
        os.killpg(a.pid, signal.SIGCONT)
    assert _finish(a, tmp_path / "a.log") == 0, (tmp_path / "a.log").read_text()     # exits on its own
    assert _files(sweep, lambda rel: rel in (a_heartbeat, log)) == before
    # what A's run may still print is its one-line refusal, never anything else
    added = (sweep / log).read_bytes()[len(log_before):].decode()
    assert (sweep / log).read_bytes().startswith(log_before)
    assert all("superseded by claim-2" in line for line in added.splitlines()), added
    assert not (sweep / a_heartbeat).exists()
    metrics = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]
    assert [r["epoch"] for r in metrics if r["kind"] == "epoch"] == list(range(8))


# in an agent's interpreter: its first append that reports an intermediate value, once it holds the journal's lock
# and before it writes, says so (the file STOP_INSIDE_AN_APPEND names) and waits there until the file is gone: the
# test freezes the agent's process group meanwhile (a frozen host) and takes the file away
STOP_INSIDE_AN_APPEND = """\
import os, time
if os.environ.get("PLAYGROUND_HOST_ID") == "host-a" and os.environ.get("STOP_INSIDE_AN_APPEND"):
    from playground.sweeps.search import journal_file
    real_append, done, marker = journal_file.SweepJournal.append_logs, [], os.environ["STOP_INSIDE_AN_APPEND"]

    def append_logs(self, logs):
        if not done and any("intermediate_value" in log for log in logs):
            done.append(True)
            lock, real_acquire = self.lock, self.lock.acquire

            def acquire():
                real_acquire()
                lock.acquire = real_acquire
                open(marker, "w").close()
                while os.path.exists(marker):
                    time.sleep(0.01)
            lock.acquire = acquire
        return real_append(self, logs)
    journal_file.SweepJournal.append_logs = append_logs
"""


def test_an_agent_frozen_inside_a_journal_append_past_the_grace_writes_nothing_after_waking_and_leaves(
        write_spec, base_file, tmp_path):
    _contract(base_file, contract_epoch_seconds=0.3)
    spec = write_spec({"name": "single"}, {"model_param.base_learning_rate": 0.1, "epoch_iter.num_epochs": 6},
                      agents={"heartbeat_seconds": 0.2, "grace_seconds": 2})
    sweep = tmp_path / "sweep"
    _initialise(spec, sweep)
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "sitecustomize.py").write_text(STOP_INSIDE_AN_APPEND)
    holding = tmp_path / "holding-the-lock"
    env = {"PLAYGROUND_JOURNAL_LOCK_GRACE_S": "3", "STOP_INSIDE_AN_APPEND": str(holding),
           "PYTHONPATH": os.pathsep.join(filter(None, [str(tmp_path / "site"), os.environ.get("PYTHONPATH")]))}
    with pytest.MonkeyPatch.context() as patch:      # both agents: the grace; only host-a waits in its append
        for key, value in env.items():
            patch.setenv(key, value)
        a = _start(["sweep", "agent", str(sweep)], "host-a", tmp_path / "a.log")
        _wait_for(holding.exists, "agent A holding the journal's lock before a write", a)
        try:
            os.killpg(a.pid, signal.SIGSTOP)     # agent A and its trial: a host frozen there
            _wait_for(lambda: stopped(a.pid), "agent A stopped")
            holding.unlink()                     # A goes on with its write when it wakes
            assert (sweep / "study.journal.lock").read_text().split()[0] == str(a.pid)     # A holds it
            b = _start(["sweep", "agent", str(sweep), "--quiet"], "host-b", tmp_path / "b.log")
            # B breaks A's lock after its 3 s grace, adopts A's trial (A's heartbeat is 2 s old) and ends it
            assert _finish(b, tmp_path / "b.log") == 0, (tmp_path / "b.log").read_text()
            assert _states(sweep) == {"t0000": "COMPLETE"}
            journal = (sweep / "study.journal").read_bytes()
        finally:
            os.killpg(a.pid, signal.SIGCONT)
    assert _finish(a, tmp_path / "a.log") == 0, (tmp_path / "a.log").read_text()   # exits on its own
    log = (tmp_path / "a.log").read_text()
    assert ("t0000: this agent was frozen past the journal lock's grace and another process broke the lock; the "
            "trial was adopted meanwhile, this agent leaves it") in log and "Traceback" not in log, log
    assert (sweep / "study.journal").read_bytes() == journal     # nothing written after waking
    assert not (sweep / "study.journal.lock").exists()
    assert _states(sweep) == {"t0000": "COMPLETE"}


@pytest.mark.parametrize("storage", ["journal", "proxy"])
def test_two_agents_with_distinct_host_ids_share_one_sweep(write_spec, base_file, tmp_path, capsys, storage):
    """Through the journal, and through a real `sweep serve` gRPC proxy on loopback (the several-hosts set-up
    for sites without PostgreSQL): the agents then reach the study only through the proxy's URL."""
    hold = tmp_path / "go"       # each trial waits for this file, so both agents must be holding one
    _contract(base_file, contract_hold_file=str(hold))
    spec = write_spec({"name": "grid"}, {"model_param.base_learning_rate": {"type": "categorical", "vals": [0.1, 0.01]},
                                         "epoch_iter.num_epochs": 2},
                      agents={"heartbeat_seconds": 0.2, "grace_seconds": 30})
    sweep = tmp_path / "sweep"
    _initialise(spec, sweep)
    extra, proxy = [], None
    if storage == "proxy":
        pytest.importorskip("grpc", reason="the gRPC proxy needs the grpc extra: pip install 'playground[grpc]'")
        from tests.playground.sweeps.pg_cluster import free_port
        from tests.playground.sweeps.proxy import start_proxy, stop_proxy
        port = free_port()
        proxy = start_proxy(sweep, port)
        extra = ["--storage", f"grpc://127.0.0.1:{port}"]
    try:
        _two_agents_share(sweep, hold, tmp_path, capsys, extra)
    finally:
        if proxy is not None:
            stop_proxy(proxy)


def _two_agents_share(sweep: Path, hold: Path, tmp_path: Path, capsys, extra: list[str]) -> None:
    a = _start(["sweep", "agent", str(sweep), "--workers", "1", "--quiet", *extra], "host-a", tmp_path / "a.log")
    b = _start(["sweep", "agent", str(sweep), "--workers", "1", "--quiet", *extra], "host-b", tmp_path / "b.log")
    run_dirs = [sweep / "trials" / "t0000", sweep / "trials" / "t0001"]
    _wait_for(lambda: all((d / "claim-1").is_file() for d in run_dirs), "both trials claimed", a, b)
    beats = sweep / "control" / "agents"
    _wait_for(lambda: sum(len(json.loads(p.read_text())["trials"]) for p in beats.glob("*.json")) == 2,
              "both heartbeats naming their trial", a, b)
    capsys.readouterr()
    assert main(["sweep", "status", str(sweep)]) == 0
    shown = capsys.readouterr().out
    assert f"agent host-a-{a.pid}: t000" in shown and f"agent host-b-{b.pid}: t000" in shown, shown
    hold.write_text("go")
    assert _finish(a, tmp_path / "a.log") == 0 and _finish(b, tmp_path / "b.log") == 0
    assert sorted(read_claim(str(d), 1)["host"] for d in run_dirs) == ["host-a", "host-b"]
    # attempts.jsonl names each attempt's host by the same host id as its claim (the hostname beside it)
    assert all({a["host"] for a in read_attempts(str(d))} == {read_claim(str(d), 1)["host"]} for d in run_dirs)
    assert all(a["hostname"] == socket.gethostname() for d in run_dirs for a in read_attempts(str(d)))
    assert all(claims(str(d)) == [1] for d in run_dirs), _story(run_dirs)   # nobody adopted a live agent's trial
    assert _states(sweep) == {"t0000": "COMPLETE", "t0001": "COMPLETE"}
    assert not list((sweep / "control" / "agents").iterdir())           # both removed their heartbeats


EPOCHS, KILLS, AGENTS = 4, 5, 2


@pytest.mark.slow
def test_a_sweep_whose_process_trees_are_sigkilled_five_times_ends_bitwise_equal_to_an_uninterrupted_one(
        write_spec, base_file, tmp_path):
    _contract(base_file, contract_epoch_seconds=0.1)
    space = {"model_param.base_learning_rate": {"type": "log", "minval": -3, "maxval": 0, "count": 3},
             "model_param.weight_decay": {"type": "double", "minval": 0.0, "maxval": 0.003, "count": 4},
             "epoch_iter.num_epochs": EPOCHS}
    spec = write_spec({"name": "grid"}, space, agents={"heartbeat_seconds": 0.5, "grace_seconds": 30})
    reference = tmp_path / "reference"
    assert main(["sweep", "run", str(spec), "--workers", "2", "--sweep-dir", str(reference), "--quiet"]) == 0
    sweep = tmp_path / "sweep"
    rng = random.Random(14)
    log = tmp_path / "agents.log"

    def agents() -> list[subprocess.Popen]:
        """`sweep run` (the initialisation and one agent) until the folder exists, then two `sweep agent`s."""
        if (sweep / "sweep.json").is_file():
            return [_start(["sweep", "agent", str(sweep), "--quiet"], "host", log) for _ in range(AGENTS)]
        first = _start(["sweep", "run", str(spec), "--sweep-dir", str(sweep), "--workers", "1", "--quiet"],
                       "host", log)
        _wait_for(lambda: (sweep / "sweep.json").is_file() or first.poll() is not None, "the sweep folder")
        return [first, _start(["sweep", "agent", str(sweep), "--quiet"], "host", log)]

    def claimed() -> int:
        return sum(len(claims(str(d))) for d in (sweep / "trials").glob("*")) if (sweep / "trials").is_dir() else 0

    for _ in range(KILLS):
        before = claimed()
        processes = agents()
        # a random moment while trials run: within a second of this round's first claim
        _wait_for(lambda: claimed() > before or any(p.poll() is not None for p in processes), "a claim")
        time.sleep(rng.uniform(0.0, 1.0))
        for process in processes:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    processes = agents()
    assert [_finish(p, log) for p in processes] == [0] * AGENTS, log.read_text()[-3000:]

    ids = [f"t{i:04d}" for i in range(12)]
    assert _states(sweep) == {i: "COMPLETE" for i in ids}
    for trial_id in ids:
        ours, theirs = sweep / "trials" / trial_id, reference / "trials" / trial_id
        assert json.loads((ours / "trial.json").read_text())["state"] == "complete"
        assert json.loads((ours / "trial.json").read_text())["params"] == json.loads(
            (theirs / "trial.json").read_text())["params"]
        for name in ("checkpoint.json", "metrics.jsonl", "results.json"):
            assert (ours / name).read_bytes() == (theirs / name).read_bytes(), f"{trial_id}/{name}"
    begun = sum(len((sweep / "trials" / t / "contract_epochs").read_text().splitlines()) for t in ids)
    # each kill loses at most the epoch each agent's running trial had begun since its last checkpoint
    assert 12 * EPOCHS <= begun <= 12 * EPOCHS + KILLS * AGENTS


def test_sweep_agent_exits_2_on_a_folder_that_is_no_sweep_75_when_paused_and_0_when_nothing_is_left(
        write_spec, tmp_path, capsys):
    assert main(["sweep", "agent", str(tmp_path / "nowhere")]) == 2
    assert f"{tmp_path / 'nowhere'} is not a sweep folder" in capsys.readouterr().err
    spec = write_spec({"name": "grid"}, {"model_param.base_learning_rate": {"type": "categorical", "vals": [0.1]},
                                         "epoch_iter.num_epochs": 1}, agents={"grace_seconds": 1})
    assert main(["sweep", "run", str(spec), "--sweep-dir", str(tmp_path / "s")]) == 2
    assert "agents.grace_seconds (1) must exceed twice heartbeat_seconds" in capsys.readouterr().err
    spec = write_spec({"name": "grid"}, {"model_param.base_learning_rate": {"type": "categorical", "vals": [0.1]},
                                         "epoch_iter.num_epochs": 1})
    sweep = tmp_path / "sweep"
    assert main(["sweep", "run", str(spec), "--sweep-dir", str(sweep), "--quiet"]) == 0
    (sweep / "control" / "PAUSE").write_text("")
    assert main(["sweep", "agent", str(sweep)]) == 75
    assert "is paused" in capsys.readouterr().err
    (sweep / "control" / "PAUSE").unlink()
    assert main(["sweep", "agent", str(sweep)]) == 0
    assert "nothing to do (1 trials finished)" in capsys.readouterr().err
    # joining an initialised sweep validates nothing again: no component, so no torch (seconds per agent)
    probe = ("import sys; from playground.cli import main; code = main(['sweep', 'agent', sys.argv[1], '--quiet']); "
             "print(code, 'torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", probe, str(sweep)], capture_output=True, text=True, timeout=HANG)
    assert out.stdout.split() == ["0", "False"], out.stderr


def test_a_trial_paused_by_an_agent_on_another_host_is_resumed_at_once_by_the_next_agent(
        write_spec, base_file, tmp_path, monkeypatch):
    _contract(base_file, contract_epoch_seconds=0.2)
    # a grace period longer than the hang bound: only the release written at pause lets agent B in
    spec = write_spec({"name": "single"}, {"model_param.base_learning_rate": 0.1, "epoch_iter.num_epochs": 6},
                      agents={"heartbeat_seconds": 1, "grace_seconds": 10 * HANG})
    sweep = tmp_path / "sweep"
    run_dir = sweep / "trials" / "t0000"

    def pause_after_first_checkpoint() -> None:
        _wait_for(lambda: (run_dir / "checkpoint.json").is_file(), "the first checkpoint")
        (sweep / "control" / "PAUSE").write_text("")

    pauser = threading.Thread(target=pause_after_first_checkpoint, daemon=True)
    pauser.start()
    monkeypatch.setenv("PLAYGROUND_HOST_ID", "host-a")
    assert main(["sweep", "run", str(spec), "--sweep-dir", str(sweep), "--quiet"]) == 75
    pauser.join()
    trial = json.loads((run_dir / "trial.json").read_text())
    assert (trial["state"], trial["attempt"]) == ("paused", 1)
    (sweep / "control" / "PAUSE").unlink()
    b = _start(["sweep", "agent", str(sweep), "--quiet"], "host-b", tmp_path / "b.log")
    assert _finish(b, tmp_path / "b.log") == 0
    assert read_claim(str(run_dir), 2)["host"] == "host-b"
    assert _states(sweep) == {"t0000": "COMPLETE"}
    epochs = [json.loads(line)["epoch"] for line in (run_dir / "metrics.jsonl").read_text().splitlines()]
    assert epochs == [e for e in range(6) for _ in ("interval", "epoch")]

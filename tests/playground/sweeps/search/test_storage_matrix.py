"""The storage matrix: 8 agent processes x 20 trials on one study, through the journal, PostgreSQL and the
`sweep serve` proxy. Each ends with exactly 160 trials numbered 0..159, each in one terminal state with its values
and the sweep's user attrs. PostgreSQL is restarted and the proxy stopped (SIGSTOP: calls time out, replies are
lost) and restarted mid-sweep: the agents wait it out and nothing is lost or duplicated."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from playground.sweeps.files.sweep_folder import SweepFolder
from playground.sweeps.inputs.spec import load_spec
from playground.sweeps.search.study import initialize, load_study, trial_id_of
from tests.conftest import HANG, REPO
from tests.playground.sweeps.pg_cluster import free_port
from tests.playground.sweeps.proxy import start_proxy, stop_proxy
from tests.playground.sweeps.storage_worker import value_of


WORKERS, EACH = 8, 20
LR = "model_param.base_learning_rate"


def _new_sweep(tmp_path: Path, write_spec, storage: str | None) -> SweepFolder:
    spec = load_spec(str(write_spec({"name": "random", "max_trials": WORKERS * EACH, "seed": 0},
                                    {LR: {"type": "log", "minval": -4, "maxval": 0}, "epoch_iter.num_epochs": 1})))
    folder = SweepFolder(str(tmp_path / "sweep"))
    folder.write_spec(spec.raw, spec.identity())
    initialize(load_study(folder, spec.searcher, spec.objectives, create=True, storage=storage), spec, [], [])
    return folder


def _start_workers(folder: SweepFolder, storage: str) -> list[subprocess.Popen]:
    env = {**os.environ, "PLAYGROUND_STORAGE_RETRY_S": "60", "PLAYGROUND_STORAGE_CALL_S": "1"}
    return [subprocess.Popen([sys.executable, "-m", "tests.playground.sweeps.storage_worker", folder.root, storage,
                              str(EACH)], cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True) for _ in range(WORKERS)]


def _finish(workers: list[subprocess.Popen]) -> tuple[list[int], str]:
    numbers, errors = [], ""
    for worker in workers:
        out, err = worker.communicate(timeout=HANG)
        errors += err
        assert worker.returncode == 0, err[-3000:]
        numbers += [int(line.split()[0]) for line in out.splitlines()]
    return numbers, errors


def _check(folder: SweepFolder, storage: str | None, claimed: list[int]) -> None:
    from optuna.trial import TrialState
    spec = load_spec(str(Path(folder.root).parent / "spec.json"))
    trials = load_study(folder, spec.searcher, spec.objectives, create=False, storage=storage).get_trials()
    total = WORKERS * EACH
    assert sorted(t.number for t in trials) == list(range(total))
    assert sorted(claimed) == list(range(total)), "each trial handed to exactly one agent"
    assert len({trial_id_of(t) for t in trials}) == total
    states = Counter(t.state for t in trials)
    assert states == {TrialState.COMPLETE: total // 2, TrialState.PRUNED: total // 4, TrialState.FAIL: total // 4}
    for trial in trials:
        sets = trial.user_attrs["sets"]
        assert sets == {"epoch_iter.num_epochs": 1, LR: trial.params[LR]}
        if trial.state == TrialState.FAIL:
            assert trial.values is None
        else:   # a pruned trial's value is its last report (optuna)
            assert trial.values == [value_of(sets)]
        assert trial.intermediate_values == ({100: value_of(sets)} if trial.state == TrialState.PRUNED else {})


def _wait_for_trials(count_trials, at_least: int, workers: list[subprocess.Popen]) -> None:
    """Until the study holds `at_least` trials; the outage that follows must find workers at work."""
    deadline = time.time() + HANG
    while count_trials() < at_least:
        failed = [w for w in workers if w.poll() not in (None, 0)]
        if failed:
            pytest.fail(f"a worker failed (exit {failed[0].returncode}): {failed[0].stderr.read()[-3000:]}")
        assert time.time() < deadline
        time.sleep(0.05)
    assert sum(w.poll() is None for w in workers) >= 2, "the outage must come while agents are at work"


def test_journal_eight_processes_end_with_every_trial_once(tmp_path, write_spec):
    folder = _new_sweep(tmp_path, write_spec, None)
    claimed, _ = _finish(_start_workers(folder, "journal"))
    _check(folder, None, claimed)


@pytest.mark.slow
def test_postgres_eight_processes_survive_a_server_restart(tmp_path, write_spec, postgres):
    folder = _new_sweep(tmp_path, write_spec, postgres.url)
    spec = load_spec(str(tmp_path / "spec.json"))
    study = load_study(folder, spec.searcher, spec.objectives, create=False, storage=postgres.url)
    workers = _start_workers(folder, postgres.url)
    _wait_for_trials(lambda: len(study.get_trials(deepcopy=False)), 40, workers)
    postgres.pg_ctl("restart")   # fast: every client connection is cut
    claimed, errors = _finish(workers)
    assert "unreachable" in errors, "the restart was waited out by retries"
    _check(folder, postgres.url, claimed)


@pytest.mark.slow
def test_proxy_eight_processes_survive_a_stopped_and_a_restarted_proxy(tmp_path, write_spec):
    pytest.importorskip("grpc", reason="the gRPC proxy needs the grpc extra: pip install 'playground[grpc]'")
    (tmp_path / "sweep").mkdir()
    port = free_port()
    url = f"grpc://127.0.0.1:{port}"
    proxy = start_proxy(tmp_path / "sweep", port)
    try:
        folder = _new_sweep(tmp_path, write_spec, url)
        from playground.sweeps.search.storages import open_journal
        journal = open_journal(folder.journal)
        count = lambda: len(journal.get_all_trials(0, deepcopy=False))  # noqa: E731  study id 0: the only one
        workers = _start_workers(folder, url)
        _wait_for_trials(count, 25, workers)
        proxy.send_signal(signal.SIGSTOP)    # calls time out after 1 s; some of them were carried out
        time.sleep(2.5)
        proxy.send_signal(signal.SIGCONT)
        _wait_for_trials(count, 60, workers)
        stop_proxy(proxy)
        time.sleep(1.0)
        proxy = start_proxy(tmp_path / "sweep", port)
        claimed, errors = _finish(workers)
        assert "unreachable" in errors
        _check(folder, "journal", claimed)
    finally:
        stop_proxy(proxy)

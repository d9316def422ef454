"""`playground sweep serve`: the URL it prints and records, one server per folder, and a sweep through it that
outlives the proxy: stopped past the retry bound (exit 75, trials checkpointed), finished after the proxy is back."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from tests.conftest import HANG, REPO
from tests.playground.sweeps.pg_cluster import free_port
from tests.playground.sweeps.proxy import start_proxy, stop_proxy

pytest.importorskip("grpc", reason="the gRPC proxy needs the grpc extra: pip install 'playground[grpc]'")


def test_serve_records_its_url_and_refuses_a_second_server_on_the_folder(tmp_path, capsys):
    from playground.cli import main
    port = free_port()
    proxy = start_proxy(tmp_path / "sw", port)
    try:
        record = json.loads((tmp_path / "sw" / "control" / "serve.json").read_text())
        assert record["url"] == f"grpc://127.0.0.1:{port}" and record["pid"] == proxy.pid
        assert main(["sweep", "serve", str(tmp_path / "sw"), "--host", "127.0.0.1"]) == 2
        assert "another `sweep serve` is serving this folder" in capsys.readouterr().err
    finally:
        stop_proxy(proxy)


@pytest.mark.slow
def test_sweep_through_the_proxy_stops_when_it_stays_away_and_finishes_when_it_is_back(tmp_path, base_file,
                                                                                      write_spec):
    base = json.loads(base_file.read_text())
    base["opts"]["model_param"]["contract_epoch_seconds"] = 0.4     # trials long enough to be caught running
    base_file.write_text(json.dumps(base))
    spec = write_spec({"name": "random", "max_trials": 2, "seed": 0},
                      {"model_param.base_learning_rate": {"type": "log", "minval": -3, "maxval": 0},
                       "epoch_iter.num_epochs": 3})
    folder, port = tmp_path / "sw", free_port()
    url = f"grpc://127.0.0.1:{port}"
    proxy = start_proxy(folder, port)
    env = {**os.environ, "PLAYGROUND_STORAGE_RETRY_S": "2", "PLAYGROUND_STORAGE_CALL_S": "1"}
    command = [sys.executable, "-m", "playground", "sweep", "run", str(spec), "--sweep-dir", str(folder),
               "--workers", "1"]
    sweep = subprocess.Popen(command + ["--storage", url], cwd=REPO, env=env, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.time() + HANG
        while not (folder / "trials" / "t0000" / "metrics.jsonl").exists():
            assert sweep.poll() is None and time.time() < deadline
            time.sleep(0.05)
        stop_proxy(proxy)
        _, err = sweep.communicate(timeout=HANG)
        assert sweep.returncode == 75, err
        assert f"[storage] {url} unreachable" in err and "sweep stopped: storage" in err
        assert "Traceback" not in err
        proxy = start_proxy(folder, port)
        again = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=HANG)
        assert again.returncode == 0, again.stderr   # no --storage: sweep.json recorded the proxy
    finally:
        if sweep.poll() is None:
            sweep.kill()
        stop_proxy(proxy)
    from playground.sweeps.search.storages import open_journal
    trials = open_journal(str(folder / "study.journal")).get_all_trials(0)
    assert sorted(t.number for t in trials) == [0, 1] and all(t.state.name == "COMPLETE" for t in trials)
    attempts = (folder / "trials" / "t0000" / "attempts.jsonl").read_text().splitlines()
    assert len([a for a in attempts if '"start"' in a and '"end"' not in a]) == 2, "t0000 resumed its own folder"

"""Determined's launch layer: an entrypoint is started once per node, and a script that starts its workers
itself (Determined's Core API distributed tutorial does, through `determined.launch.wrap_rank`) gets one worker
per slot, never one set per slot; `determined.launch.torch_distributed` run by such a script starts one worker
per slot; a `single` searcher draws its sampled hyperparameters once, as Determined's. Real runs of
`playground run EXPERIMENT.yaml` on 2 slots."""
from __future__ import annotations

import textwrap

from tests.conftest import run_cli

OWN_LAUNCHER = '''\
import subprocess, sys
import determined as det

info = det.get_cluster_info()
if sys.argv[1] == "launcher":
    slots, workers = len(info.slot_ids), []
    for local_rank in range(slots):
        rank = info.container_rank * slots + local_rank
        workers.append(subprocess.Popen(["python3", "-m", "determined.launch.wrap_rank", str(rank), "--",
                                         "python3", __file__, "worker", str(rank), str(local_rank)]))
    sys.exit(max(w.wait() for w in workers))
rank, local_rank = int(sys.argv[2]), int(sys.argv[3])
slots = len(info.slot_ids)
distributed = det.core.DistributedContext(rank=rank, size=slots, local_rank=local_rank, local_size=slots,
                                          cross_rank=0, cross_size=1, chief_ip=info.container_addrs[0])
with det.core.init(distributed=distributed) as core_context:
    every = core_context.distributed.allgather(info.trial.hparams["increment_by"] * (rank + 1))
    print(f"worker {rank} of {core_context.distributed.size} saw {every}", flush=True)
'''

TORCH_LAUNCHER = '''\
import os, subprocess, sys
if len(sys.argv) == 1:
    sys.exit(subprocess.call(["python3", "-m", "determined.launch.torch_distributed", "python3", __file__, "w"]))
print(f"torch worker RANK={os.environ['RANK']} WORLD_SIZE={os.environ['WORLD_SIZE']}", flush=True)
'''


def experiment(tmp_path, entrypoint: str, script: str):
    (tmp_path / "script.py").write_text(script)
    path = tmp_path / "exp.yaml"
    path.write_text(textwrap.dedent(f"""\
        name: launch
        entrypoint: {entrypoint}
        resources: {{slots_per_trial: 2}}
        hyperparameters:
          increment_by: {{type: int, minval: 1, maxval: 8}}
        searcher: {{name: single, metric: x}}
        max_restarts: 0
        """))
    return path


def test_a_script_with_its_own_launcher_gets_one_worker_per_slot(tmp_path):
    path = experiment(tmp_path, "python3 script.py launcher", OWN_LAUNCHER)
    done = run_cli("run", str(path), "--run-dir", str(tmp_path / "run"), script="playground")
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    out = done.stdout + done.stderr
    drawn = int(out.split("searcher single draws increment_by=")[1].split()[0])
    assert 1 <= drawn <= 8
    assert out.count("saw [") == 2                                    # two workers, not two per slot
    assert f"[rank=0] worker 0 of 2 saw [{drawn}, {2 * drawn}]" in out
    assert f"[rank=1] worker 1 of 2 saw [{drawn}, {2 * drawn}]" in out


def test_the_torch_distributed_launcher_run_by_a_script_starts_one_worker_per_slot(tmp_path):
    path = experiment(tmp_path, "python3 script.py", TORCH_LAUNCHER)
    done = run_cli("run", str(path), "--run-dir", str(tmp_path / "run"), script="playground")
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    out = done.stdout + done.stderr
    assert out.count("torch worker") == 2
    assert "[rank=0] torch worker RANK=0 WORLD_SIZE=2" in out and "[rank=1] torch worker RANK=1 WORLD_SIZE=2" in out


def test_the_launch_layer_prefix_is_started_once_per_slot(tmp_path, capsys):
    from playground.cli import main
    path = experiment(tmp_path, "python3 -m determined.launch.torch_distributed python3 script.py", TORCH_LAUNCHER)
    assert main(["run", str(path), "--dry-run", "--run-dir", str(tmp_path / "r")]) == 0
    assert "started: once per slot" in capsys.readouterr().out
    path = experiment(tmp_path, "python3 script.py launcher", OWN_LAUNCHER)
    assert main(["run", str(path), "--dry-run", "--run-dir", str(tmp_path / "r")]) == 0
    assert "started: once per node" in capsys.readouterr().out

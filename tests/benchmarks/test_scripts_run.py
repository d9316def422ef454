"""Every benchmark script runs to its summary in a tiny configuration, so none can break unnoticed.

The figures of such a run mean nothing; what is checked is that each script gets through every section and
prints its summary. On a machine without CUDA the GPU sections say they are skipped and why."""
from __future__ import annotations

import os
import sys

import pytest
import torch

from tests import zygote
from tests.conftest import HANG, REPO

CUDA = torch.cuda.is_available()

# script -> (arguments of a run that takes seconds, a line of its summary); {tmp} is the test's own folder
SMOKE = {
    "checkpoint.py": (["--trials", "1", "--checkpoints", "2", "--every", "2", "--arch", "mobilenet_v3_small"],
                      "median stall per checkpoint"),
    "data_pipeline.py": (["--images", "40", "--workers", "1", "--batch", "8", "--passes", "1", "--repeat", "1",
                          "--imsize", "32", "--loadsize", "40", "--data", "{tmp}"], "targets: c/b >= 0.9"),
    "determined_overhead.py": (["--rounds", "1", "--batches", "25", "--batch", "8", "--net", "linear"],
                               "trial / plain:"),
    "fence.py": (["--repeats", "1000", "--epochs", "1"], "a fenced run:"),
    "gpu_train.py": (["--device", "cuda" if CUDA else "cpu", "--images", "16", "--batch", "2", "--steps", "2",
                      "--warmup", "1", "--workers", "1", "--imsize", "64", "--depth", "18", "--data", "{tmp}"],
                     "playground / plain:"),
    "parity.py": (["--trials", "1", "--epochs", "2", "--samples", "128", "--batch", "32", "--workdir", "{tmp}"],
                  "final weights bitwise equal (plain, playground): yes"),
    "scaling.py": (["--trials", "1", "--batch", "8", "--iters", "4"], "2 x cpu"),
    "sweep.py": (["--trials", "3", "--busy", "0.1", "--tells", "5"], "parallel efficiency, 2 workers"),
    "ui.py": (["--trials", "30", "--curve-trials", "5", "--epochs", "4", "--repeat", "1"], "targets (<= 1 s each)"),
}
# a script's other modes, each a tiny run too: (script, arguments, a line of its summary)
MODES = [("sweep.py", ["--scale", "9", "--workers", "2", "--edge", "3"],
          "summary.csv byte for byte as the sweep wrote it: yes"),
         ("sweep.py", ["--start", "--start-trials", "2", "--rounds", "1"], "sweep end to end, fresh / forked:")]
# scripts with a GPU section, and the line that says it was skipped on a machine without CUDA
GPU_SKIPPED = {"data_pipeline.py": "GPU section skipped: no CUDA device", "scaling.py": "GPU runs skipped: no CUDA"}


def scripts() -> list[str]:
    """The runnable scripts in benchmarks/ (the others are their component and override modules)."""
    return sorted(name for name in os.listdir(REPO / "benchmarks") if name.endswith(".py")
                  and 'if __name__ == "__main__":' in (REPO / "benchmarks" / name).read_text())


def test_every_benchmark_script_has_a_tiny_configuration():
    assert scripts() == sorted(SMOKE), "add the new benchmark script's tiny run to SMOKE"


@pytest.mark.slow
@pytest.mark.parametrize("script,arguments,summary",
                         [pytest.param(s, *SMOKE[s], id=s) for s in sorted(SMOKE)]
                         + [pytest.param(*mode, id=f"{mode[0]} {mode[1][0]}") for mode in MODES])
def test_benchmark_script_runs_to_its_summary(script, arguments, summary, tmp_path):
    command = [sys.executable, str(REPO / "benchmarks" / script), *(a.format(tmp=tmp_path) for a in arguments)]
    done = zygote.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=HANG,
                      env=dict(os.environ, BENCH_DIR=str(tmp_path)))
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    assert summary in done.stdout, output
    if not CUDA and script in GPU_SKIPPED:
        assert GPU_SKIPPED[script] in done.stdout, output

"""A test process computes with the threads of the processes it starts (tests/conftest.py), so a reference run
made in the test process and the same run in a child (a killed and resumed run) end with the same bits."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest
import torch

from tests import zygote
from tests.conftest import HANG, REPO


def test_a_test_process_computes_with_the_threads_of_the_processes_it_starts(tmp_path):
    script = tmp_path / "threads.py"
    script.write_text("import torch\nprint(torch.get_num_threads())\n")
    child = zygote.run([sys.executable, str(script)], capture_output=True, text=True, timeout=HANG)
    assert child.returncode == 0, child.stderr
    assert torch.get_num_threads() == int(child.stdout)


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="two workers share a single core as it is")
def test_so_do_two_workers_whose_conftests_import_torch_before_the_suite_shares_the_cores_among_them():
    # tests/playground/conftest.py imports torch; given a path below it, pytest imports it while it starts up,
    # before any hook of tests/conftest.py runs. The run is a session of its own, as `pytest -n 2 PATH` typed.
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_") and k != "OMP_NUM_THREADS"}
    probe = f"{__file__}::test_a_test_process_computes_with_the_threads_of_the_processes_it_starts"
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-n", "2", "-q", probe],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=HANG)
    assert done.returncode == 0 and "1 passed" in done.stdout, done.stdout + done.stderr

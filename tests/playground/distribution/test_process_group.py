"""Joining the process group (playground/distribution/process_group.py): two processes claiming one rank are named at once."""
from __future__ import annotations

import subprocess
import sys
import time

from tests.conftest import HANG, REPO

JOIN = """
import sys
from playground.distribution.process_group import join_group
from playground.distribution.rendezvous import RendezvousError
try:
    join_group(sys.argv[1], "gloo", int(sys.argv[2]), 2, 600.0)
except RendezvousError as err:
    print(err)
    sys.exit(3)
"""


def test_two_processes_claiming_one_rank_both_fail_fast_naming_both(tmp_path):
    url = f"file://{tmp_path / 'store'}"
    started = time.monotonic()
    procs = [subprocess.Popen([sys.executable, "-c", JOIN, url, "0"], cwd=REPO, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True) for _ in range(2)]
    outputs = [p.communicate(timeout=HANG)[0] for p in procs]
    elapsed = time.monotonic() - started
    assert [p.returncode for p in procs] == [3, 3], outputs
    assert elapsed < 600  # they did not wait out the 600 s the ranks were given, however slow the machine
    for output in outputs:
        assert "rank 0 is claimed twice" in output, output
        assert all(f"pid {p.pid}" in output for p in procs), output

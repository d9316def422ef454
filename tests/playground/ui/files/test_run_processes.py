"""A run with a live process here is found from /proc by its command line's --run-dir (the topmost process of the
folder) or, without one, by the train.log it writes; `stop` sends that process SIGTERM."""
from __future__ import annotations

import signal
import subprocess
import sys
import time

import pytest

from playground.ui.files.run_processes import ProcessTable

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="processes are read from Linux's /proc")

# a launcher whose child carries the same --run-dir (as a rank's command line may), both waiting to be stopped
LAUNCHER = """
import signal, subprocess, sys, time
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)", "--run-dir", sys.argv[2]])
signal.signal(signal.SIGTERM, lambda *_: (child.terminate(), child.wait(), sys.exit(75)))
print("ready", flush=True)
time.sleep(300)
"""
# a process that keeps <folder>/train.log open for writing, with no --run-dir
LOGGER = """
import sys, time
log = open(sys.argv[1] + "/train.log", "a")
print("ready", flush=True)
time.sleep(300)
"""


def started(script: str, *args: str) -> subprocess.Popen:
    process = subprocess.Popen([sys.executable, "-c", script, *args], stdout=subprocess.PIPE, text=True)
    assert process.stdout.readline().strip() == "ready"
    return process


def test_the_topmost_process_of_a_run_folder_is_found_and_stopped_by_sigterm(tmp_path):
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    launcher = started(LAUNCHER, "--run-dir", str(run_dir))
    try:
        table = ProcessTable()
        time.sleep(0.2)                                   # the child has started too
        assert table.runs().get(str(run_dir)) == launcher.pid
        assert "SIGTERM" in table.stop(str(run_dir))
        assert launcher.wait(timeout=60) == 75
    finally:
        launcher.kill()
        launcher.stdout.close()


def test_a_run_started_without_run_dir_is_found_by_the_log_it_writes(tmp_path):
    logger = started(LOGGER, str(tmp_path))
    try:
        assert ProcessTable().runs().get(str(tmp_path)) == logger.pid
    finally:
        logger.send_signal(signal.SIGKILL)
        logger.wait()
        logger.stdout.close()
    with pytest.raises(LookupError, match="no process on this host runs"):
        ProcessTable().stop(str(tmp_path))

"""Ending a command's process (playground/launch/process_exit.py, playground/cli.py exit_command): the live
objects are exempt from shutdown's collection, and nothing written to a file is lost, whether the file is
garbage, alive, or alive in a reference cycle that shutdown no longer collects."""
from __future__ import annotations

import subprocess
import sys

from tests.conftest import HANG, REPO

ENDING_COMMAND = '''
import atexit, gc, sys
from playground.cli import exit_command
log = open(sys.argv[1], "w")                 # left open, alive in a cycle at the exit
log.write("written before the exit\\n")
cycle = [log]
cycle.append(cycle)
other = open(sys.argv[2], "w")               # left open in a cycle that is garbage before the exit
other.write("held in a cycle\\n")
garbage = [other]
garbage.append(garbage)
del garbage, other
atexit.register(lambda: print("frozen at exit:", gc.get_freeze_count()))
exit_command(3)
'''


def test_a_command_ends_with_its_code_its_live_objects_frozen_and_its_files_flushed(tmp_path):
    first, second = tmp_path / "first.txt", tmp_path / "second.txt"
    proc = subprocess.run([sys.executable, "-c", ENDING_COMMAND, str(first), str(second)], cwd=REPO,
                          capture_output=True, text=True, timeout=HANG)
    assert proc.returncode == 3, proc.stderr
    assert int(proc.stdout.split("frozen at exit:")[1]) > 1000
    assert first.read_text() == "written before the exit\n"
    assert second.read_text() == "held in a cycle\n"


AFTER_A_FULL_COLLECTION = '''
import atexit, gc, sys
from playground.cli import exit_command

class Noted:
    """Writes its name to the file sys.argv[1] when the collector finalizes it."""
    def __init__(self, name):
        self.name, self.me = name, self
    def __del__(self):
        with open(sys.argv[1], "a") as handle:
            handle.write(self.name + "\\n")

generations = []
gc.callbacks.append(lambda phase, info: phase == "stop" and generations.append(info["generation"]))
old = Noted("old")                     # an old cycle, kept alive through a full collection
gc.collect()
if sys.argv[2] == "busy":              # enough new objects since for the collector to have run again
    kept = [[i] for i in range(100_000)]
del old                                # garbage now, but older than the last full collection
Noted("young")                         # garbage made after it
atexit.register(lambda: print("exit collections:", generations[-1]))
exit_command(0)
'''


def test_after_a_full_collection_the_exit_collects_only_the_young_objects_else_the_whole_heap(tmp_path):
    """The run command's launch() has just collected: the exit does not walk the heap again, but still finalizes
    garbage made since; after more work than the collector's first threshold it collects everything."""
    outcomes = {}
    for case in ("quiet", "busy"):
        noted = tmp_path / f"{case}.txt"
        proc = subprocess.run([sys.executable, "-c", AFTER_A_FULL_COLLECTION, str(noted), case], cwd=REPO,
                              capture_output=True, text=True, timeout=HANG)
        assert proc.returncode == 0, proc.stderr
        outcomes[case] = (int(proc.stdout.split("exit collections:")[1]), sorted(noted.read_text().split()))
    assert outcomes["quiet"] == (0, ["young"])
    assert outcomes["busy"] == (2, ["old", "young"])

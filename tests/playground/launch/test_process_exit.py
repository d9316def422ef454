"""Ending a command's process (playground/launch/process_exit.py, playground/cli.py exit_command): the live
objects are exempt from shutdown's collection, and nothing written to a file is lost, whether the file is
garbage, alive, or alive in a reference cycle that shutdown no longer collects."""
from __future__ import annotations

import subprocess
import sys

from tests.conftest import REPO

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
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 3, proc.stderr
    assert int(proc.stdout.split("frozen at exit:")[1]) > 1000
    assert first.read_text() == "written before the exit\n"
    assert second.read_text() == "held in a cycle\n"

"""processes/held_stop.py: a stop signal that comes while a command starts is kept for the handler installed
later, belongs to the process it came to (not to one forked afterwards), and a command that takes none is
released to the default, dying of a kept signal as it would have. Real signals in real child processes."""
from __future__ import annotations

import signal
import subprocess
import sys

PROGRAM = """
import os, signal, sys
from playground.processes import held_stop
held_stop.hold(interrupt_on_repeat=False)
os.kill(os.getpid(), signal.SIGTERM)
os.kill(os.getpid(), signal.SIGINT)                 # a repeat: ignored, kept is the first
pid = os.fork()
if pid == 0:                                        # a child forked while its parent kept one starts with none
    first = held_stop.take()
    os.kill(os.getpid(), signal.SIGINT)
    second = held_stop.take()
    print("child", first, second[0] if second else None, flush=True)
    os._exit(0)
os.waitpid(pid, 0)
kept = held_stop.take()
print("parent", kept[0], held_stop.take(), flush=True)
held_stop.hold()
os.kill(os.getpid(), signal.SIGTERM)
held_stop.release()                                 # no handler of its own: dies of it now, as it would have
print("still alive", flush=True)
"""


def test_a_kept_signal_is_taken_once_by_its_own_process_and_a_release_dies_of_it():
    done = subprocess.run([sys.executable, "-c", PROGRAM], capture_output=True, text=True, timeout=60)
    assert done.stdout.splitlines() == [f"child None {int(signal.SIGINT)}", f"parent {int(signal.SIGTERM)} None"], \
        done.stdout + done.stderr
    assert done.returncode == -signal.SIGTERM


def test_a_second_signal_after_the_grace_interrupts_a_starting_command():
    program = ("import os, signal, time\nfrom playground.processes import held_stop\nheld_stop.hold()\n"
               "held_stop.REPEAT_GRACE_SECONDS = 0.1\nos.kill(os.getpid(), signal.SIGTERM)\ntime.sleep(0.2)\n"
               "try:\n    os.kill(os.getpid(), signal.SIGTERM)\nexcept KeyboardInterrupt as err:\n    print(err)\n")
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "second signal (SIGTERM) while starting", done.stdout + done.stderr
    assert done.returncode == 0


COMMAND = """
import argparse, os, signal, sys, time, types
from playground import cli
from playground.processes import held_stop
held_stop.hold()
os.kill(os.getpid(), signal.SIGTERM)                # while the command starts
takes = sys.argv[1] == "takes"
command = types.SimpleNamespace(TAKES_STOP_SIGNALS=takes, main=lambda args: print("kept", held_stop.take()[0]))
if not takes:
    command.main = lambda args: time.sleep(60)
sys.exit(cli._run(command, argparse.Namespace(module_map=None)))
"""


def test_a_training_command_finds_the_kept_signal_and_any_other_command_ends_at_it_as_before():
    takes = subprocess.run([sys.executable, "-c", COMMAND, "takes"], capture_output=True, text=True, timeout=60)
    assert (takes.returncode, takes.stdout) == (0, f"kept {int(signal.SIGTERM)}\n"), takes.stderr
    other = subprocess.run([sys.executable, "-c", COMMAND, "other"], capture_output=True, text=True, timeout=30)
    assert other.returncode == -signal.SIGTERM, other.stderr     # at once, not after its 60 s of work

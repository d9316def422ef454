"""The supervisor of child processes (playground/processes/supervisor.py), with real processes: how it names a
child's ending, how it passes a stop on and then kills, and that children die with their parent."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

from playground.processes import supervisor
from tests.conftest import REPO
from tests.playground.processes.children import gone, one_killed_one_deaf


def test_a_command_killed_by_a_signal_is_named_with_the_signal():
    child = supervisor.start_child([sys.executable, "-c", "import os, signal; os.kill(os.getpid(), signal.SIGSEGV)"])
    code = child.wait(timeout=60)
    assert code == -signal.SIGSEGV
    assert supervisor.ending(code) == "killed by SIGSEGV"
    assert supervisor.how_it_ended(code) == "was killed by SIGSEGV"
    assert (supervisor.ending(1), supervisor.how_it_ended(1)) == ("exit 1", "failed (its error is above)")


def test_after_a_rank_is_killed_the_rank_that_hangs_is_stopped_after_the_grace_and_both_are_named():
    started = time.monotonic()
    children = supervisor.start_ranks(one_killed_one_deaf, (), 2)
    exits, stopped = supervisor.wait_for_children(children, grace=1.0)
    assert exits == [(0, -signal.SIGKILL), (1, -signal.SIGKILL)]   # rank 1 ignored SIGTERM: killed after its grace
    assert stopped == {1}
    assert supervisor.how_it_ended(exits[0][1]) == "was killed by SIGKILL"
    assert time.monotonic() - started >= 2.0                        # a grace to end on its own, one after SIGTERM


PARENT = textwrap.dedent("""
    import sys, time
    from playground.processes import supervisor
    child = supervisor.start_child([sys.executable, "-c",
        "import signal, time\\n"
        "signal.signal(signal.SIGTERM, lambda *_: print('child: got SIGTERM', flush=True))\\n"
        "print('child: ready', flush=True)\\n"
        "time.sleep(120)\\n"])
    stops = []
    with supervisor.stop_signals_call(stops.append):
        while not stops:
            time.sleep(0.02)
        started = time.monotonic()
        supervisor.stop([child], grace=1.0)
    print(f"parent: {supervisor.ending(child.returncode)} after {time.monotonic() - started:.1f} s", flush=True)
""")


def test_sigterm_to_the_parent_is_passed_on_and_the_child_is_killed_after_the_grace():
    parent = subprocess.Popen([sys.executable, "-c", PARENT], cwd=REPO, stdout=subprocess.PIPE, text=True)
    try:
        assert parent.stdout.readline() == "child: ready\n"
        parent.send_signal(signal.SIGTERM)
        out, _ = parent.communicate(timeout=60)
    finally:
        parent.kill()
    lines = out.splitlines()
    assert lines[0] == "child: got SIGTERM"                  # passed on, and the child chose to ignore it
    assert lines[1].startswith("parent: killed by SIGKILL after ")
    assert 1.0 <= float(lines[1].split()[-2]) < 10.0
    assert parent.returncode == 0                            # the parent's own SIGTERM did not end it


RANKS_PARENT = textwrap.dedent("""
    import sys, time
    from playground.processes import supervisor
    from tests.playground.processes.children import report_and_sleep
    supervisor.start_ranks(report_and_sleep, (sys.argv[1],), 2)
    time.sleep(120)
""")


def test_spawned_ranks_get_sigterm_when_their_parent_dies(tmp_path):
    parent = subprocess.Popen([sys.executable, "-c", RANKS_PARENT, str(tmp_path)], cwd=REPO)
    try:
        pid_files = [tmp_path / f"rank{i}.pid" for i in range(2)]
        deadline = time.monotonic() + 120
        while not all(p.exists() for p in pid_files) and time.monotonic() < deadline:
            time.sleep(0.1)
        pids = [int(p.read_text()) for p in pid_files]
        os.kill(parent.pid, signal.SIGKILL)
        parent.wait()
        assert all(gone(pid, 30) for pid in pids), "a rank outlived its SIGKILLed parent"
        # SIGTERM, on which a rank checkpoints (torch's own parent-death signal for its ranks is SIGINT)
        assert [(tmp_path / f"rank{i}.signal").read_text() for i in range(2)] == ["SIGTERM", "SIGTERM"]
    finally:
        parent.kill()



# Run by every interpreter started with the test's PYTHONPATH; in the fork server's, as it starts (before its first
# preload), a stop to the whole process group: what a scheduler's SIGTERM does when it comes at that moment.
STOP_AT_SERVER_START = """
import os, signal, sys
if "multiprocessing.forkserver" in " ".join(sys.orig_argv):
    os.killpg(0, signal.SIGTERM)
"""
LAUNCHER = """
from playground.processes import held_stop, supervisor
held_stop.hold()                          # as a training command does from its first line
ranks = supervisor.start_ranks(print, ("a rank ran",), 1)
ranks[0].join(120)
print("rank exit", ranks[0].exitcode, "| launcher kept", held_stop.take()[0])
"""


def test_a_stop_to_the_whole_group_while_the_fork_server_starts_is_held_and_the_ranks_still_start(tmp_path):
    # The server holds stop signals from its first preload (rank_server.py); one that came before, while its
    # interpreter started, killed it, and the launcher failed with a raw EOFError instead of starting its ranks
    # (which then stop at their first boundary, exit 75).
    (tmp_path / "sitecustomize.py").write_text(STOP_AT_SERVER_START)
    done = subprocess.run([sys.executable, "-c", LAUNCHER], cwd=REPO, capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, PYTHONPATH=f"{tmp_path}{os.pathsep}{REPO}"), start_new_session=True)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.splitlines() == ["0 a rank ran", "rank exit 0 | launcher kept 15"], done.stdout

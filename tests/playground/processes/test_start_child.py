"""start_child: a run started by a sweep agent or a supervisor dies with it, keeps its pid, and starts cleanly
from a parent whose threads hold gRPC (a `sweep serve` client), which a fork-with-preexec_fn child did not."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap

import pytest

from playground.processes.supervisor import start_child
from tests.playground.processes.children import gone
from tests.conftest import HANG


def test_the_child_is_the_command_itself_and_gets_sigterm_when_its_parent_is_killed(tmp_path):
    parent = subprocess.Popen([sys.executable, "-c", textwrap.dedent("""
        import subprocess, sys, time
        from playground.processes.supervisor import start_child
        child = start_child([sys.executable, "-c", "import os, time; print(os.getpid(), flush=True); time.sleep(120)"],
                            stdout=subprocess.PIPE)
        reported = child.stdout.readline().decode().strip()
        print(child.pid, reported, flush=True)
        time.sleep(120)
    """)], stdout=subprocess.PIPE)
    try:
        popen_pid, own_pid = map(int, parent.stdout.readline().split())
        assert popen_pid == own_pid          # exec'd in place: signals sent to Popen.pid reach the command
        os.kill(parent.pid, signal.SIGKILL)
        parent.wait()
        assert gone(own_pid, 30), "the child outlived its SIGKILLed parent"
    finally:
        parent.kill()


@pytest.mark.parametrize("env", [None, {"PATH": os.defpath, "LANG": "C"}, {"PATH": os.defpath, "LC_CTYPE": ""}])
def test_the_command_starts_with_the_environment_and_signal_dispositions_popen_gives_it(env):
    """The starting interpreter undoes what it did to itself: Python ignores SIGPIPE and SIGXFSZ, which exec keeps
    (a trial's shell pipeline would get EPIPE errors instead of ending quietly), and under the C locale it sets
    LC_CTYPE=C.UTF-8 in its environment."""
    show = ["sh", "-c", "grep SigIgn /proc/$$/status; env | sort"]
    ours = start_child(show, stdout=subprocess.PIPE, env=env).communicate()[0].decode()
    plain = subprocess.run(show, stdout=subprocess.PIPE, env=env, check=True).stdout.decode()
    assert ours == plain
    assert int(ours.split()[1], 16) & (1 << (signal.SIGPIPE - 1)) == 0


def test_a_command_that_does_not_exist_raises_as_popen_does(tmp_path):
    with pytest.raises(FileNotFoundError):
        start_child([str(tmp_path / "no-such-program")])


def test_children_of_a_process_whose_grpc_threads_are_busy_all_start(tmp_path):
    """Regression: with a preexec_fn, gRPC's fork handlers restarted its poller in the child, which aborted
    (SIGABRT) about one start in four; a trial then counted a restart it never earned."""
    pytest.importorskip("grpc", reason="needs the grpc extra")
    script = textwrap.dedent("""
        import subprocess, sys
        from concurrent import futures
        import grpc
        from playground.processes.supervisor import start_child
        server = grpc.server(futures.ThreadPoolExecutor(2))
        port = server.add_insecure_port("127.0.0.1:0")
        server.start()
        channel = grpc.insecure_channel(f"127.0.0.1:{port}")
        grpc.channel_ready_future(channel).result(timeout=HANG)
        codes = [start_child(["true"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).wait()
                 for _ in range(40)]
        print(codes)
    """).replace("HANG", str(HANG))   # the script's own limit on the channel: the suite's hang guard
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=HANG)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == str([0] * 40), done.stdout

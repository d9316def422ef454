"""The one supervising loop (playground/processes/child_group.py) on real child processes: a child that exits, an
attempt run again, a stop passed on (and a second one that kills), a hung child stopped after the grace, and the
children's output teed here, to a log, and scanned."""
from __future__ import annotations

import re
import signal
import subprocess
import sys
import textwrap
import time

from playground.processes.child_group import ChildGroup
from playground.processes.exit_codes import EXIT_DONE, EXIT_FAILED, EXIT_STOPPED
from tests.conftest import REPO


def _python(code: str) -> list[str]:
    return [sys.executable, "-c", textwrap.dedent(code)]


def test_a_childs_output_is_teed_here_and_to_the_log_and_scanned_and_its_exit_reported(capfd):
    logged: list[str] = []
    group = ChildGroup(scan=re.compile("CUDA out of memory").search)
    child = group.start(_python("""
        import sys
        sys.stdout.write("step 1\\n"); sys.stdout.flush()
        sys.stderr.write("RuntimeError: CUDA out of memory. Tried to allocate\\n"); sys.stderr.flush()
        sys.exit(3)
    """), log=logged.append)
    ending = group.wait()
    assert ending.codes == [3] and ending.exits == [(0, 3)] and ending.stopped == set()
    assert ending.children == [child] and group.children == []
    assert ending.found.group(0) == "CUDA out of memory"
    out, err = capfd.readouterr()
    assert out == "step 1\n"
    assert err == "RuntimeError: CUDA out of memory. Tried to allocate\n"
    assert sorted("".join(logged).splitlines()) == ["RuntimeError: CUDA out of memory. Tried to allocate", "step 1"]


def test_the_scan_finds_a_pattern_that_two_reads_cut_in_two(capfd):
    group = ChildGroup(scan=re.compile("CUDA out of memory").search)
    group.start(_python("""
        import sys, time
        sys.stderr.write("RuntimeError: CUDA out "); sys.stderr.flush(); time.sleep(0.3)
        sys.stderr.write("of memory\\n"); sys.stderr.flush()
    """))
    assert group.wait().found.group(0) == "CUDA out of memory"
    assert capfd.readouterr().err == "RuntimeError: CUDA out of memory\n"


def test_several_childrens_lines_come_whole_each_with_its_prefix(capfd):
    logged: list[str] = []
    group = ChildGroup(whole_lines=True)
    for rank in range(2):   # each writes half a line, waits, then ends it: whole lines only, never mixed
        group.start(_python(f"""
            import sys, time
            sys.stdout.write("half of {rank} "); sys.stdout.flush(); time.sleep(0.3)
            sys.stdout.write("and the rest\\nline 2\\n"); sys.stdout.flush()
        """), prefix=f"[rank {rank}] " if rank else "", log=logged.append)
    assert group.wait().codes == [EXIT_DONE, EXIT_DONE]
    expected = ["[rank 1] half of 1 and the rest", "[rank 1] line 2", "half of 0 and the rest", "line 2"]
    assert sorted(capfd.readouterr().out.splitlines()) == expected
    assert sorted("".join(logged).splitlines()) == expected
    group.start(_python("import sys; sys.stdout.write('a\\nlast line, no newline')"), prefix="[rank 1] ")
    group.wait()
    assert capfd.readouterr().out == "[rank 1] a\n[rank 1] last line, no newline"


def test_an_attempt_is_run_again_while_the_caller_says_so():
    pids, codes = [], []

    def attempt(group: ChildGroup) -> int | None:
        child = group.start(_python(f"import sys; sys.exit({EXIT_FAILED if not pids else EXIT_DONE})"))
        pids.append(child.pid)
        codes.append(group.wait().codes[0])
        return None if codes[-1] != EXIT_DONE else len(codes)    # None: run it again

    assert ChildGroup().run(attempt) == 2
    assert codes == [EXIT_FAILED, EXIT_DONE] and pids[0] != pids[1]


def test_after_a_child_fails_the_one_that_hangs_is_stopped_after_the_grace():
    group = ChildGroup(grace=0.5)
    started = time.monotonic()
    group.start(_python("import sys, time; time.sleep(0.2); sys.exit(1)"))
    group.start(_python("import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(120)"))
    ending = group.wait()
    assert ending.exits == [(0, EXIT_FAILED), (1, -signal.SIGKILL)]   # it ignored SIGTERM: killed after a grace
    assert ending.stopped == {1}
    assert 1.0 <= time.monotonic() - started < 30


PARENT = textwrap.dedent("""
    import sys
    from playground.processes.child_group import ChildGroup
    CHILD = '''
    import signal, sys, time
    def on_term(*_):
        print("child: got SIGTERM", flush=True)
        if sys.argv[1] == "checkpoints":
            sys.exit(75)
    signal.signal(signal.SIGTERM, on_term)
    print("child: ready", flush=True)
    while True:
        time.sleep(1)
    '''
    def attempt(group):
        group.start([sys.executable, "-c", CHILD, sys.argv[1]])
        ending = group.wait()
        print(f"parent: {group.stops} stop(s), the child's code {ending.codes[0]}", flush=True)
        return 0
    sys.exit(ChildGroup(kill_on_second_stop=True).run(attempt))
""")


def _parent(child: str) -> subprocess.Popen:
    parent = subprocess.Popen([sys.executable, "-c", PARENT, child], cwd=REPO, stdout=subprocess.PIPE, text=True)
    assert parent.stdout.readline() == "child: ready\n"     # teed through the parent: its handler is in place
    return parent


def test_sigterm_to_the_parent_is_passed_on_and_the_child_checkpoints_and_exits_75():
    parent = _parent("checkpoints")
    try:
        parent.send_signal(signal.SIGTERM)
        out, _ = parent.communicate(timeout=60)
    finally:
        parent.kill()
    assert out.splitlines() == ["child: got SIGTERM", f"parent: 1 stop(s), the child's code {EXIT_STOPPED}"]
    assert parent.returncode == 0


def test_a_second_stop_kills_a_child_that_did_not_end_on_the_first():
    parent = _parent("ignores")
    try:
        parent.send_signal(signal.SIGINT)
        assert parent.stdout.readline() == "child: got SIGTERM\n"   # SIGINT here is SIGTERM to the child
        parent.send_signal(signal.SIGTERM)
        out, _ = parent.communicate(timeout=60)
    finally:
        parent.kill()
    assert out.splitlines() == [f"parent: 2 stop(s), the child's code {-signal.SIGKILL}"]
    assert parent.returncode == 0

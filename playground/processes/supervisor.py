"""The one supervisor of the child processes the product starts: the ranks of a run (launch/spawn.py), the
attempts of a restarted run (restarts/supervisor.py) and the trials of a sweep (sweeps/agent.py).

- start: `start_child` runs a command (subprocess.Popen, exec'd in place by die_with_parent.py);
  `start_ranks` runs a function in processes forked from a fork server that has imported torch once. Either way the child
  gets SIGTERM when this process dies (PR_SET_PDEATHSIG), so a killed parent leaves no child behind. The
  other children of the product start here too: `worker_pool` (make-lmdb's decoders), `run_tool` (sbatch), and
  the forks of a command server (`fork_here`: command_server.py, whose commands command_servers.py starts and
  forked_process.py follows).
- forward: `stop_signals_call` turns SIGTERM/SIGINT to this process into a call, which passes a SIGTERM on
  (`signal_child`); a run checkpoints on it and exits 75. `ignore_stop_signals` is for a child that must leave
  the stop to its parent (a finished rank, a data loader worker).
- grace then kill: `stop` (SIGTERM, GRACE_SECONDS, SIGKILL); `kill` at once; `wait_for_children` waits for a
  group and stops the rest a grace after the first failure.
- read the exit and name the culprit: `ending` ("exit 1", "killed by SIGKILL"), `how_it_ended`.

Children are subprocess.Popen, multiprocessing processes or commands forked by a command server (ForkedProcess);
all are read here through their returncode (Popen's convention: -N when signal N killed it). Nothing here imports
torch at module level: the sweep layer, which never imports torch, uses this module.
"""
from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from multiprocessing.process import BaseProcess
from typing import Any, Callable, Iterable, Iterator, Union

from playground.processes import die_with_parent as _wrapper
from playground.processes import held_stop
from playground.processes.exit_codes import EXIT_DONE, EXIT_FAILED
from playground.processes.forked_process import ForkedProcess

GRACE_SECONDS = 5.0
STOP_SIGNALS = held_stop.STOP_SIGNALS
Child = Union[subprocess.Popen, BaseProcess, ForkedProcess]
_READ_LIKE_POPEN = (subprocess.Popen, ForkedProcess)


def start_child(command: list[str], holds_stop: bool = False, **popen: Any) -> subprocess.Popen:
    """Popen(command, **popen) whose process gets SIGTERM when this one dies, with the command's own pid;
    FileNotFoundError as Popen's when command[0] cannot be found. holds_stop: the command is a playground entry
    point, which holds stop signals from its first line (held_stop.hold): it starts with them blocked (a mask
    survives exec), so a SIGTERM passed on or sent to the whole group while its interpreter starts waits for that
    line instead of killing it (exit 143, no checkpoint)."""
    env = popen.get("env")
    environ = os.environ if env is None else env
    if shutil.which(command[0], path=environ.get("PATH", os.defpath)) is None:
        raise FileNotFoundError(2, "No such file or directory", command[0])
    lc_ctype = "=" + environ["LC_CTYPE"] if "LC_CTYPE" in environ else ""
    with _stop_signals_blocked() if holds_stop else contextlib.nullcontext():
        return subprocess.Popen([sys.executable, "-I", "-S", _wrapper.__file__, str(os.getpid()), lc_ctype,
                                 *command], **popen)


@contextlib.contextmanager
def _stop_signals_blocked() -> Iterator[None]:
    """SIGTERM/SIGINT blocked in this thread meanwhile: a process started now inherits the mask through exec and
    gets a stop that comes while it starts once held_stop.hold() unblocks them; here they come after."""
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)


# What the fork server that the ranks are forked from imports first: what makes it one, and torch, which every
# rank imports (once there instead of once per rank). The caller adds what its ranks import anyway.
SERVER_PRELOAD = ["playground.processes.rank_server", "torch"]


def start_ranks(entry: Callable[..., None], args: tuple, count: int, preload: Iterable[str] = ()) -> list[BaseProcess]:
    """`count` processes forked from a fork server (multiprocessing's forkserver: a fresh interpreter started
    by this process that has imported SERVER_PRELOAD, then `preload`, and nothing else, no threads, no CUDA),
    each calling entry(index, *args) once it will die with this process. A rank gets this process's environment
    and working folder as they are now (the server's are those of its start). `entry` and `args` must pickle.
    The first call in a process decides the preload, as its server is started once."""
    from torch.multiprocessing import start_processes
    _ensure_fork_server([*SERVER_PRELOAD, *preload])
    context = start_processes(_rank_main, args=(os.getpid(), dict(os.environ), os.getcwd(), entry, args),
                              nprocs=count, join=False, start_method="forkserver")
    return list(context.processes)


def _ensure_fork_server(preload: list[str]) -> None:
    """Start the fork server once per process, told that it is one (rank_server.py: it then holds SIGTERM)."""
    import multiprocessing
    from multiprocessing import forkserver, resource_tracker
    from playground.processes.rank_server import SERVER_ENV
    multiprocessing.get_context("forkserver").set_forkserver_preload(preload)
    os.environ[SERVER_ENV] = str(os.getpid())
    # The server's interpreter starts with the stop signals blocked (a mask survives exec), until rank_server
    # holds them: a stop sent to the whole group in between waits instead of killing the server. The resource
    # tracker is started first: starting it unblocks exactly these signals afterwards.
    resource_tracker.ensure_running()
    try:
        with _stop_signals_blocked():
            forkserver.ensure_running()
    finally:
        del os.environ[SERVER_ENV]


def _rank_main(index: int, launcher_pid: int, environ: dict[str, str], cwd: str, entry: Callable[..., None],
               args: tuple) -> None:
    held_stop.hold()   # as a rank now: a stop kept since the fork (rank_server.py) stays for its stop handler
    # The rank's parent is the fork server: SIGTERM when it dies, and when the launcher does (watched).
    _wrapper.die_with_parent(os.getppid())
    _wrapper.watch_launcher(launcher_pid)
    os.environ.clear()
    os.environ.update(environ)
    os.chdir(cwd)
    entry(index, *args)


def fork_here(parent_death: int | None = None) -> int:
    """os.fork() for a fork server (command_server.py): 0 in the child, which gets `parent_death` when this process
    ends (None: no signal), the child's pid here. Refused (RuntimeError) while another Python thread runs here: the
    child would inherit, held for ever, the locks that thread holds."""
    if threading.active_count() > 1:
        raise RuntimeError(f"fork refused: {threading.active_count()} Python threads run in process {os.getpid()}")
    parent = os.getpid()
    pid = os.fork()
    if pid == 0 and parent_death is not None:
        _wrapper.die_with_parent(parent, parent_death)
    return pid


def worker_pool(count: int, initializer: Callable[[], None] | None = None) -> Any:
    """A multiprocessing Pool of `count` fresh interpreters (start method spawn: no fork of a process that holds
    threads); used as a context manager, which terminates its workers on exit."""
    import multiprocessing
    return multiprocessing.get_context("spawn").Pool(count, initializer=initializer)


def run_tool(command: list[str], timeout: float, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """Run a short external tool (`sbatch`) to its end: no input, its output captured as text; after `timeout`
    seconds it is killed and subprocess.TimeoutExpired raised."""
    return subprocess.run(command, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL,
                          env=env)


@contextlib.contextmanager
def stop_signals_restored() -> Iterator[None]:
    """The SIGTERM and SIGINT handlers as they were on entry are back on exit, whatever was installed inside (an
    in-process caller, such as the API or a test, keeps its own)."""
    previous = {sig: signal.getsignal(sig) for sig in STOP_SIGNALS}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


@contextlib.contextmanager
def stop_signals_call(on_stop: Callable[[int], None]) -> Iterator[None]:
    """While inside, SIGTERM and SIGINT to this process call on_stop(signum) instead of ending it; the previous
    handlers are back afterwards. Main thread only (Python runs signal handlers there)."""
    with stop_signals_restored():
        for sig in STOP_SIGNALS:
            signal.signal(sig, lambda signum, _frame: on_stop(signum))
        pending = held_stop.take()   # one that came while the command started (held_stop.py): acted on now
        if pending is not None:
            on_stop(pending[0])
        yield


def ignore_stop_signals(*_: Any) -> None:
    """This process leaves SIGTERM/SIGINT to its parent, which stops it (any arguments are ignored, so this is
    a DataLoader's worker_init_fn too)."""
    for sig in STOP_SIGNALS:
        signal.signal(sig, signal.SIG_IGN)


def returncode(child: Child) -> int | None:
    """The child's exit code (-N: killed by signal N), None while it runs; reaps it when it has ended."""
    return child.poll() if isinstance(child, _READ_LIKE_POPEN) else child.exitcode


def signal_child(child: Child, sig: int = signal.SIGTERM) -> bool:
    """Send `sig` to the child if it still runs; whether it was sent."""
    if returncode(child) is not None:
        return False
    if isinstance(child, ForkedProcess):
        return child.signal(sig)
    try:
        os.kill(child.pid, sig)
    except ProcessLookupError:
        return False
    return True


def _wait(child: Child, timeout: float | None) -> int | None:
    if isinstance(child, _READ_LIKE_POPEN):
        try:
            return child.wait(timeout)
        except subprocess.TimeoutExpired:
            return None
    child.join(timeout)
    return child.exitcode


def kill(child: Child) -> int:
    """SIGKILL the child if it runs (nothing of it is worth saving) and reap it; its returncode."""
    signal_child(child, signal.SIGKILL)
    code = _wait(child, None)
    assert code is not None
    return code


def stop(children: Iterable[Child], grace: float = GRACE_SECONDS) -> None:
    """SIGTERM to each child still running, then SIGKILL to those still running `grace` seconds later; all
    reaped on return."""
    children = [child for child in children if signal_child(child)]
    deadline = time.monotonic() + grace
    for child in children:
        if _wait(child, max(0.0, deadline - time.monotonic())) is None:
            kill(child)


def wait_for_children(children: list[BaseProcess], grace: float = GRACE_SECONDS,
                      tolerated: Iterable[int] = (EXIT_DONE,)) -> tuple[list[tuple[int, int]], set[int]]:
    """Wait for every child: (index, returncode) in the order they ended, and the indices this call had to stop.
    After the first child to end with a code not in `tolerated`, the others get `grace` seconds to end on
    their own (ranks fail in their next collective), then are stopped (`stop`): one still running then hung."""
    from multiprocessing.connection import wait
    tolerated = set(tolerated)
    running = {child.sentinel: index for index, child in enumerate(children)}
    exits: list[tuple[int, int]] = []
    deadline = None
    while running:
        timeout = None if deadline is None else max(0.0, deadline - time.monotonic())
        for sentinel in wait(list(running), timeout=timeout):
            index = running.pop(sentinel)
            children[index].join()
            exits.append((index, children[index].exitcode))
            if children[index].exitcode not in tolerated and deadline is None:
                deadline = time.monotonic() + grace
        if deadline is not None and time.monotonic() >= deadline and running:
            stop((children[i] for i in running.values()), grace)
            exits += [(index, children[index].exitcode) for index in running.values()]
            return exits, set(running.values())
    return exits, set()


def ending(code: int | None) -> str:
    """A returncode in words: `exit 1`, or the signal that killed the process (`killed by SIGKILL`)."""
    if code is not None and code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit {code}"


def how_it_ended(code: int) -> str:
    """The predicate of a message naming the child that failed: `was killed by SIGKILL`, `failed (its error is
    above)`, `exited with code 3`."""
    if code < 0:
        return f"was killed by {signal.Signals(-code).name}" if -code in signal.valid_signals() else f"died ({code})"
    return "failed (its error is above)" if code == EXIT_FAILED else f"exited with code {code}"

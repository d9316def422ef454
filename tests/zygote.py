"""Test processes started from an interpreter that has imported torch already: the suite's start-up cost.

Most of the suite's CPU was interpreters importing torch (about 2 s each on the 2-core CI machine), one for every
`python AnyExpOnTerm.py ...` a test starts. `start(argv, ...)` gives the same real process, with its own pid,
folder, environment, standard streams, process group and exit status, but forked from a server (one per test
process, started on first use) that imported torch once: the command then runs in the child exactly as
`python SCRIPT ARGS` or `python -m MODULE ARGS` would run it (runpy, `__main__`, sys.argv, sys.path from
PYTHONPATH, stdio buffering from PYTHONUNBUFFERED, atexit, the exit code or the killing signal). Only torch (and
what it imports: numpy) is shared; playground and everything else is imported in the child, as in a fresh one.

A launch whose environment differs in a variable read when torch or the interpreter starts (TORCH*, OMP_*,
CUDA*, LD_*, PYTHON* other than PYTHONPATH and PYTHONUNBUFFERED, ...) is forked from a server started with that
environment (the last SERVERS_KEPT are kept). A fresh interpreter is used instead (`subprocess.Popen`) for a
launch that passes interpreter options (`-X importtime`) or a `preexec_fn`, and everywhere when
PLAYGROUND_TEST_ZYGOTE=0. The server forks a waiter
per launch, which forks the command and reports its pid and then its status; the server itself never waits
and holds no thread of its own.
"""
from __future__ import annotations

import atexit
import json
import os
import select
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

# variables read when the interpreter or torch starts: a launch that changes one gets a server started with it
STARTUP_PREFIXES = ("TORCH", "PYTORCH", "OMP_", "MKL_", "KMP_", "GOMP_", "OPENBLAS", "CUDA", "NCCL", "NVIDIA",
                    "LD_", "MALLOC", "PYTHON")
PER_LAUNCH = {"PYTHONPATH", "PYTHONUNBUFFERED"}   # applied in the child as a fresh interpreter applies them
SERVERS_KEPT = 3       # servers for distinct startup environments, the least recently used stopped beyond that
_lock = threading.Lock()
_servers: "dict[tuple, _Server]" = {}


def enabled() -> bool:
    return os.environ.get("PLAYGROUND_TEST_ZYGOTE", "1") != "0"


def start(argv: list[str], *, env: dict | None = None, cwd=None, stdin=None, stdout=None, stderr=None,
          start_new_session: bool = False, preexec_fn=None, text: bool = False):
    """Like subprocess.Popen(argv, ...) for `[sys.executable, SCRIPT, ...]` or `[sys.executable, "-m", MODULE,
    ...]`; stdin/stdout/stderr: None (this process's), subprocess.PIPE, subprocess.DEVNULL, subprocess.STDOUT
    (stderr only), a file object or a descriptor. Returns a Popen or a ZygoteProcess (the same surface)."""
    env = dict(os.environ if env is None else env)
    server = _the_server(env) if _forkable(argv, preexec_fn) else None
    if server is None:
        return subprocess.Popen(argv, env=env, cwd=cwd, stdin=stdin, stdout=stdout, stderr=stderr, text=text,
                                start_new_session=start_new_session, preexec_fn=preexec_fn)
    return ZygoteProcess(server, argv, env, cwd, stdin, stdout, stderr, start_new_session, text)


def run(argv: list[str], *, env: dict | None = None, cwd=None, timeout: float | None = None,
        capture_output: bool = False, text: bool = False) -> subprocess.CompletedProcess:
    """Like subprocess.run for the same commands as start()."""
    pipe = subprocess.PIPE if capture_output else None
    process = start(argv, env=env, cwd=cwd, stdout=pipe, stderr=pipe, text=text)
    try:
        out, err = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()
        raise
    return subprocess.CompletedProcess(argv, process.returncode, out, err)


def _forkable(argv: list[str], preexec_fn) -> bool:
    if not enabled() or preexec_fn is not None or len(argv) < 2 or argv[0] != sys.executable:
        return False
    # interpreter options (-X, -c, -u, ...): a fresh interpreter
    return not argv[1].startswith("-") or (argv[1] == "-m" and len(argv) > 2)


def _startup(env: dict) -> tuple:
    """The variables of `env` read when the interpreter or torch starts: a server is started with them."""
    return tuple(sorted((k, v) for k, v in env.items() if k.startswith(STARTUP_PREFIXES) and k not in PER_LAUNCH))


class _Server:
    def __init__(self, env: dict) -> None:
        self.folder = tempfile.mkdtemp(prefix="playground-zygote-")
        self.path = os.path.join(self.folder, "socket")
        env = {k: v for k, v in env.items() if k not in PER_LAUNCH}
        self.process = subprocess.Popen([sys.executable, __file__, self.path], env=env,
                                        stdin=subprocess.PIPE, stdout=subprocess.DEVNULL)
        deadline = time.monotonic() + 300
        while not os.path.exists(self.path + ".ready"):
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the test zygote did not start (exit {self.process.poll()})")
            time.sleep(0.01)

    def connect(self) -> socket.socket:
        connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        connection.connect(self.path)
        return connection

    def stop(self) -> None:
        if not os.path.isdir(self.folder):
            return
        try:
            self.process.stdin.close()   # its end of file ends the server
            self.process.wait(timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            self.process.kill()
        for name in ("socket", "socket.ready"):
            try:
                os.unlink(os.path.join(self.folder, name))
            except OSError:
                pass
        os.rmdir(self.folder)


def _the_server(env: dict) -> _Server | None:
    """The server started with `env`'s startup variables (started now if there is none, or it died)."""
    key = _startup(env)
    with _lock:
        server = _servers.pop(key, None)
        if server is None or server.process.poll() is not None:
            try:
                server = _Server(env)
            except (OSError, RuntimeError):
                return None
            atexit.register(server.stop)
        _servers[key] = server          # the most recently used last
        while len(_servers) > SERVERS_KEPT:
            _servers.pop(next(iter(_servers))).stop()
        return server


class ZygoteProcess:
    """A command forked from the server: the parts of subprocess.Popen that tests use."""

    def __init__(self, server: _Server, argv, env, cwd, stdin, stdout, stderr, start_new_session, text) -> None:
        self.args = argv
        self.returncode: int | None = None
        self.stdin = self.stdout = self.stderr = None
        mine, theirs = [], []   # descriptors to close here after the send, pipes' ends to read

        def descriptor(spec, index: int, mode: str):
            if spec is None:
                return index
            if spec == subprocess.DEVNULL:
                fd = os.open(os.devnull, os.O_RDWR)
                mine.append(fd)
                return fd
            if spec == subprocess.PIPE:
                read, write = os.pipe()
                keep, give = (write, read) if mode == "w" else (read, write)
                mine.append(give)
                theirs.append((index, os.fdopen(keep, mode + ("" if text else "b"))))
                return give
            if spec == subprocess.STDOUT:
                return None
            return spec if isinstance(spec, int) else spec.fileno()

        fds = [descriptor(stdin, 0, "w"), descriptor(stdout, 1, "r"), descriptor(stderr, 2, "r")]
        if fds[2] is None:
            fds[2] = fds[1]
        for index, handle in theirs:
            setattr(self, ("stdin", "stdout", "stderr")[index], handle)
        self._connection = server.connect()
        request = {"argv": argv[1:], "env": env, "cwd": os.fspath(cwd) if cwd is not None else os.getcwd(),
                   "new_session": start_new_session}
        socket.send_fds(self._connection, [json.dumps(request).encode() + b"\n"], fds)
        for fd in mine:
            os.close(fd)
        self._buffer = b""
        self.pid = int(json.loads(self._line(None))["pid"])

    def _line(self, timeout: float | None) -> bytes | None:
        """The server's next line; None when none came within `timeout`; b"" when it hung up."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while b"\n" not in self._buffer:
            wait = None if deadline is None else max(0.0, deadline - time.monotonic())
            if not select.select([self._connection], [], [], wait)[0]:
                return None
            chunk = self._connection.recv(4096)
            if not chunk:
                return b""
            self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        return line

    def poll(self) -> int | None:
        if self.returncode is None:
            line = self._line(0)
            if line is not None:
                self._ended(line)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if self.returncode is None:
            line = self._line(timeout)
            if line is None:
                raise subprocess.TimeoutExpired(self.args, timeout)
            self._ended(line)
        return self.returncode

    def _ended(self, line: bytes) -> None:
        if not line:
            raise RuntimeError(f"the test zygote lost process {self.pid}")
        self.returncode = int(json.loads(line)["returncode"])
        self._connection.close()

    def communicate(self, input=None, timeout: float | None = None):
        if input is not None or self.stdin is not None:
            raise NotImplementedError("input to a zygote process")
        readers, results = [], {}
        for name in ("stdout", "stderr"):
            handle = getattr(self, name)
            if handle is not None:
                thread = threading.Thread(target=lambda n=name, h=handle: results.__setitem__(n, h.read()),
                                          daemon=True)
                thread.start()
                readers.append(thread)
        deadline = None if timeout is None else time.monotonic() + timeout
        for thread in readers:
            thread.join(None if deadline is None else max(0.0, deadline - time.monotonic()))
            if thread.is_alive():
                raise subprocess.TimeoutExpired(self.args, timeout)
        self.wait(None if deadline is None else max(0.0, deadline - time.monotonic()))
        for name in ("stdout", "stderr"):
            if getattr(self, name) is not None:
                getattr(self, name).close()
        return results.get("stdout"), results.get("stderr")

    def send_signal(self, sig: int) -> None:
        if self.returncode is None:
            try:
                os.kill(self.pid, sig)
            except ProcessLookupError:
                pass

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    def __enter__(self):
        return self

    def __exit__(self, *_exc) -> None:
        for name in ("stdout", "stderr", "stdin"):
            if getattr(self, name) is not None:
                getattr(self, name).close()
        self.wait()


# ---- the server (this file run as a script) ----

def _serve(path: str) -> None:
    import selectors

    import torch  # the point of the server
    del torch
    base_path = [entry for entry in sys.path[1:]]   # a fresh interpreter's path after its script's folder
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)   # waiters are reaped by the kernel
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(64)
    open(path + ".ready", "w").close()
    selector = selectors.DefaultSelector()
    selector.register(listener, selectors.EVENT_READ)
    selector.register(sys.stdin, selectors.EVENT_READ)
    while True:
        for key, _ in selector.select():
            if key.fileobj is not listener:
                return   # the test process closed our stdin, or died
            connection, _ = listener.accept()
            message, fds, _, _ = socket.recv_fds(connection, 1 << 20, 3)
            while not message.endswith(b"\n"):
                message += connection.recv(1 << 20)
            if os.fork() == 0:
                selector.close()
                listener.close()
                _waiter(connection, json.loads(message), fds, base_path)
            connection.close()
            for fd in fds:
                os.close(fd)


def _waiter(connection: socket.socket, request: dict, fds: list[int], base_path: list[str]) -> None:
    """In the forked waiter: fork the command, report its pid, wait, report its status."""
    try:
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        os.close(0)
        pid = os.fork()
        if pid == 0:
            connection.close()
            _command(request, fds, base_path)
        for fd in fds:
            os.close(fd)
        connection.sendall(json.dumps({"pid": pid}).encode() + b"\n")
        _, status = os.waitpid(pid, 0)
        code = os.waitstatus_to_exitcode(status)
        connection.sendall(json.dumps({"returncode": code}).encode() + b"\n")
    finally:
        os._exit(0)


def _command(request: dict, fds: list[int], base_path: list[str]) -> None:
    """In the forked command: become `python ARGV` as a fresh interpreter would, run it, exit as it would."""
    import io
    import runpy
    code = 1
    try:
        if request["new_session"]:
            os.setsid()
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
        for fd in set(fds):
            if fd > 2:
                os.close(fd)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        unbuffered = bool(os.environ.get("PYTHONUNBUFFERED"))
        sys.stdin = sys.__stdin__ = io.TextIOWrapper(io.open(0, "rb", closefd=False), encoding="utf-8")
        sys.stdout = sys.__stdout__ = io.TextIOWrapper(
            io.open(1, "wb", buffering=0 if unbuffered else -1, closefd=False), encoding="utf-8",
            line_buffering=os.isatty(1), write_through=unbuffered)
        sys.stderr = sys.__stderr__ = io.TextIOWrapper(
            io.open(2, "wb", buffering=0 if unbuffered else -1, closefd=False), encoding="utf-8",
            errors="backslashreplace", line_buffering=True, write_through=unbuffered)
        argv = request["argv"]
        extra = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
        try:
            if argv[0] == "-m":
                sys.argv = [argv[1], *argv[2:]]
                sys.path[:] = [os.getcwd(), *extra, *base_path]
                runpy._run_module_as_main(argv[1], alter_argv=True)
            else:
                sys.argv = list(argv)
                sys.path[:] = [os.path.dirname(os.path.abspath(argv[0])), *extra, *base_path]
                runpy.run_path(argv[0], run_name="__main__")
            code = 0
        except SystemExit as done:
            code = _exit_code(done.code)
        except KeyboardInterrupt:
            code = 130
            _finish()
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            os.kill(os.getpid(), signal.SIGINT)
        except BaseException:
            import traceback
            traceback.print_exc()
            code = 1
        _finish()
    finally:
        os._exit(code)


def _exit_code(value) -> int:
    if value is None:
        return 0
    if isinstance(value, int):
        return value & 0xFF
    print(value, file=sys.stderr)
    return 1


def _finish() -> None:
    """What the interpreter does at its end: wait for non-daemon threads, run atexit, flush the streams."""
    try:
        threading._shutdown()
    except BaseException:
        pass
    try:
        atexit._run_exitfuncs()
    except BaseException:
        pass
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BaseException:
            pass


if __name__ == "__main__":
    _serve(sys.argv[1])

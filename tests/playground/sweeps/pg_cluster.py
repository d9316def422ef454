"""A throwaway PostgreSQL cluster for tests and benchmarks: initdb into a temporary folder, started by pg_ctl on a
free port of 127.0.0.1 with its unix socket in that folder, stopped and removed afterwards. As root it runs as the
`postgres` user (the server refuses root). Tuned for speed, not durability (fsync off): never for real data.
"""
from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from tests.conftest import HANG

SERVER_SETTINGS = ("-c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=60 "
                   "-c shared_buffers=16MB")


def server_binaries() -> str | None:
    """The folder holding initdb and pg_ctl: on PATH, else the newest /usr/lib/postgresql/*/bin."""
    initdb = shutil.which("initdb")
    if initdb and shutil.which("pg_ctl"):
        return os.path.dirname(initdb)
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"),
                   key=lambda p: int(p.split("/")[-3]) if p.split("/")[-3].isdigit() else 0)
    return os.path.dirname(found[-1]) if found else None


def skip_reason() -> str | None:
    if server_binaries() is None:
        return ("no PostgreSQL server binaries (initdb, pg_ctl) on PATH or in /usr/lib/postgresql/*/bin: "
                "install Debian's postgresql package (.ci/run does)")
    if os.geteuid() == 0:
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            return "running as root without a `postgres` user to run the server as"
    return None


class Cluster:
    """`with Cluster() as url:` a postgresql:// URL of a fresh, empty, running server."""

    def __init__(self) -> None:
        self.bin = server_binaries()
        self.folder = tempfile.mkdtemp(prefix="playground-pg-")
        self.data = os.path.join(self.folder, "data")
        self.port = free_port()
        self.user = "postgres" if os.geteuid() == 0 else pwd.getpwuid(os.geteuid()).pw_name

    @property
    def url(self) -> str:
        return f"postgresql://{self.user}@127.0.0.1:{self.port}/postgres"

    def _run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        command = [os.path.join(self.bin, args[0]), *args[1:]]
        if os.geteuid() == 0:
            command = ["runuser", "-u", "postgres", "--", *command]
        return subprocess.run(command, capture_output=True, text=True, check=check, timeout=HANG)

    def start(self) -> str:
        if os.geteuid() == 0:
            entry = pwd.getpwnam("postgres")
            os.chown(self.folder, entry.pw_uid, entry.pw_gid)
        self._run("initdb", "-D", self.data, "-A", "trust", "-U", self.user, "--no-sync", "-E", "UTF8")
        self.pg_ctl("start")
        return self.url

    def pg_ctl(self, action: str) -> None:
        """start, stop (fast: clients are cut off) or restart the server."""
        options = f"-p {self.port} -k {self.folder} -h 127.0.0.1 {SERVER_SETTINGS}"
        args = ["pg_ctl", "-D", self.data, "-w", "-t", "60", "-l", os.path.join(self.folder, "server.log")]
        if action in ("start", "restart"):
            args += ["-o", options]
        if action in ("stop", "restart"):
            args += ["-m", "fast"]
        self._run(*args, action)

    def stop(self) -> None:
        if os.path.isdir(self.data):
            self._run("pg_ctl", "-D", self.data, "-w", "-m", "immediate", "stop", check=False)
        shutil.rmtree(self.folder, ignore_errors=True)

    def __enter__(self) -> str:
        try:
            return self.start()
        except BaseException:
            self.stop()
            raise

    def __exit__(self, *exc: object) -> None:
        self.stop()


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]

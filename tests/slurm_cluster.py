"""A throwaway Slurm cluster on this host for tests: munged, slurmctld and two slurmd, all in one temporary folder.

Debian's `slurm-wlm` (22.05) and `munge` (installed by .ci/run). Everything lives under the folder: the munge key
and socket, slurm.conf and cgroup.conf, state, spools, logs and pid files; the ports are free ones, so a Slurm of
the machine (or another test session's) is untouched. Clients find the cluster through `SLURM_CONF`
(`cluster.env`), which jobs inherit (sbatch's default --export=ALL). The two nodes are this host under two names
that both resolve to it (`localhost` and the host name), each slurmd started with `-N name` on its own port, so
the first node of a job's node list is an address a rank can reach. Runs as root (slurmd starts jobs as their
users); `skip_reason()` says why it cannot start. `stop()` ends the daemons by their pid files, cancelling jobs
first, and removes the folder and the cgroups slurmd made.
"""
from __future__ import annotations

import glob
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time

from tests.proc_state import alive

CPUS_PER_NODE = 2
DAEMONS = ("munged", "slurmctld", "slurmd", "scontrol", "srun", "sbatch", "squeue", "scancel")
START_TIMEOUT_S = 60
# A job step's credential lives this long (Slurm's default 120 s), and a requeued job waits as long before it may
# start again: slurmd refuses the job id until its revoked credential expires. A test that moved a requeued job's
# StartTime to now instead launched it into that refusal about one time in four (RunTime 0, JobLaunchFailure).
CRED_EXPIRE_S = 15


def _binary(name: str) -> str | None:
    return shutil.which(name) or next((p for p in (f"/usr/sbin/{name}", f"/usr/bin/{name}") if os.access(p, os.X_OK)),
                                      None)


def skip_reason() -> str | None:
    missing = [name for name in DAEMONS if _binary(name) is None]
    if missing:
        return (f"no {', '.join(missing)}: install Debian's slurm-wlm and munge packages (.ci/run does when it may "
                "use apt-get)")
    if os.geteuid() != 0:
        return "the Slurm daemons need root (slurmd starts jobs as their users); run the tests as root"
    return None


class SlurmCluster:
    """`cluster.start()` brings the daemons up (raises with their logs when they do not come up); `cluster.env`
    is the environment for sbatch, srun, scontrol; `cluster.stop()` ends them and removes the folder."""

    def __init__(self) -> None:
        self.folder = tempfile.mkdtemp(prefix="playground-slurm-")
        os.chmod(self.folder, 0o755)   # job steps run as root too, but slurmstepd checks the spool's path
        self.conf = os.path.join(self.folder, "slurm.conf")
        self.munge_socket = os.path.join(self.folder, "munge", "munge.socket")
        self.nodes = ["n1", "n2"]
        self.names_resolve = False   # whether jobs resolve n1, n2 (to 127.0.0.1): see _slurmd_command
        self.env = dict(os.environ, SLURM_CONF=self.conf)

    def path(self, *parts: str) -> str:
        return os.path.join(self.folder, *parts)

    def start(self) -> None:
        self._start_munged()
        self._write_config(_free_ports(1)[0], _free_port_range(len(self.nodes)))
        self._run([_binary("slurmctld"), "-f", self.conf, "-i"])
        for name in self.nodes:
            os.makedirs(self.path("spool", name), exist_ok=True)
            self._run(self._slurmd_command(name))
        self._wait_idle()

    def _slurmd_command(self, name: str) -> list[str]:
        """slurmd for node `name`, in a mount namespace of its own whose /etc/hosts also maps the node names to
        127.0.0.1: its jobs inherit it, so a rank reaches rank 0 by its node's name, as on a real cluster, and
        this host's /etc/hosts is untouched. Without `unshare` (or the right to mount) the names stay unknown."""
        slurmd = [_binary("slurmd"), "-f", self.conf, "-N", name]
        hosts = self.path("hosts")
        if not os.path.exists(hosts):
            with open("/etc/hosts", encoding="utf-8") as source, open(hosts, "w", encoding="utf-8") as handle:
                handle.write(source.read().rstrip("\n") + f"\n127.0.0.1 {' '.join(self.nodes)}\n")
            probe = subprocess.run([_binary("unshare") or "unshare", "-m", "sh", "-c",
                                    f"mount --bind {hosts} /etc/hosts && getent hosts {self.nodes[0]}"],
                                   capture_output=True, timeout=30)
            self.names_resolve = probe.returncode == 0
        if not self.names_resolve:
            return slurmd
        return ["unshare", "-m", "sh", "-c", f'mount --bind {hosts} /etc/hosts && exec "$@"', "slurmd", *slurmd]

    def _start_munged(self) -> None:
        os.makedirs(self.path("munge"), mode=0o700)
        key = self.path("munge", "munge.key")
        with open(key, "wb") as handle:
            handle.write(os.urandom(128))
        os.chmod(key, 0o400)
        self._run([_binary("munged"), "--force", f"--socket={self.munge_socket}", f"--key-file={key}",
                   f"--pid-file={self.path('munge', 'munged.pid')}", f"--log-file={self.path('munge', 'munged.log')}",
                   f"--seed-file={self.path('munge', 'munged.seed')}"])

    def _write_config(self, controller_port: int, node_ports: list[int]) -> None:
        # one line: slurmd refuses two lines that name one NodeHostname; the ports are a consecutive range
        nodes = [f"NodeName={','.join(self.nodes)} NodeHostname=localhost NodeAddr=127.0.0.1 "
                 f"Port={node_ports[0]}-{node_ports[-1]} CPUs={CPUS_PER_NODE} RealMemory=4000 State=UNKNOWN"]
        freezer = os.path.isdir("/sys/fs/cgroup/freezer")
        lines = [
            "ClusterName=playgroundtest", "SlurmctldHost=localhost", "SlurmUser=root", "SlurmdUser=root",
            "AuthType=auth/munge", "CredType=cred/munge",
            f"AuthInfo=socket={self.munge_socket},cred_expire={CRED_EXPIRE_S}",
            f"SlurmctldPort={controller_port}", f"SlurmdPort={node_ports[0]}",
            f"StateSaveLocation={self.path('state')}", f"SlurmdSpoolDir={self.path('spool', '%n')}",
            f"SlurmctldPidFile={self.path('slurmctld.pid')}", f"SlurmdPidFile={self.path('slurmd-%n.pid')}",
            f"SlurmctldLogFile={self.path('slurmctld.log')}", f"SlurmdLogFile={self.path('slurmd-%n.log')}",
            # cgroup v1's freezer keeps a job's processes together after its batch shell dies
            f"ProctrackType=proctrack/{'cgroup' if freezer else 'linuxproc'}", "TaskPlugin=task/affinity",
            "SelectType=select/cons_tres", "SelectTypeParameters=CR_Core", "JobAcctGatherType=jobacct_gather/none",
            "AccountingStorageType=accounting_storage/none", "SchedulerType=sched/backfill", "MpiDefault=none",
            "ReturnToService=2", "MailProg=/bin/true", "SlurmdParameters=config_overrides", "KillWait=10", "MinJobAge=600",
            *nodes, "PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP", ""]
        os.makedirs(self.path("state"))
        with open(self.conf, "w", encoding="utf-8") as handle:
            handle.write("\n".join(lines))
        with open(self.path("cgroup.conf"), "w", encoding="utf-8") as handle:
            handle.write("CgroupPlugin=cgroup/v1\nCgroupMountpoint=/sys/fs/cgroup\nConstrainCores=no\n"
                         "ConstrainRAMSpace=no\n")

    def _run(self, command: list[str]) -> None:
        done = subprocess.run(command, env=self.env, capture_output=True, text=True, timeout=60,
                              stdin=subprocess.DEVNULL)
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(command)} exited {done.returncode}: {done.stderr.strip()}\n{self.logs()}")

    def _wait_idle(self) -> None:
        deadline = time.monotonic() + START_TIMEOUT_S
        states = ""
        while time.monotonic() < deadline:
            done = subprocess.run([_binary("sinfo"), "-h", "-N", "-o", "%N %T"], env=self.env, capture_output=True,
                                  text=True, timeout=30)
            states = done.stdout.strip()
            lines = states.splitlines()
            if len(lines) == len(self.nodes) and all(line.split()[-1] == "idle" for line in lines):
                return
            time.sleep(0.2)
        raise RuntimeError(f"the Slurm nodes did not become idle within {START_TIMEOUT_S} s: {states!r}\n{self.logs()}")

    def scontrol(self, *args: str) -> str:
        done = subprocess.run([_binary("scontrol"), *args], env=self.env, capture_output=True, text=True, timeout=60)
        if done.returncode != 0:
            raise RuntimeError(f"scontrol {' '.join(args)}: {done.stderr.strip()}")
        return done.stdout

    def job(self, job_id: str) -> dict[str, str]:
        """`scontrol show job` as a dict (JobState, Restarts, ExitCode, ...)."""
        fields: dict[str, str] = {}
        for word in self.scontrol("show", "job", "-o", job_id).split():
            key, _, value = word.partition("=")
            fields.setdefault(key, value)
        return fields

    def _step_daemons(self) -> list[int]:
        """slurmstepd processes of this cluster still there (its environment names our slurm.conf): a requeued
        job's first attempt can leave its step daemons waiting (seen under gVisor) after slurmd is gone."""
        found = []
        for entry in os.listdir("/proc"):
            try:
                with open(f"/proc/{entry}/comm", encoding="utf-8") as handle:
                    if handle.read().strip() != "slurmstepd":
                        continue
                with open(f"/proc/{entry}/environ", "rb") as handle:
                    if f"SLURM_CONF={self.conf}".encode() in handle.read().split(b"\0"):
                        found.append(int(entry))
            except (OSError, ValueError):
                continue
        return found

    def logs(self) -> str:
        parts = []
        for name in sorted(os.listdir(self.folder)) if os.path.isdir(self.folder) else []:
            if name.endswith(".log"):
                with open(self.path(name), encoding="utf-8", errors="replace") as handle:
                    parts.append(f"--- {name} (tail)\n" + "".join(handle.readlines()[-15:]))
        return "\n".join(parts)

    def stop(self) -> None:
        if os.path.exists(self.path("slurmctld.pid")):
            subprocess.run([_binary("scancel"), "--full", "--user=root"], env=self.env, capture_output=True,
                           timeout=30)
        pid_files = [self.path(f"slurmd-{name}.pid") for name in self.nodes] + [self.path("slurmctld.pid")]
        _end_all(pid_files)
        _end_pids(self._step_daemons(), wait_s=2.0)
        _end_all([self.path("munge", "munged.pid")])
        shutil.rmtree(self.folder, ignore_errors=True)
        for name in self.nodes:   # the emptied cgroups slurmd made (rmdir: never one still in use)
            for top in glob.glob(f"/sys/fs/cgroup/*/slurm_{name}"):
                for folder, _, _ in sorted(os.walk(top), key=lambda entry: -entry[0].count("/")):
                    try:
                        os.rmdir(folder)
                    except OSError:
                        pass


def _end_all(pid_files: list[str], wait_s: float = 10.0) -> None:
    """SIGTERM each pid named in `pid_files`, then SIGKILL the ones still there after `wait_s`."""
    pids = []
    for path in pid_files:
        try:
            with open(path, encoding="utf-8") as handle:
                pids.append(int(handle.read().strip()))
        except (OSError, ValueError):
            continue
    _end_pids(pids, wait_s)


def _end_pids(pids: list[int], wait_s: float) -> None:
    for pid in pids:
        _signal(pid, signal.SIGTERM)
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline and any(alive(pid) for pid in pids):
        time.sleep(0.1)
    for pid in pids:
        if alive(pid):
            _signal(pid, signal.SIGKILL)


def _signal(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        pass


def _free_port_range(count: int) -> list[int]:
    """`count` consecutive free ports of 127.0.0.1."""
    for _ in range(100):
        first = _free_ports(1)[0]
        wanted = list(range(first, first + count))
        if wanted[-1] < 65536 and all(_is_free(port) for port in wanted):
            return wanted
    raise RuntimeError(f"found no {count} consecutive free ports")


def _is_free(port: int) -> bool:
    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def _free_ports(count: int) -> list[int]:
    sockets = [socket.socket() for _ in range(count)]
    try:
        for sock in sockets:
            sock.bind(("127.0.0.1", 0))
        return [sock.getsockname()[1] for sock in sockets]
    finally:
        for sock in sockets:
            sock.close()

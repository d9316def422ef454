"""Two "hosts" on this machine for tests: network namespaces joined by a veth pair, each with its own host name.

Host a is 10.251.0.1 and host b 10.251.0.2 on a /30 that exists only inside the two namespaces: a process on one
host reaches the other and its own loopback, nothing else (no route leaves the pair). A command runs on a host
through `ip netns exec` and `unshare -u -m`: its own host name (UTS namespace) and an /etc/hosts, bind-mounted in
its own mount namespace, that names both hosts (this machine's file is untouched). The run folder is shared, as a
network file system would be. Needs root, iproute2 and util-linux; `skip_reason()` says why not. `stop()` deletes
the namespaces (and the veth pair with them) and the folder.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import tempfile

ADDRESSES = {"a": "10.251.0.1", "b": "10.251.0.2"}


def skip_reason() -> str | None:
    missing = [name for name in ("ip", "unshare", "mount", "hostname") if shutil.which(name) is None]
    if missing:
        return f"no {', '.join(missing)} (iproute2, util-linux) to make separate hosts from network namespaces"
    if os.geteuid() != 0:
        return "network namespaces need root; run the tests as root"
    return None


class TwoHosts:
    """`hosts.start()` makes them (raises RuntimeError saying why not); `hosts.command("b", argv)` runs argv on
    host b; `hosts.name("a")` is host a's name, which resolves to its address on both hosts."""

    def __init__(self) -> None:
        tag = f"{os.getpid() % 100000}"
        self.namespaces = {host: f"pg{tag}{host}" for host in ADDRESSES}
        self.links = {host: f"pgv{tag}{host}" for host in ADDRESSES}
        self.folder = tempfile.mkdtemp(prefix="playground-hosts-")
        self.hosts_file = os.path.join(self.folder, "hosts")

    def name(self, host: str) -> str:
        return f"pg-host-{host}"

    def start(self) -> None:
        with open("/etc/hosts", encoding="utf-8") as source, open(self.hosts_file, "w", encoding="utf-8") as out:
            out.write(source.read().rstrip("\n") + "\n")
            out.writelines(f"{address} {self.name(host)}\n" for host, address in ADDRESSES.items())
        for namespace in self.namespaces.values():
            _ip("netns", "add", namespace)
        _ip("link", "add", self.links["a"], "type", "veth", "peer", "name", self.links["b"])
        for host, address in ADDRESSES.items():
            namespace, link = self.namespaces[host], self.links[host]
            _ip("link", "set", link, "netns", namespace)
            _ip("-n", namespace, "addr", "add", f"{address}/30", "dev", link)
            _ip("-n", namespace, "link", "set", link, "up")
            _ip("-n", namespace, "link", "set", "lo", "up")

    def command(self, host: str, argv: list[str]) -> list[str]:
        inside = f'hostname "$0" && mount --bind {self.hosts_file} /etc/hosts && exec "$@"'
        return ["ip", "netns", "exec", self.namespaces[host], "unshare", "-u", "-m", "sh", "-c", inside,
                self.name(host), *argv]

    def stop(self) -> None:
        for namespace in self.namespaces.values():
            subprocess.run(["ip", "netns", "del", namespace], capture_output=True, timeout=30)
        subprocess.run(["ip", "link", "del", self.links["a"]], capture_output=True, timeout=30)  # if never moved
        shutil.rmtree(self.folder, ignore_errors=True)


def _ip(*args: str) -> None:
    done = subprocess.run(["ip", *args], capture_output=True, text=True, timeout=30)
    if done.returncode != 0:
        raise RuntimeError(f"ip {' '.join(args)}: {done.stderr.strip() or done.returncode}")

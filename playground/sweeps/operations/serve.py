"""`playground sweep serve DIR`: the single writer of DIR's journal for agents on other hosts, through Optuna's gRPC
storage proxy. Prints the URL to give agents (`--storage grpc://host:port`) and records it in DIR/control/serve.json;
runs until SIGINT/SIGTERM. One server per folder (an flock on control/serve.lock).

The client side, what agents open for `--storage grpc://...`, is search/_grpc_client.py.
"""
from __future__ import annotations

import fcntl
import os
import signal
import socket
import sys
import time
from typing import Any

from playground.outputs.atomic_files import write_json
from playground.processes.exit_codes import EXIT_DONE
from playground.sweeps.errors import SweepError
from playground.sweeps.files.sweep_folder import SweepFolder


def serve(sweep_dir: str, host: str = "0.0.0.0", port: int = 0) -> int:
    from playground.sweeps.inputs.storage_url import require_extra
    require_extra("grpc", "sweep serve")
    from playground.sweeps.search._optuna_private import grpc_server
    from playground.sweeps.search.study import quiet_optuna
    from playground.sweeps.search.storages import open_journal
    quiet_optuna()
    folder = SweepFolder(sweep_dir)
    os.makedirs(folder.control, exist_ok=True)
    lock = open(os.path.join(folder.control, "serve.lock"), "a+")   # one server per folder
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        lock.close()
        raise SweepError(f"{folder.root}: another `sweep serve` is serving this folder "
                         f"(see {os.path.join(folder.control, 'serve.json')})") from None
    port = port or _free_port(host)
    try:
        server = grpc_server(open_journal(folder.journal, single_writer=True), host, port)
        server.start()
    except RuntimeError as err:  # grpc: the address is taken or not ours
        lock.close()
        raise SweepError(f"sweep serve: cannot listen on {host}:{port}: {err}") from None
    shown_host = socket.getfqdn() if host in ("0.0.0.0", "::", "") else host
    url = f"grpc://{shown_host}:{port}"
    write_json(os.path.join(folder.control, "serve.json"),
               {"url": url, "host": host, "port": port, "pid": os.getpid(), "hostname": socket.gethostname(),
                "journal": folder.journal, "started": time.time()})
    # A plain flag, polled: the handler runs in this thread between two bytecodes, which may be inside a wait
    # on a threading.Event holding its lock (Event.set there deadlocks the server, seen under load)
    stopping: list[int] = []

    def stop(signum: int, _frame: Any) -> None:
        stopping.append(signum)

    # before the URL is printed: whoever read it may stop the server at once
    previous = {s: signal.signal(s, stop) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        print(f"serving {folder.journal} at {url}\n"
              f"agents: playground sweep agent {folder.root} --storage {url}\n"
              f"        playground sweep run SPEC --sweep-dir {folder.root} --storage {url}", flush=True)
        while not stopping:
            time.sleep(0.2)
        # calls in flight finish and get their replies; agents retry the rest against the next server
        server.stop(grace=5).wait()
        print(f"sweep serve {folder.root}: stopped", file=sys.stderr, flush=True)
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
        lock.close()
    return EXIT_DONE


def _free_port(host: str) -> int:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.bind((host if host not in ("0.0.0.0", "") else "", 0))
        return probe.getsockname()[1]

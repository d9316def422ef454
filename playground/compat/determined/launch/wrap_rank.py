"""`python3 -m determined.launch.wrap_rank [--no-redirect-stdio] RANK [--] CMD...`: run CMD, its output lines
prefixed with `[rank=RANK] ` (what Determined's log viewer filters on), stop signals passed on to it; exits
with CMD's exit code. RANK is a number, or names of environment variables tried in order (`RANK`,
`RANK,OMPI_COMM_WORLD_RANK`). `--no-redirect-stdio` is accepted (there is no container log to redirect to)."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from typing import BinaryIO, IO

from playground.processes.exit_codes import EXIT_FAILED, EXIT_USAGE

USAGE = "usage: python3 -m determined.launch.wrap_rank [--no-redirect-stdio] RANK [--] CMD..."


def rank_of(given: str) -> int | None:
    if given.isdigit():
        return int(given)
    for name in given.split(","):
        if name in os.environ:
            return int(os.environ[name])
    return None


def forward(source: BinaryIO, target: IO[bytes], prefix: bytes) -> None:
    """Every line (ended by \\n or \\r) of `source`, prefixed, to `target`."""
    pending = b""
    for chunk in iter(lambda: source.read1(65536), b""):
        pending += chunk.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        *lines, pending = pending.split(b"\n")
        for line in lines:
            target.write(prefix + line + b"\n")
        target.flush()
    if pending:
        target.write(prefix + pending + b"\n")
        target.flush()


def main(argv: list[str]) -> int:
    args = [a for a in argv if a != "--no-redirect-stdio"] if argv[:1] == ["--no-redirect-stdio"] else list(argv)
    if not args:
        print(USAGE, file=sys.stderr)
        return EXIT_USAGE
    rank, command = rank_of(args[0]), args[1:]
    if command[:1] == ["--"]:
        command = command[1:]
    if rank is None or not command:
        print(f"wrap_rank: {'no command' if rank is not None else f'rank {args[0]!r} is no number and names no set variable'}"
              f"\n{USAGE}", file=sys.stderr)
        return EXIT_USAGE if not command else EXIT_FAILED
    from playground.processes import supervisor
    try:
        child = supervisor.start_child(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    except OSError as err:
        print(f"wrap_rank: cannot start {command[0]}: {err.strerror}", file=sys.stderr)
        return EXIT_USAGE
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda s, _frame: child.send_signal(s))
    prefix = f"[rank={rank}] ".encode()
    pumps = [threading.Thread(target=forward, args=(stream, target.buffer, prefix))
             for stream, target in ((child.stdout, sys.stdout), (child.stderr, sys.stderr))]
    for pump in pumps:
        pump.start()
    for pump in pumps:
        pump.join()
    return child.wait()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

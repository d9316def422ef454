"""`playground run ... --max-restarts N`: runs the same command with the same run folder as a child process,
again and again while the restart policy says so, so each retry resumes from the run's last checkpoint.

The child's output goes to this terminal as it comes and is scanned for the log policies (a CUDA out-of-memory
line cancels retries). A SIGTERM/SIGINT here is passed on to the child (it checkpoints and exits 75) and ends
the retries. Every attempt is a line of <run_dir>/attempts.jsonl with its exit code and the decision's reason.
The child is started, signalled and read by playground/processes/supervisor.py.
"""
from __future__ import annotations

import codecs
import os
import subprocess
import sys
import threading
import time
from typing import IO

from playground.processes.exit_codes import EXIT_DONE, EXIT_STOPPED, EXIT_USAGE, exit_status
from playground.processes.supervisor import signal_child, start_child, stop_signals_call
from playground.restarts.attempts import append_attempt, next_attempt
from playground.restarts.policy import Decision, LogPolicy, RestartPolicy

CARRY = 4096   # characters kept between chunks, so a pattern cut in two by a read still matches


def supervise(command: list[str], run_dir: str, policy: RestartPolicy) -> int:
    stopping = threading.Event()
    child: list[subprocess.Popen] = []

    def stop(_signum: int) -> None:
        stopping.set()
        if child:
            signal_child(child[0])

    with stop_signals_call(stop):
        while True:
            attempt = next_attempt(run_dir)
            if stopping.is_set():   # asked before this attempt started: nothing to stop, nothing lost
                print(f"playground: stopped before attempt {attempt} started; run the same command to go on",
                      file=sys.stderr, flush=True)
                return EXIT_STOPPED
            started = time.time()
            process = start_child(command, holds_stop=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            child[:] = [process]
            if stopping.is_set():   # asked while it started: the attempt stops at its first boundary
                signal_child(process)
            append_attempt(run_dir, {"attempt": attempt, "child_pid": process.pid, "start": started})
            matched = _tee_and_scan(process, policy)
            code = process.wait()
            decision = policy.decide(code, matched, stop_asked=stopping.is_set())
            if not attempt_ended(run_dir, attempt, started, code, decision):
                return exit_status(code)


def attempt_ended(run_dir: str, attempt: int, started: float, code: int, decision: Decision) -> bool:
    """The attempt's end in attempts.jsonl and, unless it simply succeeded, on stderr; whether it runs again."""
    append_attempt(run_dir, {"attempt": attempt, "start": started, "end": time.time(), "exit_code": code,
                             "reason": decision.reason, "retry": decision.retry, "restart_consumed": decision.consumes})
    if not decision.retry:
        if attempt > 1 or code not in (EXIT_DONE, EXIT_USAGE):
            print(f"playground: attempt {attempt} {decision.reason}", file=sys.stderr, flush=True)
        return False
    print(f"playground: attempt {attempt} {decision.reason}; running it again in {run_dir}", file=sys.stderr, flush=True)
    return True


def _tee_and_scan(process: subprocess.Popen, policy: RestartPolicy) -> LogPolicy | None:
    """Copy the child's stdout and stderr here until both close; the first log policy their text matched."""
    found: list[LogPolicy] = []
    threads = [threading.Thread(target=_pump, args=(stream, out, policy, found), daemon=True)
               for stream, out in ((process.stdout, sys.stdout), (process.stderr, sys.stderr))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return found[0] if found else None


def _pump(stream: IO[bytes], out: IO[str], policy: RestartPolicy, found: list[LogPolicy]) -> None:
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    carry = ""
    with stream:
        while chunk := os.read(stream.fileno(), 65536):
            text = decoder.decode(chunk)
            out.write(text)
            out.flush()
            if not found:
                rule = policy.matching(carry + text)
                if rule is not None:
                    found.append(rule)
            carry = (carry + text)[-CARRY:]

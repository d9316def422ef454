"""`playground run ... --max-restarts N`: runs the same command with the same run folder as a child process,
again and again while the restart policy says so, so each retry resumes from the run's last checkpoint.

The child's output goes to this terminal as it comes and is scanned for the log policies (a CUDA out-of-memory
line cancels retries). A SIGTERM/SIGINT here is passed on to the child (it checkpoints and exits 75) and ends
the retries. Every attempt is a line of <run_dir>/attempts.jsonl with its exit code and the decision's reason.
The child is started, signalled, teed and waited for by playground/processes/child_group.py; which attempt it is
and whether it runs again are decided here.
"""
from __future__ import annotations

import sys
import time

from playground.processes.child_group import ChildGroup
from playground.processes.exit_codes import EXIT_DONE, EXIT_STOPPED, EXIT_USAGE, exit_status
from playground.restarts.attempts import append_attempt, next_attempt
from playground.restarts.policy import Decision, RestartPolicy


def supervise(command: list[str], run_dir: str, policy: RestartPolicy) -> int:
    def attempt(group: ChildGroup) -> int | None:
        number = next_attempt(run_dir)
        if group.stops:   # asked before this attempt started: nothing to stop, nothing lost
            print(f"playground: stopped before attempt {number} started; run the same command to go on",
                  file=sys.stderr, flush=True)
            return EXIT_STOPPED
        started = time.time()
        process = group.start(command, holds_stop=True)   # a stop asked while it starts: at its first boundary
        append_attempt(run_dir, {"attempt": number, "child_pid": process.pid, "start": started})
        ending = group.wait()
        code = ending.codes[0]
        decision = policy.decide(code, ending.found, stop_asked=group.stops > 0)
        return None if attempt_ended(run_dir, number, started, code, decision) else exit_status(code)

    return ChildGroup(scan=policy.matching).run(attempt)


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


"""The exit codes of every process the product runs, named once, and the base class of errors that are the
user's to fix.

A command (`playground ...`, AnyExpOnTerm.py, a sweep's trial, which is a `playground run`) exits with one of
EXIT_DONE, EXIT_FAILED, EXIT_USAGE, EXIT_STOPPED; supervisors (restarts/policy.py, the sweep agent) decide on
them. A spawned rank may also exit with a launcher-internal code that only its launcher reads. This module
imports nothing, so every package may import it.
"""
from __future__ import annotations

EXIT_DONE = 0        # the work is done
EXIT_FAILED = 1      # the run failed; its message says why (a supervisor may run it again)
EXIT_USAGE = 2       # unusable input (opts, command line, spec, files): nothing was started; never retried
EXIT_STOPPED = 75    # EX_TEMPFAIL, "try again later": stopped after a checkpoint (preempted, paused, pruned);
                     # re-running the same command resumes
EXIT_INTERRUPTED = 130   # 128 + SIGINT, as a shell reports Ctrl-C: a tool command interrupted before it wrote

# Launcher-internal: a spawned rank tells its launcher (launch/spawn.py) why it stopped; no command exits so.
EXIT_PEER_LOST = 3   # stopped because another rank was lost
EXIT_FENCED = 4      # rank 0 was fenced by a later attempt's claim (restarts/fence.py); the command exits 75


class UserError(Exception):
    """Input the user must fix (opts, a file, a script, a spec); the message says what, where and what to do.

    Entry points print it as one line, `playground: error: <message>`, without a traceback: before any work
    started it ends the process with EXIT_USAGE (never retried); inside a run that had started (a rank reading
    a corrupt record) the run failed, EXIT_FAILED. Subclasses keep their own names and standard bases
    (OptsError is also a ValueError), so code that catches those still does.
    """


def error_line(err: BaseException, program: str = "playground") -> str:
    """The one line an entry point prints for a user error."""
    return f"{program}: error: {err}"


def exit_status(returncode: int) -> int:
    """A child's returncode (Popen's: -N when signal N killed it) as an exit status this process can pass on:
    128 + N for a death by signal N, as a shell reports it."""
    return returncode if returncode >= 0 else 128 - returncode

"""The fork server's own set-up, run by importing this module first among the server's preloads
(supervisor.start_ranks): the ranks are forked from that server, and the launcher learns their exit codes
through it, so it must outlive a SIGTERM sent to the whole process group (a user's `kill -- -PGID`, a
scheduler's): it holds SIGTERM and SIGINT without ever acting on them (held_stop.py). A rank forked from it has the
same handler from its first instruction, so a stop its launcher passes on while the rank is still starting is kept
for the rank's own stop handler (supervisor._rank_main holds again, as a rank: a second signal interrupts).

It acts only in the server: the launcher names it in the environment the server starts with (SERVER_ENV) and
nowhere else, so importing this module anywhere else changes nothing.
"""
import os

from playground.processes import held_stop

SERVER_ENV = "PLAYGROUND_RANK_SERVER"

if os.environ.pop(SERVER_ENV, None) == str(os.getppid()):
    # started with the stop signals blocked (supervisor._ensure_fork_server): one that came while this interpreter
    # started is delivered as hold() unblocks them, to the handler that holds it
    held_stop.hold(interrupt_on_repeat=False)

"""The fork server's own set-up, run by importing this module first among the server's preloads
(supervisor.start_ranks): the ranks are forked from that server, and the launcher learns their exit codes
through it, so it must outlive a SIGTERM sent to the whole process group (a user's `kill -- -PGID`, a
scheduler's): it ignores SIGTERM. The ranks start with the default again (supervisor._rank_main).

It acts only in the server: the launcher names it in the environment the server starts with (SERVER_ENV) and
nowhere else, so importing this module anywhere else changes nothing.
"""
import os
import signal

SERVER_ENV = "PLAYGROUND_RANK_SERVER"

if os.environ.pop(SERVER_ENV, None) == str(os.getppid()):
    signal.signal(signal.SIGTERM, signal.SIG_IGN)

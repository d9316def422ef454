"""`python -m playground ...` is the `playground` command."""
from playground.processes import held_stop

held_stop.hold()   # first: a SIGTERM while a training command starts is kept for it (processes/held_stop.py)

from playground.cli import exit_command, main, own_process  # noqa: E402

own_process()

exit_command(main())

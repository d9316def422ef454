"""`python -m playground ...` is the `playground` command."""
from playground.cli import exit_command, main

exit_command(main())

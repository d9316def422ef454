"""`python -m playground ...` is the `playground` command."""
import sys

from playground.cli import main

sys.exit(main())

"""`python -m playground.compat.determined SCRIPT [ARGS...]`: run a Determined script in local mode where the
`determined` package is not installed (Determined's own local mode is a bare `python SCRIPT`, which needs it).

The script runs as `python SCRIPT ARGS` would run it (its folder first on sys.path, `__main__`, sys.argv),
with `import determined` giving playground's implementation (_aliases.py). Without an experiment's cluster info
it is Determined's local mode: a Trainer-API script trains with the hparams it passes to
`det.pytorch.init()`, into a run folder `runs/determined-<time>/`; a Core-API script's `det.core.init()` works
against that folder.
"""
import os
import runpy
import sys

from playground.compat.determined._aliases import install
from playground.processes.exit_codes import EXIT_DONE, EXIT_USAGE

USAGE = "usage: python -m playground.compat.determined SCRIPT [ARGS...]"


def main(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help"):
        print(USAGE, file=sys.stderr)
        return EXIT_DONE if argv else EXIT_USAGE
    script = argv[0]
    if not os.path.isfile(script):
        print(f"playground: error: {script}: no such script\n{USAGE}", file=sys.stderr)
        return EXIT_USAGE
    install()
    sys.argv = list(argv)
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
    runpy.run_path(script, run_name="__main__")
    return EXIT_DONE


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

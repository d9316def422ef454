"""`import determined` in a process playground started for a Determined experiment.

playground/determined/command_run.py puts this folder first on PYTHONPATH of the entrypoint's processes, and
only theirs. The module becomes playground.compat.determined, and every `determined.X` that module's
submodule playground.compat.determined.X (one module object per name: _aliases.py), whether or not the real
`determined` package is installed.
"""
import os
import sys

try:
    import playground  # noqa: F401
except ImportError:     # the interpreter does not see playground's own path: the folder five levels up has it
    sys.path.append(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__)))))))

from playground.compat.determined._aliases import install  # noqa: E402

install()

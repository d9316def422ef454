"""`SweepError`: a sweep that cannot start (bad spec, upf, restart file, opts keys); the command exits 2.
`described(err)`: how any other failure is named in the one line an agent prints before it exits 1."""
from __future__ import annotations

import os
import traceback

from playground.options.layers import OptsError

_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class SweepError(OptsError):
    """One message per problem, each naming the file and the place in it."""

    heading = "problems"


def described(err: BaseException) -> str:
    """`OSError: [Errno 28] No space left on device (in create_claim, playground/restarts/fence.py:53)`: the
    error and the line that raised it (a path inside the project relative to it)."""
    frames = traceback.extract_tb(err.__traceback__) if err.__traceback__ else []
    if not frames:
        return f"{type(err).__name__}: {err}"
    last = frames[-1]
    shown = os.path.relpath(last.filename, _ROOT) if last.filename.startswith(_ROOT + os.sep) else last.filename
    return f"{type(err).__name__}: {err} (in {last.name}, {shown}:{last.lineno})"

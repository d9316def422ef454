"""`SweepError`: a sweep that cannot start (bad spec, upf, restart file, opts keys); the command exits 2."""
from __future__ import annotations

from playground.options.layers import OptsError


class SweepError(OptsError):
    """One message per problem, each naming the file and the place in it."""

    heading = "problems"

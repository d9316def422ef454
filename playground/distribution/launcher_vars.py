"""The launchers' environment variables (torchrun's WORLD_SIZE, RANK, ...; Slurm's SLURM_NTASKS, SLURM_PROCID, ...)
read as whole numbers: a malformed one (mistyped, or left in a shell by another job) is one OptsError naming it,
before any work, not a ValueError from int() deep in the start-up."""
from __future__ import annotations

from typing import Mapping

from playground.options.layers import OptsError


def whole_number(env: Mapping[str, str], name: str, default: int | None = None, least: int = 0) -> int:
    """`env[name]` as an int of at least `least` (`default` when it is unset and a default is given)."""
    given = env.get(name)
    if given is None and default is not None:
        return default
    try:
        value = int(str(given).strip())
    except ValueError:
        value = None
    if value is None or value < least:
        who = "Slurm" if name.startswith("SLURM_") else "torchrun (or another launcher)"
        raise OptsError(f"environment variable {name}={given!r}: a launcher's variable must be a whole number of at "
                        f"least {least}; it is set by {who}. Left in this shell by another job? Unset it "
                        f"(unset {name}) or start the run through its launcher")
    return value

"""The launchers' environment variables (torchrun's WORLD_SIZE, RANK, ...; Slurm's SLURM_NTASKS, SLURM_PROCID, ...)
read as whole numbers: a malformed one (mistyped, or left in a shell by another job) is one OptsError naming it,
before any work, not a ValueError from int() deep in the start-up. The one reader of torchrun's variables
(`torchrun_ranks`): the topology, Determined's DistributedContext and its cluster info all read them here."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

from playground.options.layers import OptsError


@dataclass(frozen=True)
class LauncherRanks:
    """Where a launcher put this process: its rank among all, and among its node's; its node among the nodes."""
    rank: int
    world_size: int
    local_rank: int
    local_world_size: int
    group_rank: int          # torchrun's name for the node's index (Determined's cross_rank)
    group_world_size: int


def torchrun_ranks(env: Mapping[str, str], alone: bool = False) -> LauncherRanks:
    """torchrun's RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, GROUP_RANK and GROUP_WORLD_SIZE in `env`; each of
    the last four, where unset, as the first two give it (LOCAL_WORLD_SIZE ranks on each node, in order). RANK and
    WORLD_SIZE must be set, or with `alone` their absence is a process started alone: rank 0 of 1."""
    world = whole_number(env, "WORLD_SIZE", 1 if alone else None, least=1)
    rank = whole_number(env, "RANK", 0 if alone else None)
    local_world = whole_number(env, "LOCAL_WORLD_SIZE", world, least=1)
    return LauncherRanks(rank, world, whole_number(env, "LOCAL_RANK", rank % local_world), local_world,
                         whole_number(env, "GROUP_RANK", rank // local_world),
                         whole_number(env, "GROUP_WORLD_SIZE", max(1, world // local_world), least=1))


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

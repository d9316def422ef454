"""The sweep's module map (the user's component names): chosen once, recorded in sweep.json, used by every agent
and trial of the sweep.

A command's map is, first found: `--module-map FILE` (or PLAYGROUND_MODULE_MAP), the one sweep.json recorded,
a module_map.py beside the base opts (as `playground run` finds one). It is made the process's map through
PLAYGROUND_MODULE_MAP, so the spec's validation finds the components and every trial process inherits it.
"""
from __future__ import annotations

import os

from playground.sweeps.errors import SweepError
from playground.sweeps.files.sweep_folder import SweepFolder


def use_sweep_module_map(folder: SweepFolder | None, base: str | None) -> str | None:
    """Make the sweep's module map this process's; its absolute path, or None when it has none. A recorded map
    that is gone is a SweepError naming it."""
    from playground.options.registry import chosen_module_map, use_module_map
    chosen = chosen_module_map()
    if chosen:
        return chosen
    recorded = folder.recorded_module_map() if folder is not None and folder.exists() else None
    if recorded:
        if not os.path.isfile(recorded):
            raise SweepError(f"{folder.spec_file}: the sweep's module map {recorded} is gone; give --module-map "
                             "FILE (a map with the sweep's component names)")
        use_module_map(recorded)
        return recorded
    beside = os.path.join(os.path.dirname(base), "module_map.py") if base else None
    if beside and os.path.isfile(beside):
        use_module_map(beside)
        return os.path.abspath(beside)
    return None


def record_module_map(folder: SweepFolder) -> None:
    """Write this process's module map (use_sweep_module_map's) into sweep.json, for the agents to come."""
    from playground.options.registry import chosen_module_map
    folder.record_module_map(chosen_module_map())

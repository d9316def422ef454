"""Determined 0.38.1's Python API, the part training code uses, on playground: what `import determined` gives
the processes playground starts for a Determined experiment (`playground run EXPERIMENT.yaml`, its sweeps),
whether or not the real package is installed, and nothing else (on_path/determined.py, _aliases.py).
docs/determined.md has the table of members.

- top level (here): `get_cluster_info()` and its classes (_info.py), `InvalidHP`, `LOG_FORMAT`, `__version__`
- `determined.core`: the Core API (`core.init()` and its contexts), on the run folder (core/)
- `determined.pytorch`: the Trial and Trainer APIs (pytorch/), imported when first used

Nothing here talks to a master: the trial's facts come from det_cluster.json
(playground/determined/cluster_file.py), metrics and checkpoints go to the run folder.
"""
from __future__ import annotations

import importlib

from playground.compat.determined._info import (ClusterInfo, RendezvousInfo, ResourcesInfo, TrialInfo,
                                                get_cluster_info)
from playground.compat.determined._errors import InvalidHP
from playground.compat.determined import core

__version__ = "0.38.1+playground"

# Determined's log line format (its WebUI filters on it); kept for scripts that configure logging with it.
LOG_FORMAT = "%(levelname)s: [%(process)s] %(name)s: %(message)s"


_LAZY = ("pytorch",)     # imported on first use: det-trial's package, heavier than the rest

__all__ = ["ClusterInfo", "InvalidHP", "LOG_FORMAT", "RendezvousInfo", "ResourcesInfo", "TrialInfo", "core",
           "get_cluster_info", "pytorch"]


def __getattr__(attribute: str):
    if attribute in _LAZY:
        return importlib.import_module(f"{__name__}.{attribute}")
    raise AttributeError(f"module 'determined' (playground's implementation of Determined's API) has no attribute "
                         f"{attribute!r}; it offers: {', '.join(__all__)} (docs/determined.md)")

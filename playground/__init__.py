"""playground: a parameter-driven experiment playground for PyTorch (Caffe2's Playground, rebuilt).

The framework, one subpackage per part of the architecture:

    options/       the opts: layers, declared keys and types, the built-in schema, the component registry
    trainer/       the AnyExp loop and its hooks, the model slot, meters, learning-rate schedules
    distribution/  topology, rendezvous, process groups and collectives, rank failures
    launch/        from validated opts to running ranks: run folder, plan, spawning, one rank's life
    checkpoints/   checkpoint policy, files, train state, preemption, pretrained weights
    outputs/       metrics.jsonl, results.json, plots, logs, atomic writes
    data/          the batch stream, datasets in any common form, image LMDBs
    sweeps/        many runs: upf, grids, searchers on Optuna, resume, summaries (runs trials as processes);
                   floors inputs < files < search < results < agents < operations (sweeps/__init__.py)
    restarts/      whether an ended attempt of a run is run again (max_restarts, log policies), attempts.jsonl
    candle/        CANDLE benchmark scripts: parameter layering and the checkpoint helper
    commands/      the `playground` command line (nothing else imports it)
    compat/        other tools' APIs on playground (candle/: candle_lib's, for CANDLE scripts); the core never
                   imports them
    processes/     exit codes, the user-error base class, the one supervisor of child processes
    api.py         the public surface components and scripts import
    _moved_paths.py  the old module paths the documentation showed (they warn), and their finder

docs/architecture.md draws the packages and the floors they stand on.

Importing this package is cheap; heavy modules (torch, cv2, matplotlib) are imported where they are used.
"""
from __future__ import annotations

from playground import _moved_paths

__version__ = "0.1.0"

# Module paths users were told to import before the subpackages (`from playground.meters import Meter`) keep
# working and warn, naming the new path: _moved_paths.py holds them and the finder.
_moved_paths.install()

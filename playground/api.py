"""The framework's public surface: what components, hooks and scripts import, and running experiments from Python.

Components import the framework from here only (a test checks it), so its internals can move without breaking
user code. Names are loaded on first use, so importing this module stays cheap:

    from playground.api import Model, Meter, input_shape, schedule_from_opts, Int, ListOf

Running an experiment from a notebook, a script or a test takes the same path as the command line:

    from playground.api import run
    result = run({"input": {...}, "model": {...}, ...}, run_dir="runs/try1", sets=["epoch_iter.num_epochs=2"])

`run` validates, writes <run_dir>/opts.json and trains; errors raise (OptsError for bad opts) instead of
becoming exit codes. A multi-process run spawns its ranks and returns the results.json it wrote.
"""
from __future__ import annotations

import importlib
import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from playground.launch.prepare import PreparedRun

# public name -> module that defines it
_EXPORTS = {
    # the model slot of the trainer and what forward passes need
    "Model": "playground.trainer.model",
    "input_shape": "playground.trainer.model",
    # meters
    "Meter": "playground.trainer.meters",
    "Blobs": "playground.trainer.meters",
    "batch_size_of": "playground.trainer.meters",
    # learning-rate schedules
    "LRSchedule": "playground.trainer.lr_schedule",
    "schedule_from_opts": "playground.trainer.lr_schedule",
    "SCHEDULE_KEYS": "playground.trainer.lr_schedule",
    # hooks (docs/hooks.md)
    "Hook": "playground.trainer.hook",
    "Trial": "playground.trainer.trial",
    "TrialContext": "playground.trainer.trial",
    "STAGES": "playground.trainer.hook",
    # types of declared opts keys
    **{name: "playground.options.value_types" for name in (
        "AnyOf", "Anything", "Bool", "Choice", "Float", "Int", "ListOf", "Mapping", "Nullable", "Record", "Str")},
    "OptsError": "playground.options.layers",
    # errors the user must fix: raise one (or a subclass) and the run ends with its message alone (README)
    "UserError": "playground.processes.exit_codes",
    # rendezvous
    "fresh_attempt_store": "playground.distribution.rendezvous",
    "run_id": "playground.distribution.rendezvous",
    "RendezvousError": "playground.distribution.rendezvous",
    "rendezvous_defaults": "playground.distribution.slurm_env",   # MASTER_ADDR/MASTER_PORT inside a Slurm job
    # data: the seeded training order (a hand-written loop can visit samples as runs do), image LMDBs (docs/data.md)
    "pass_permutation": "playground.data.batch_stream",
    "LmdbImageDataset": "playground.data.images.lmdb_dataset",
    "AugmentSpec": "playground.data.images.augment",
    "DbRecords": "playground.data.records.db_records",
    "DatabaseError": "playground.data.records.db_records",
    "CAFFE": "playground.data.records.db_records",
    "IMAGENET_MEAN": "playground.data.images.image_batch",
    "IMAGENET_STD": "playground.data.images.image_batch",
}

__all__ = sorted([*_EXPORTS, "prepare_opts", "run"])


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"playground.api has no {name!r}; it offers: {', '.join(__all__)}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__


def prepare_opts(opts: dict, run_dir: str | None = None, sets: list[str] | None = None,
                 defaults: dict | None = None) -> PreparedRun:
    """Layer and validate `opts` (plus --set items and defaults) and write <run_dir>/opts.json; a PreparedRun.
    This process holds the run folder from then on (another live run there is refused) until `run` ends or the
    process does."""
    from playground.launch.prepare import prepare
    from playground.options.layers import sets_layer
    layers: list[tuple[str, dict]] = []
    if defaults:
        layers.append(("defaults", defaults))
    layers.append(("opts", opts.get("opts", opts)))
    if sets:
        layers.append(("--set", sets_layer(sets)))
    return prepare(layers, run_dir=run_dir)


def run(opts: dict, run_dir: str | None = None, sets: list[str] | None = None,
        defaults: dict | None = None) -> dict[str, Any]:
    """Train; return the result dict (as assembleAllOutputs gave it, on rank 0). Called in your own process, the
    run gives back what it set in torch (threads, deterministic kernels, cuDNN's autotuner) when it ends; the random
    generators stay seeded as the run left them."""
    from playground.outputs.run_folder_lock import release_run_folder
    prepared = prepare_opts(opts, run_dir, sets, defaults)
    try:
        return _run_prepared(prepared)
    finally:
        release_run_folder(prepared.run_dir)     # held since prepare_opts: one live run per folder


def _run_prepared(prepared: PreparedRun) -> dict[str, Any]:
    topology = prepared.plan.topology
    if topology.spawns:
        from playground.launch.jobs import TRAIN
        from playground.launch.spawn import launch
        from playground.processes.exit_codes import EXIT_DONE
        code = launch(prepared, TRAIN)
        if code != EXIT_DONE:
            raise RuntimeError(f"the run in {prepared.run_dir} exited with code {code}")
        from playground.outputs.run_folder import RunFolder
        with open(RunFolder(prepared.run_dir).results, encoding="utf-8") as handle:
            return json.load(handle)
    from playground.launch.jobs import TRAIN
    from playground.launch.worker import run_rank
    return run_rank(topology.given_local_rank or 0, prepared.resolved, prepared.run_dir, topology, TRAIN)

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

docs/architecture.md draws the packages and the floors they stand on.

Importing this package is cheap; heavy modules (torch, cv2, matplotlib) are imported where they are used.
"""
from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
import warnings

__version__ = "0.1.0"

# Modules that lived elsewhere before: at the top of the package before it had subpackages, or flat in sweeps/ before
# it had its own. User code written against those paths (docs/components.md showed `from playground.meters import
# Meter`) keeps working: the old name is the new module, and importing it warns (DeprecationWarning) with the new path.
_MOVED = {
    "opt_types": "options.value_types", "opts": "options.loader", "opts_layers": "options.layers",
    "opt_decl": "options.declaration", "builtin_opts": "options.builtin", "schema": "options.schema",
    "registry": "options.registry", "anyexp": "trainer.anyexp", "trainer_class": "trainer.trainer_class",
    "model": "trainer.model", "meters": "trainer.meters", "metrics_book": "trainer.metrics_book",
    "lr_schedule": "trainer.lr_schedule", "progress": "trainer.progress", "seeding": "trainer.seeding",
    "run_context": "distribution.run_context", "topology": "distribution.topology",
    "rendezvous": "distribution.rendezvous", "process_group": "distribution.process_group",
    "distributed": "distribution.collectives", "rank_failure": "distribution.rank_failure",
    "run_setup": "launch.prepare", "plan": "launch.plan", "worker": "launch.worker",
    "checkpoint": "checkpoints.checkpointer", "checkpoint_files": "checkpoints.files",
    "checkpoint_keep": "checkpoints.keep", "checkpoint_policy": "checkpoints.policy",
    "train_state": "checkpoints.train_state", "preemption": "checkpoints.preemption",
    "pretrained": "checkpoints.pretrained", "caffe2_pickle": "checkpoints.caffe2_pickle",
    "plots": "outputs.plots", "run_log": "outputs.run_log", "run_records": "outputs.run_records",
    "run_summary": "outputs.run_summary", "atomic_files": "outputs.atomic_files",
    "batch_stream": "data.batch_stream", "demo": "commands.demo",
    # data/ split into records/ (LMDB files) and images/ (pixels) when it passed 15 modules
    "data.record_format": "data.records.record_format", "data.caffe_datum": "data.records.caffe_datum",
    "data.db_records": "data.records.db_records", "data.image_sources": "data.records.image_sources",
    "data.lmdb_writer": "data.records.lmdb_writer", "data.lmdb_build": "data.records.lmdb_build",
    "data.image_decode": "data.images.image_decode", "data.augment": "data.images.augment",
    "data.sample_seeds": "data.images.sample_seeds", "data.color_augment": "data.images.color_augment",
    "data.image_batch": "data.images.image_batch", "data.batch_ring": "data.images.batch_ring",
    "data.gpu_decode": "data.images.gpu_decode", "data.lmdb_dataset": "data.images.lmdb_dataset",
    # the flat sweeps package before it was split by concern (inputs, files, search, results, agents, operations)
    "sweeps.space": "sweeps.inputs.space", "sweeps.spec": "sweeps.inputs.spec", "sweeps.upf": "sweeps.inputs.upf",
    "sweeps.restart_csv": "sweeps.inputs.restart_csv", "sweeps.storage_url": "sweeps.inputs.storage_url",
    "sweeps.opts_check": "sweeps.inputs.opts_check", "sweeps.prepare": "sweeps.inputs.prepare",
    "sweeps.folder": "sweeps.files.sweep_folder", "sweeps.metrics_tail": "sweeps.files.metrics_tail",
    "sweeps.study": "sweeps.search.study", "sweeps.asha": "sweeps.search.asha",
    "sweeps.storages": "sweeps.search.storages", "sweeps.postgres": "sweeps.search._postgres",
    "sweeps.retrying": "sweeps.search.retrying", "sweeps.netfs": "sweeps.search.netfs",
    "sweeps.summary": "sweeps.results.summary", "sweeps.plots": "sweeps.results.plots",
    "sweeps.heartbeat": "sweeps.agents.heartbeat", "sweeps.lease": "sweeps.agents.lease",
    "sweeps.coordinator": "sweeps.agents.coordinator", "sweeps.agent": "sweeps.agents.agent",
    "sweeps.trial_process": "sweeps.agents.trial_process", "sweeps.runner": "sweeps.agents.runner",
    "sweeps.control": "sweeps.agents.control", "sweeps.warm_start": "sweeps.agents.warm_start",
    "sweeps.reports": "sweeps.operations.reports", "sweeps.rebuild": "sweeps.operations.rebuild",
    "sweeps.preview": "sweeps.operations.preview", "sweeps.selftest": "sweeps.operations.selftest",
    "sweeps.slurm": "sweeps.operations.slurm", "sweeps.serve": "sweeps.operations.serve",
    # restarts/child.py became the supervisor's start_child
    "restarts.child": "processes.supervisor",
}


class _MovedModules(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """`import playground.meters` gives the module object of playground.trainer.meters (the same one), and a
    DeprecationWarning naming the new path, attributed to the line that imported the old one."""

    def find_spec(self, name: str, path, target=None):
        prefix, _, old = name.partition(".")
        if prefix != __name__ or old not in _MOVED:
            return None
        return importlib.util.spec_from_loader(name, self)

    def create_module(self, spec):
        new = f"{__name__}.{_MOVED[spec.name.partition('.')[2]]}"
        warnings.warn(f"{spec.name} moved to {new}; import it from there (the old path will be removed)",
                      DeprecationWarning, stacklevel=2)   # past create_module; warn skips importlib's frames
        module = importlib.import_module(new)
        spec.loader_state = module.__spec__   # importlib replaces the module's spec with this one; put it back
        return module

    def exec_module(self, module) -> None:
        module.__spec__ = module.__spec__.loader_state


sys.meta_path.append(_MovedModules())

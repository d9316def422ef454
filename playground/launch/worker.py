"""One rank of a run, from start to finish: logging, threads, seeds, process group, trainer, clean-up.

Called in the launching process for a single-process run or when torchrun/Slurm started the ranks, and in each
spawned process otherwise, with the opts the launching process resolved and validated (a spawned rank receives
them pickled and does not resolve them again) and the job to do (jobs.py). Returns the job's result (rank 0) or None.
"""
from __future__ import annotations

import logging
import os
import sys
import signal
from typing import Mapping

import torch

from playground.distribution import collectives as dist_utils
from playground.launch import deferred_dynamo
from playground.launch.jobs import Job
from playground.launch.torch_settings import torch_settings_kept
from playground.options.loader import ResolvedOpts
from playground.checkpoints.preemption import Preempted
from playground.distribution.process_group import destroy_process_group, init_process_group
from playground.trainer.progress import wants_bar
from playground.distribution.rank_failure import explain_peer_lost, is_peer_lost, leave_last_words
from playground.distribution.run_context import RunContext
from playground.distribution.slurm_env import allocated_cpus
from playground.outputs.run_log import close_logging, setup_logging
from playground.trainer.seeding import seed_everything
from playground.distribution.topology import Topology
from playground.trainer.trainer_class import build_trainer_class


def run_rank(local_rank: int, resolved: ResolvedOpts, run_dir: str, topology: Topology, job: Job) -> dict | None:
    with torch_settings_kept():   # a run called in a user's process leaves torch's settings as it found them
        return _run_rank(local_rank, resolved, run_dir, topology, job)


def _run_rank(local_rank: int, resolved: ResolvedOpts, run_dir: str, topology: Topology, job: Job) -> dict | None:
    # A file-size limit (RLIMIT_FSIZE) then fails the write with EFBIG instead of killing the process.
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    opts = resolved.opts
    if not opts["model_param"].get("compile"):
        deferred_dynamo.install()   # 1.3-2 s less start-up: torch._dynamo only if something compiles
    ctx = RunContext(run_dir=run_dir, topology=topology, local_rank=local_rank,
                     meter_classes={name: c.meter_class() for name, c in resolved.meters.items()})
    setup_logging(run_dir, ctx.rank, records_on_console=not wants_bar(opts, ctx.rank))
    _configure_torch(opts, topology)
    seed_everything(opts["model_param"]["seed"])
    trainer = build_trainer_class(resolved)(opts, ctx)
    try:
        init_process_group(trainer)
        trainer.checkpointer.preemption.install()
        result = job.run(trainer)
        dist_utils.barrier()
        return result if ctx.is_writer else None
    except Exception as err:
        if ctx.world_size > 1 and not isinstance(err, Preempted):
            if is_peer_lost(err):
                raise explain_peer_lost(ctx.rank, ctx.world_size, err) from err
            leave_last_words(ctx.rank, err)
        raise
    finally:
        # The stop handler stays until the group is gone: a signal forwarded late (by the launcher, or sent to
        # the whole process group) must not kill a rank that is finishing its last write or collective.
        try:
            trainer.checkpointer.finish()
        finally:
            destroy_process_group()
            trainer.checkpointer.preemption.uninstall()
            close_logging()


def thread_counts(opts: dict, topology: Topology, env: Mapping[str, str] | None = None) -> tuple[int | None, int | None]:
    """(intra-op, inter-op) threads for each process; None leaves torch's choice. The opts win over CANDLE's
    NUM_INTRA_THREADS / NUM_INTER_THREADS; a CPU rank otherwise gets its share of the cores allocated to it
    (affinity mask, SLURM_CPUS_PER_TASK): the ranks this process spawns (or torchrun's on one host) share them,
    a rank alone in its allocation (one process, or a task that srun started) has them all."""
    env = os.environ if env is None else env
    dist = opts["distributed"]
    intra, inter = dist.get("num_intra_threads"), dist.get("num_inter_threads")
    if intra is None and env.get("NUM_INTRA_THREADS", "").strip().isdigit():
        intra = int(env["NUM_INTRA_THREADS"]) or None
    if inter is None and env.get("NUM_INTER_THREADS", "").strip().isdigit():
        inter = int(env["NUM_INTER_THREADS"]) or None
    if intra is None and topology.device_type == "cpu":
        sharing = 1 if topology.launcher == "slurm" else topology.devices_per_host
        cores = allocated_cpus(env)
        if sharing > 1 or cores < allocated_cpus({}):   # alone: torch's default follows the mask, not Slurm's cap
            intra = max(1, cores // sharing)
    return intra, inter


def _deterministic_kernels() -> None:
    """torch.use_deterministic_algorithms(True) without importing torch's compiler for it: that function sets
    torch._inductor.config.deterministic too, and importing that config imports the inductor (1.2-1.5 s of every
    process's start-up). Before the inductor is imported its flag is given the way it reads it when it is
    (TORCHINDUCTOR_DETERMINISTIC), so a run that compiles later gets the same."""
    if "torch._inductor.config" in sys.modules:
        torch.use_deterministic_algorithms(True)
        return
    os.environ["TORCHINDUCTOR_DETERMINISTIC"] = "1"
    torch._C._set_deterministic_algorithms(True, warn_only=False)


def _configure_torch(opts: dict, topology: Topology) -> None:
    intra, inter = thread_counts(opts, topology)
    if intra is not None:
        torch.set_num_threads(intra)
    if inter is not None and torch.get_num_interop_threads() != inter:
        try:
            torch.set_num_interop_threads(inter)
        except RuntimeError as err:   # torch allows it once, before any inter-op work (an in-process second run)
            logging.getLogger("playground").warning("distributed.num_inter_threads %d not applied: %s", inter, err)
    if opts["model_param"]["deterministic"]:
        os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
        _deterministic_kernels()
        torch.backends.cudnn.benchmark = False

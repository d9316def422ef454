"""Checkpointing of a run: when to save (policy.py), where to resume from; what is saved is the trainer's.

Saving: at epoch ends and every `ckpt_every_n_iters` iterations as the policy says, and on preemption. Every
rank contributes its own part (its RNG and data state) under `ranks`; rank 0 copies the shared state, adds the
file's own keys (format, version, run id, best) and stores it as given (the loop's only stall) and a background
thread writes the file, its info file, then publishes it as CANDLE's helper does (published.py: the `last` and
`best` pointers, ckpt.log, the keep limit). At most one write is in flight; a failed write is raised in the loop at the next
iteration (or at the end), and every earlier checkpoint stays intact. The checkpointer never sees the trainer:
the caller hands it the position and two functions that capture the states (`StateCapture`).

Fencing: rank 0 writes only while its attempt holds the run folder (playground/restarts/fence.py). It checks
before each save, before the info file, right before the state file takes its name (so a write that straddles
a later claim never lands), and before each pointer, log line and deletion; a superseded attempt's write raises
Fenced in the loop, as a failed write would.

Restoring (`ckpt_restart_mode` auto or required): rank 0 follows `last`; a checkpoint failing its checksum or
its load is reported and the previous one is tried; all ranks then load the chosen file. The run id stored in
the checkpoint survives resumes: the keep limit deletes only that run's files.
"""
from __future__ import annotations

import hashlib
import json
import os
import threading
import time
import uuid
from dataclasses import dataclass
from typing import Any, Callable

from playground.distribution import collectives as dist_utils
from playground.checkpoints.choice import choose_checkpoint, own_name
from playground.checkpoints.files import (FORMAT, VERSION, CheckpointError, append_log, load_state, save_state,
                                         write_info)
from playground.checkpoints.policy import SavePolicy
from playground.checkpoints.preemption import Preempted, Preemption
from playground.checkpoints.published import PublishedCheckpoints
from playground.checkpoints.snapshot import Snapshot
from playground.options.digest import changed_keys, opts_digest
from playground.outputs.run_folder import RunFolder
from playground.restarts.fence import Fence, Fenced


@dataclass
class StateCapture:
    """What a save needs from the loop: where it is, its last record point, and how to capture the states.

    `shared(epoch, epoch_iter)` gives rank 0's part (referencing live tensors: the checkpointer copies them);
    `rank()` this rank's part. Both are called on the ranks that need them only, at the save.
    """
    global_iter: int
    epoch_iterations: int
    record: dict | None
    shared: Callable[[int, int], dict]
    rank: Callable[[], dict]


class Checkpointer:
    """The run's checkpoints: every rank calls each public method at the same points of the loop."""

    def __init__(self, opts: dict, run_dir: str, is_writer: bool, world_size: int, log: Any) -> None:
        self.output = opts["output"]
        self.log = log
        self.is_writer, self.world_size = is_writer, world_size
        self.metric_names = [m["name"] for m in self.output["metrics"]]
        folder = self.output["checkpoint_folder"] or RunFolder(run_dir).checkpoints
        self.folder = os.path.abspath(folder)
        self.run_id = uuid.uuid4().hex[:12]
        self.opts_hash = opts_hash(opts)
        # whose checkpoints these are: a run with other opts in another run folder refuses them (folder_owner.py)
        self.owner = {"run_dir": os.path.abspath(run_dir), "opts_digest": opts_digest(opts)}
        self.policy = SavePolicy(self.output, opts["epoch_iter"]["num_epochs"])
        self.preemption = Preemption()
        self.fence = Fence.from_env(run_dir)
        self.published = PublishedCheckpoints(self.folder, self.fence, self.output["ckpt_keep_limit"],
                                              self.output["ckpt_keep_mode"], key_prefix="output.")
        self.last_stall_secs = 0.0    # how long the last save blocked the loop (rank 0), for benchmarks
        self._snapshot = Snapshot()
        self._thread: threading.Thread | None = None
        self._error: BaseException | None = None
        self._saved_at: int | None = None      # the global iteration of the last save (none twice there)

    # ------------------------------------------------------------------ restoring
    def restore(self) -> tuple[str, dict] | None:
        """Per ckpt_restart_mode, the checkpoint to resume from and its state (the same on every rank), or None.

        The state is what the trainer gave `_save` (plus `ranks`, `run_id`, `best`): the trainer loads it."""
        mode = self.output["ckpt_restart_mode"]
        if mode == "off":
            return None
        if self.is_writer:
            self.fence.check(f"the resume note in {self.folder}/ckpt.log")
        path, state = self._choose() if self.is_writer else (None, None)
        path = dist_utils.broadcast_from_writer(path)
        if path is None:
            if mode == "required":
                raise CheckpointError(f"output.ckpt_restart_mode is 'required' but {self.folder} holds no usable "
                                      "checkpoint (no 'last' pointer, or every candidate failed its check; see "
                                      "ckpt.log there). Point 'last' at a checkpoint, or use mode auto to start "
                                      "afresh.")
            return None
        if state is None:
            state = load_state(path)
        self._adopt(path, state)
        if self.is_writer:
            append_log(self.folder, f"resumed from {os.path.basename(path)} (run {self.run_id})")
        return path, state

    def _adopt(self, path: str, state: dict) -> None:
        """Continue the checkpoint's run: its id, its best value and best file."""
        self.run_id = state["run_id"]
        self.policy.best_value = (state.get("best") or {}).get("value")
        self.published.adopt(path, state)

    def _choose(self) -> tuple[str | None, dict | None]:
        return choose_checkpoint(self.folder, self.output["ckpt_checksum"], self.log)

    # ------------------------------------------------------------------ saving
    def save_epoch(self, epochs_done: int, capture: StateCapture, path_of: Callable[[int], str]) -> str | None:
        """Checkpoint after `epochs_done` epochs if the policy (or a stop request) says so; return the path.

        `path_of(epochs_done)` names the file (the trainer's gen_checkpoint_path), asked only when saving."""
        due, improved = dist_utils.broadcast_from_writer(self.policy.epoch_due(epochs_done, capture.record))
        stop = self.preemption.should_stop(self.world_size, capture.global_iter, agree_now=True)
        if stop and self._saved_at == capture.global_iter:
            self._stop()      # the state after this iteration is saved already
        if not (due or stop):
            return None
        path = path_of(epochs_done)
        saved = self._save(path, epochs_done, 0, "epoch" if due else "preemption", improved, capture)
        if stop:
            self._stop()
        return saved

    def after_iteration(self, epoch: int, iters_done: int, global_iter: int, epoch_iterations: int,
                        capture: Callable[[], StateCapture]) -> str | None:
        """Mid-epoch checkpoints (ckpt_every_n_iters) and preemption, at an iteration boundary; the path saved.

        Called after every iteration: `capture()` is asked only when saving."""
        stop = self.preemption.should_stop(self.world_size, global_iter)
        saved = None
        if self._saved_at == global_iter:
            pass          # saved at this iteration already (a caller's save_now)
        elif stop or self.policy.iteration_due(epoch, global_iter, iters_done, epoch_iterations):
            path = os.path.join(self.folder, f"model_checkpoint_epoch{epoch}_iter{iters_done}.pt")
            saved = self._save(path, epoch, iters_done, "preemption" if stop else "iteration", False, capture())
        if stop:
            self._stop()
        return saved

    def save_now(self, epoch: int, epoch_iter: int, capture: StateCapture, path: str, best: bool = False,
                 best_value: float | None = None) -> str:
        """Checkpoint at position (epoch, epoch_iter) now, as `path`, whatever the policy: for a caller that
        decides itself when to save (a Determined trial's controller). `best` makes it the `best` one, with
        `best_value` as the policy's best value. Every rank calls it; returns the path."""
        if best:
            self.policy.best_value = best_value
        return self._save(path, epoch, epoch_iter, "iteration", best, capture)

    def _stop(self) -> None:
        self.finish()
        dist_utils.barrier()   # no rank exits before rank 0's checkpoint is on disk
        raise Preempted(self.preemption.signal_name or "a signal on another rank")

    def _save(self, path: str, epoch: int, epoch_iter: int, kind: str, best: bool, capture: StateCapture) -> str:
        self.raise_pending_error()
        self._saved_at = capture.global_iter
        started = time.perf_counter()
        ranks = dist_utils.gather_to_writer(capture.rank())
        if not self.is_writer:
            return path
        self._join()
        self.fence.check(f"checkpoint {path}")
        path = self._own_name(path)
        state = {"format": FORMAT, "version": VERSION, **self._snapshot.copy(capture.shared(epoch, epoch_iter))}
        state.update(ranks=ranks, run_id=self.run_id,
                     best=self.published.best_entry(self.policy.best_value, path if best else self.published.best))
        info = self._info(path, kind, epoch, epoch_iter, best, capture)
        self._thread = threading.Thread(target=self._write, args=(path, state, info, best),
                                        name="playground-checkpoint-writer")
        self._thread.start()
        self.last_stall_secs = time.perf_counter() - started
        return path

    def _info(self, path: str, kind: str, epoch: int, epoch_iter: int, best: bool, capture: StateCapture) -> dict:
        record = capture.record or {}
        return {"format": FORMAT, "version": VERSION, "file": os.path.basename(path), "kind": kind,
                "epoch": epoch, "epoch_iter": epoch_iter, "global_iter": capture.global_iter,
                "world_size": self.world_size, "run_id": self.run_id, "opts_hash": self.opts_hash, **self.owner,
                "metadata": self.output["ckpt_metadata"], "metrics": {m: record.get(m) for m in self.metric_names},
                "best_metric": self.policy.best_metric, "best_mode": self.policy.best_mode,
                "best_value": self.policy.best_value, "is_best": best}

    def _own_name(self, path: str) -> str:
        """Never overwrite a file this run did not write: use a name with this run's id instead."""
        return own_name(path, self.run_id, self.log)

    def _write(self, path: str, state: dict, info: dict, best: bool) -> None:
        """The background part: info and state files, then publishing (playground/checkpoints/published.py).
        Errors wait for the loop."""
        try:
            started = time.perf_counter()
            save_state(path, state, before_rename=lambda tmp, sha: self._write_info(path, tmp, sha, info),
                       checksum=self.output["ckpt_checksum"])
            self.published.publish(path, best, self.run_id, f"{info['kind']} checkpoint: epoch {info['epoch']}, "
                                   f"iteration {info['epoch_iter']}", info["size"], started)
        except Fenced as err:    # a later attempt holds the folder: stop, and write nothing about it either
            self._error = err
        except BaseException as err:  # noqa: BLE001 - whatever happened, the loop must hear of it
            self._error = err if isinstance(err, CheckpointError) else CheckpointError(
                f"could not finish checkpoint {path}: {getattr(err, 'strerror', None) or err}. Earlier checkpoints "
                "are intact; free space or choose another output.checkpoint_folder.")
            _note_failure(self.folder, path, self._error)

    def _write_info(self, path: str, written: str, sha256: str | None, info: dict) -> None:
        """Complete `info` (size and checksum of the state bytes in `written`, time); write it beside `path`.
        Calls write_info through this module, where the resume tests place their kill points. Runs just before
        the state file takes its name: the fence is checked before the info file and again before that rename."""
        info.update(size=os.path.getsize(written), sha256=sha256, timestamp=time.time(),
                    time=time.strftime("%Y-%m-%dT%H:%M:%S%z"))
        self.fence.check(f"the info file of {os.path.basename(path)}")
        write_info(path, info)
        self.fence.check(f"checkpoint {path} (it was written but does not take its name)")

    # ------------------------------------------------------------------ lifecycle
    def raise_pending_error(self) -> None:
        if self._error is not None:
            error, self._error = self._error, None
            raise error

    def _join(self) -> None:
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        self.raise_pending_error()

    def finish(self) -> None:
        """Wait for the write in flight (rank 0) and raise its error, if any."""
        self._join()


def opts_hash(opts: dict) -> str:
    return hashlib.sha256(json.dumps(opts, sort_keys=True, default=str).encode()).hexdigest()[:16]


def _note_failure(folder: str, path: str, error: BaseException) -> None:
    try:
        append_log(folder, f"FAILED {os.path.basename(path)}: {error}")
    except OSError:   # the disk that failed the write may fail the log too
        pass


__all__ = ["Checkpointer", "CheckpointError", "Preempted", "StateCapture", "changed_keys"]

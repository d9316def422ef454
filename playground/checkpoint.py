"""The checkpoint policy (CANDLE's keys and meanings): when to save, where, what to keep, where to resume.

Saving: after an epoch when `ckpt_save_interval` divides it (past `ckpt_skip_epochs`) or the best metric
improved, every `ckpt_every_n_iters` iterations, and on preemption. Every rank contributes its RNG and data
state; rank 0 copies the state (the loop's only stall) and a background thread writes the file, its info,
then the `last`/`best` pointers and ckpt.log, then applies the keep limit. At most one write is in flight; a
failed write is raised in the loop at the next iteration, and every earlier checkpoint stays intact.

Restoring (`ckpt_restart_mode` auto or required): rank 0 follows `last`; a checkpoint failing its checksum or
its load is reported and the previous one is tried; all ranks then load the chosen file. The keep limit only
deletes checkpoints of this run (its run id survives resumes), never the resumed-from or the best one.
"""
from __future__ import annotations

import glob
import hashlib
import json
import os
import threading
import time
import uuid
from typing import Any

from playground import distributed as dist_utils
from playground.checkpoint_files import (CheckpointError, append_log, info_path, list_checkpoints, load_state,
                                         read_info, read_pointer, save_state, set_pointer, sha256_of, write_info)
from playground.preemption import Preempted, Preemption
from playground.train_state import Snapshot, rank_state, restore, shared_state


class Checkpointer:
    def __init__(self, trainer: Any) -> None:
        self.trainer = trainer
        self.policy = trainer.opts["output"]
        self.log = trainer.log
        folder = self.policy["checkpoint_folder"] or os.path.join(trainer.run_dir, "checkpoints")
        self.folder = os.path.abspath(folder)
        self.run_id = uuid.uuid4().hex[:12]
        self.opts_hash = hashlib.sha256(json.dumps(trainer.opts, sort_keys=True).encode()).hexdigest()[:16]
        self.resumed_from: str | None = None
        self.last_path: str | None = None
        self.best_path: str | None = None
        self.best_value: float | None = None
        self.preemption = Preemption()
        self._snapshot = Snapshot()
        self._thread: threading.Thread | None = None
        self._error: BaseException | None = None
        self.last_stall_secs = 0.0

    # ------------------------------------------------------------------ restoring
    def restore(self) -> bool:
        """Resume per ckpt_restart_mode; True when a checkpoint was loaded. Every rank calls this."""
        mode = self.policy["ckpt_restart_mode"]
        if mode == "off":
            return False
        path, state = self._choose() if self.trainer.ctx.is_writer else (None, None)
        path = dist_utils.broadcast_from_writer(path)
        if path is None:
            if mode == "required":
                raise CheckpointError(f"output.ckpt_restart_mode is 'required' but {self.folder} holds no usable "
                                      "checkpoint (no 'last' pointer, or every candidate failed its check)")
            return False
        if state is None:
            state = load_state(path)
        restore(self.trainer, state, self.log)
        self.run_id, self.resumed_from, self.last_path = state["run_id"], path, path
        self.trainer.model_path = path
        self._restore_best()
        self.trainer.outputs.rewrite_records(self.trainer.book.records)
        self.log.info("resumed from %s (epoch %d, iteration %d of the epoch)", path, state["epoch"], state["epoch_iter"])
        if self.trainer.ctx.is_writer:
            append_log(self.folder, f"resumed from {os.path.basename(path)} (run {self.run_id})")
        return True

    def _choose(self) -> tuple[str | None, dict | None]:
        for stale in glob.glob(os.path.join(self.folder, ".*.tmp")):  # left by a write that was killed
            os.unlink(stale)
        last = read_pointer(self.folder, "last")
        if last is None:
            if list_checkpoints(self.folder):
                self.log.warning("%s has checkpoints but no 'last' pointer: starting from scratch (point 'last' at "
                                 "a checkpoint to resume from it)", self.folder)
            return None, None
        last_info = read_info(last) or {}
        position = (int(last_info.get("epoch", 1 << 30)), int(last_info.get("epoch_iter", 0)))
        older = [c.path for c in list_checkpoints(self.folder) if c.position < position and c.path != last]
        for path in [last, *older]:
            try:
                return path, self._verified(path)
            except CheckpointError as err:
                self.log.warning("%s; trying the previous checkpoint", err)
                append_log(self.folder, f"unusable {os.path.basename(path)}: {err}")
        return None, None

    def _verified(self, path: str) -> dict:
        info = read_info(path)
        if self.policy["ckpt_checksum"] and info and info.get("sha256"):
            actual = sha256_of(path)
            if actual != info["sha256"]:
                raise CheckpointError(f"checkpoint {path} fails its checksum (sha256 {actual[:12]}..., expected "
                                      f"{info['sha256'][:12]}...)")
        return load_state(path)

    def _restore_best(self) -> None:
        best = read_pointer(self.folder, "best")
        info = read_info(best) if best else None
        if info and info.get("run_id") == self.run_id and info.get("best_value") is not None:
            self.best_path, self.best_value = best, float(info["best_value"])

    # ------------------------------------------------------------------ saving
    def save_epoch(self, epochs_done: int) -> str | None:
        """Checkpoint after `epochs_done` epochs if the policy says so; return the path (all ranks)."""
        due, improved = dist_utils.broadcast_from_writer(self._epoch_due(epochs_done))
        if not due:
            return None
        path = self.trainer.gen_checkpoint_path(True, epochs_done)
        return self._save(path, epochs_done, 0, "epoch", improved)

    def after_iteration(self, epoch: int, iters_done: int) -> None:
        """Mid-epoch checkpoints (ckpt_every_n_iters) and preemption, at an iteration boundary."""
        trainer = self.trainer
        stop = self.preemption.should_stop(trainer.world_size, trainer.global_iter)
        every = self.policy["ckpt_every_n_iters"]
        if stop or (every and trainer.global_iter % every == 0 and iters_done < trainer.epoch_iterations):
            path = os.path.join(self.folder, f"model_checkpoint_epoch{epoch}_iter{iters_done}.pt")
            self.trainer.model_path = self._save(path, epoch, iters_done, "preemption" if stop else "iteration", False)
        if stop:
            self.finish()
            dist_utils.barrier()
            raise Preempted(self.preemption.signal_name or "a signal on another rank")

    def _epoch_due(self, n: int) -> tuple[bool, bool]:
        improved = self._best_improved()
        if n <= self.policy["ckpt_skip_epochs"]:
            return False, False
        interval = self.policy["ckpt_save_interval"]
        return improved or (interval > 0 and n % interval == 0), improved

    def _best_metric(self) -> tuple[str | None, str]:
        name = self.policy["ckpt_save_best_metric"]
        if not name:
            name = next((m["name"] for m in self.trainer.opts["output"]["metrics"] if not m["is_train"]), None)
        mode = self.policy["ckpt_save_best_mode"]
        if mode == "auto" and name:
            mode = "min" if ("loss" in name or "error" in name) else "max"
        return name, mode

    def _best_improved(self) -> bool:
        name, mode = self._best_metric()
        if not self.policy["ckpt_save_best"] or not name or not self.trainer.book.records:
            return False
        value = self.trainer.book.records[-1].get(name)
        if value is None:
            return False
        better = self.best_value is None or (value < self.best_value if mode == "min" else value > self.best_value)
        if better:
            self.best_value = value
        return better

    def _save(self, path: str, epoch: int, epoch_iter: int, kind: str, best: bool) -> str:
        trainer = self.trainer
        self.raise_pending_error()
        ranks = dist_utils.gather_to_writer(rank_state(trainer))
        if not trainer.ctx.is_writer:
            return path
        self._join()
        started = time.perf_counter()
        state = self._snapshot.copy(shared_state(trainer, epoch, epoch_iter))
        state["ranks"], state["run_id"] = ranks, self.run_id
        self.last_stall_secs = time.perf_counter() - started
        path = self._own_name(path)
        metric_name, _ = self._best_metric()
        last = trainer.book.records[-1] if trainer.book.records else {}
        info = {"format": state["format"], "file": os.path.basename(path), "kind": kind, "epoch": epoch,
                "epoch_iter": epoch_iter, "global_iter": trainer.global_iter, "run_id": self.run_id,
                "opts_hash": self.opts_hash, "metadata": self.policy["ckpt_metadata"],
                "metrics": {m: last.get(m) for m in trainer.metrics}, "best_metric": metric_name,
                "best_value": self.best_value if best else None}
        self._thread = threading.Thread(target=self._write, args=(path, state, info, best),
                                        name="playground-checkpoint-writer")
        self._thread.start()
        return path

    def _own_name(self, path: str) -> str:
        """Never overwrite another run's checkpoint: add this run's id to the name instead."""
        try:
            os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        except OSError as err:
            raise CheckpointError(f"could not write checkpoint {path}: cannot create its folder: {err}") from err
        info = read_info(path) if os.path.exists(path) else None
        if info is not None and info.get("run_id") not in (None, self.run_id):
            root, ext = os.path.splitext(path)
            self.log.warning("%s belongs to another run (%s); writing %s.%s%s instead", path, info["run_id"], root,
                             self.run_id, ext)
            return f"{root}.{self.run_id}{ext}"
        return path

    def _write(self, path: str, state: dict, info: dict, best: bool) -> None:
        try:
            started = time.perf_counter()
            size = save_state(path, state)
            if self.policy["ckpt_checksum"]:
                info["sha256"] = sha256_of(path)
            info.update(size=size, timestamp=time.time(), time=time.strftime("%Y-%m-%dT%H:%M:%S%z"))
            write_info(path, info)
            set_pointer(self.folder, "last", path)
            self.last_path = path
            if best:
                set_pointer(self.folder, "best", path)
                self.best_path = path
            append_log(self.folder, f"saved {os.path.basename(path)} ({info['kind']} checkpoint: epoch {info['epoch']}, "
                                    f"iteration {info['epoch_iter']}, {size / 1e6:.1f} MB, "
                                    f"{time.perf_counter() - started:.2f} s){' best' if best else ''}")
            self._apply_keep_limit()
        except CheckpointError as err:
            self._error = err
        except OSError as err:
            self._error = CheckpointError(f"could not finish checkpoint {path}: {err}. Earlier checkpoints are "
                                          "intact.")

    def _apply_keep_limit(self) -> None:
        limit = self.policy["ckpt_keep_limit"]
        mine = [c for c in list_checkpoints(self.folder) if c.info.get("run_id") == self.run_id]
        mine.sort(key=lambda c: c.info.get("timestamp", 0), reverse=True)
        protected = {self.resumed_from, self.best_path, self.last_path}
        for old in mine[limit:]:
            if old.path in protected:
                continue
            os.unlink(old.path)
            os.unlink(info_path(old.path))
            append_log(self.folder, f"deleted {os.path.basename(old.path)} (ckpt_keep_limit {limit})")

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


__all__ = ["Checkpointer", "CheckpointError", "Preempted"]

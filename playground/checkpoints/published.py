"""What a run has published in its checkpoint folder (`last`, `best`, the checkpoint it resumed from), and the one
sequence that publishes a new checkpoint once its state and info files are complete.

Both writers of checkpoint files call it: playground's Checkpointer (in its writer thread) and CANDLE's helper
(playground/candle/checkpoint.py), so both move the pointers, log and delete alike. The sequence: the `last`
pointer, the `best` pointer (for a best checkpoint), a `saved` line in ckpt.log, then the keep limit in its keep
mode. Before each of these writes the attempt's fence is checked (playground/restarts/fence.py): once a later
attempt holds the run folder, Fenced is raised and nothing more is written, no deletion included.

The module calls set_pointer, append_log and apply_keep_limit through its own namespace: the resume tests
(tests/playground/checkpoints/test_resume_chaos.py) place kill points on `playground.checkpoints.published.<name>`.
"""
from __future__ import annotations

import os
import time

from playground.checkpoints.files import append_log, set_pointer
from playground.checkpoints.keep import apply_keep_limit
from playground.restarts.fence import Fence


class PublishedCheckpoints:
    """The checkpoints of one run that its folder's pointers name, and the sequence that publishes another.

    `last`, `best` and `resumed_from` are paths (None until known); the keep limit never deletes them.
    `key_prefix` is where the keep keys live in what the user wrote ("output." in opts, "" in CANDLE's params),
    so ckpt.log names the key the user set.
    """

    def __init__(self, folder: str, fence: Fence, keep_limit: int, keep_mode: str = "linear",
                 key_prefix: str = "") -> None:
        self.folder, self.fence = folder, fence
        self.keep_limit, self.keep_mode, self.key_prefix = keep_limit, keep_mode, key_prefix
        self.resumed_from: str | None = None
        self.last: str | None = None
        self.best: str | None = None

    def adopt(self, path: str, state: dict) -> None:
        """Continue from checkpoint `path` (its loaded `state`): it is `last` and the one resumed from; the best
        file its state names becomes `best` when that file still exists."""
        self.resumed_from = self.last = path
        best_file = (state.get("best") or {}).get("file")
        best_path = os.path.join(self.folder, best_file) if best_file else None
        self.best = best_path if best_path and os.path.isfile(best_path) else None

    def best_entry(self, value: float | None, best_path: str | None) -> dict:
        """The `best` entry a checkpoint's state holds: the best value and the best file relative to the folder."""
        return {"value": value, "file": os.path.relpath(best_path, self.folder) if best_path else None}

    def publish(self, path: str, best: bool, run_id: str, described: str, size: int, started: float) -> None:
        """Publish the complete checkpoint `path` of run `run_id`: pointers, a ckpt.log line, the keep limit.

        `described` heads the log line's parenthesis ("epoch checkpoint: epoch 3"), `size` is the state file's
        bytes and `started` the perf_counter time the write began. Raises Fenced before the first write a later
        attempt forbids; what was published before stays (a resume reads only complete checkpoints).
        """
        name, check = os.path.basename(path), self.fence.check
        check(f"the 'last' pointer to {name}")
        set_pointer(self.folder, "last", path)
        self.last = path
        if best:
            check(f"the 'best' pointer to {name}")
            set_pointer(self.folder, "best", path)
            self.best = path
        check("ckpt.log")
        append_log(self.folder, f"saved {name} ({described}, {size / 1e6:.1f} MB, "
                                f"{time.perf_counter() - started:.2f} s){' best' if best else ''}")
        check("the deletions of the keep limit")
        apply_keep_limit(self.folder, run_id, self.keep_limit, {self.resumed_from, self.best, self.last},
                         self.keep_mode, self.key_prefix)

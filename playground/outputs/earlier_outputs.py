"""A run that starts without a checkpoint in a folder that already holds record points keeps them, moved aside.

metrics.jsonl must hold exactly this run's record points. When a run starts afresh (ckpt_restart_mode off, no
checkpoint yet after a kill, or none usable), the earlier run's metrics.jsonl, results.json and plots move to
`earlier/<UTC time>/` in the run folder, intact, and the new run writes its own.
"""
from __future__ import annotations

import logging
import os
import time

from playground.outputs.run_folder import RunFolder
from playground.restarts.fence import Fence


def set_aside_earlier_outputs(run_dir: str) -> str | None:
    """Move the earlier run's outputs under run_dir/earlier/<stamp>/; return that folder (None: nothing there)."""
    folder = RunFolder(run_dir)
    found = [path for path in (folder.metrics, folder.results) if os.path.isfile(path)]
    if not found:
        return None
    Fence.from_env(run_dir).check("the earlier outputs (moving them aside)")
    found += folder.plots()
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    target = folder.earlier(stamp)
    suffix = 1
    while os.path.exists(target):
        suffix += 1
        target = folder.earlier(f"{stamp}-{suffix}")
    os.makedirs(target)
    for path in found:
        os.replace(path, os.path.join(target, os.path.basename(path)))
    logging.getLogger("playground").info(
        "this run starts without a checkpoint: the earlier run's %s moved to %s",
        ", ".join(os.path.basename(p) for p in found), target)
    return target

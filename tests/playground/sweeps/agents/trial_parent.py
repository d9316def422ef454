"""A hook that writes the trial process's parent into its run folder (parent.json) before training: a trial the
agent started in a fresh interpreter is the agent's child; one forked from its trial server is a waiter's. Beside
it, torch's thread settings as the trial starts training, which must not depend on how it was started. While the
file named by TRIAL_PARENT_HOLD exists, the trial then waits before training (a test's moment to act)."""
from __future__ import annotations

import json
import os
import time

import torch

from playground.api import Hook


class TrialParent(Hook):
    def before_train(self) -> None:
        if self.trainer.rank != 0:
            return
        path = os.path.join(self.trainer.run_dir, "parent.json")
        with open(path + ".tmp", "w", encoding="utf-8") as handle:
            json.dump({"ppid": os.getppid(), "pid": os.getpid(), "threads": torch.get_num_threads(),
                       "interop_threads": torch.get_num_interop_threads()}, handle)
        os.replace(path + ".tmp", path)
        hold = os.environ.get("TRIAL_PARENT_HOLD")
        while hold and os.path.exists(hold):
            time.sleep(0.05)

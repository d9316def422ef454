"""Checkpoint paths as the original named them, joined properly: <checkpoint_folder>/model_checkpoint_epoch{N}.pt."""
from __future__ import annotations

import os


def gen_checkpoint_path(self, is_checkpoint, epoch):
    name = f"model_checkpoint_epoch{epoch}.pt" if is_checkpoint else "model_final.pt"
    return os.path.join(self.checkpointer.folder, name)

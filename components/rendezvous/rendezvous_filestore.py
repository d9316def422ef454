"""Ranks meet through a file on a folder every host can reach (the original Playground's rendezvous).

The file is `<distributed.rendezvous_path>/playground-<run id>.store`; the run id is the same on every host
(see playground/distribution/rendezvous.py), and each attempt of a run meets under its own prefix in that file, so a file
left behind by a killed attempt is never reused. A single-host run may leave the path empty: the file then
goes in the run folder.
"""
from __future__ import annotations

import os

import torch.distributed as dist

from playground.api import fresh_attempt_store, run_id

additional_definitions = [
    {"name": "distributed.rendezvous_path", "type": str, "default": "",
     "help": "Folder shared by every host for rendezvous_filestore; empty uses the run folder (one host only)."},
]


def validate_opts(opts: dict) -> list[str]:
    dist_opts = opts["distributed"]
    if dist_opts["num_shards"] > 1 and not dist_opts["rendezvous_path"]:
        return ["opts.distributed.rendezvous_path: rendezvous_filestore with num_shards > 1 needs a folder that "
                "every host can reach (a shared file system), e.g. --set distributed.rendezvous_path=/shared/rdzv"]
    return []


def gen_rendezvous_ctx(self, model, dataset, is_train):
    folder = self.opts["distributed"]["rendezvous_path"] or os.path.join(self.run_dir, "rendezvous")
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(os.path.abspath(folder), f"playground-{run_id(self.opts)}.store")
    store = dist.FileStore(path, self.world_size)
    return {"store": fresh_attempt_store(store, self.world_size, self.opts["distributed"]["collective_timeout"],
                                         where=path)}

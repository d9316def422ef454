"""The trainer's state as one unit: what it gives a checkpoint and how it continues from one (AnyExp's base).

The trainer composes its state from what its parts give: each network and optimizer (by name), the metrics book
(the record points so far), the meters (their states since the last point), each hook, each data stream's
position and this process's RNGs. The Checkpointer only stores what `state_dict` and `rank_state_dict` give and
returns it on resume; how the file lays the state out, and how older layouts are read, is state_layout.py.
Assumes the attributes AnyExp sets: train_model, test_model, book, hooks, log, device, rank, world_size, the
position counters and `wall_time()`.
"""
from __future__ import annotations

import torch

from playground.checkpoints.random_state import rng_state, set_rng_state
from playground.checkpoints import state_layout


class TrainerState:
    """The state methods of AnyExp: a checkpoint stores what these give and hands it back to load_state_dict."""

    def networks(self) -> dict[str, torch.nn.Module]:
        """The run's networks by the name their state is saved under: "model" (the bare network of the train
        model, else the test model's); a trainer with several networks returns each under its own name."""
        model = self.train_model or self.test_model
        return {state_layout.MODEL: model.module} if model is not None and model.module is not None else {}

    def optimizers(self) -> dict[str, torch.optim.Optimizer]:
        """The run's optimizers by name: "optimizer" (the train model's), or none in a run without training."""
        optimizer = self.train_model.optimizer if self.train_model is not None else None
        return {state_layout.OPTIMIZER: optimizer} if optimizer is not None else {}

    def state_dict(self, epoch: int, epoch_iter: int) -> dict:
        """The run's state at position (epoch, epoch_iter), the same on every rank (rank 0's is saved); it
        references live tensors, which the checkpointer copies before training continues."""
        return state_layout.with_first_layout_names({
            "models": {name: net.state_dict() for name, net in self.networks().items()},
            "optimizers": {name: opt.state_dict() for name, opt in self.optimizers().items()},
            "epoch": epoch, "epoch_iter": epoch_iter, "global_iter": self.global_iter,
            "epoch_iterations": self.epoch_iterations, "world_size": self.world_size, "lr": self.lr,
            "metrics": self.book.state_dict(), "hooks": self.hooks.state_dict(), "wall_time": self.wall_time(),
            "opts": self.opts})

    def rank_state_dict(self) -> dict:
        """This rank's own part: RNG states, data positions, and its meters' states since the last record point."""
        data = {role: getattr(self, role).batches.state_dict() for role in ("train_model", "test_model")
                if getattr(self, role) is not None and getattr(self, role).batches is not None}
        return {"rng": rng_state(self.device), "data": data, "meters": self.book.meters.state_dict()}

    def load_state_dict(self, state: dict) -> None:
        """Continue from a checkpoint's state (every rank loads the same file; each takes its part of `ranks`)."""
        state = state_layout.upgrade(state)
        self._load_networks(state["models"])
        for name, optimizer in self.optimizers().items():
            if state["optimizers"].get(name) is not None:
                optimizer.load_state_dict(state["optimizers"][name])
        if state["epoch_iterations"] != self.epoch_iterations:
            self.log.warning("the checkpoint was taken with %d iterations per epoch, this run has %d: the data "
                             "order continues by global batch, but epochs are counted differently",
                             state["epoch_iterations"], self.epoch_iterations)
        self.epoch, self.start_epoch_iter = state["epoch"], state["epoch_iter"]
        self.global_iter, self.lr = state["global_iter"], state["lr"]
        self.book.load_state_dict(state["metrics"], state["wall_time"])
        self.hooks.load_state_dict(state["hooks"], self.log)
        self._load_rank_state(state["ranks"], state["world_size"])

    def _load_networks(self, states: dict[str, dict]) -> None:
        for name, network in self.networks().items():
            try:
                network.load_state_dict(states.get(name, {}))
            except RuntimeError as err:
                raise RuntimeError(f"the checkpoint does not fit this network: {err}. Set output.ckpt_restart_mode "
                                   "to off, or use another checkpoint_folder, to start afresh.") from err

    def _load_rank_state(self, ranks: list[dict], world_size: int) -> None:
        if world_size != self.world_size:
            self.log.warning("the checkpoint was written by %d rank(s), this run has %d: the data continues from the "
                             "same global batch, but random states and meter sums belong to ranks, so the "
                             "continuation is not bitwise exact", world_size, self.world_size)
        # Data positions count global batches, the same on every rank: a rank the checkpoint lacks takes rank 0's.
        mine = ranks[self.rank] if self.rank < len(ranks) else {"data": ranks[0]["data"]}
        if "rng" in mine:
            set_rng_state(mine["rng"], self.device)
        if "meters" in mine:
            self.book.meters.load_state_dict(mine["meters"])
        for role, data in mine["data"].items():
            model = getattr(self, role, None)
            if model is not None and model.batches is not None:
                model.batches.load_state_dict(data)

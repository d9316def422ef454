"""The copy a checkpoint save takes (playground/checkpoints/snapshot.py): training cannot change it, its buffers
are reused, and an alias in the state stays one object."""
from __future__ import annotations

import torch

from playground.checkpoints.snapshot import Snapshot


def test_a_snapshot_is_a_copy_that_training_cannot_change_and_reuses_its_buffers():
    model = torch.nn.Linear(4, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    model(torch.ones(1, 4)).sum().backward()
    optimizer.step()
    snapshot = Snapshot()
    first = snapshot.copy({"model": model.state_dict(), "optimizer": optimizer.state_dict()})
    kept = {k: v.clone() for k, v in first["model"].items()}
    with torch.no_grad():
        model.weight.add_(1.0)                        # training goes on while the copy is being written
    assert all(torch.equal(first["model"][k], kept[k]) for k in kept)
    second = snapshot.copy({"model": model.state_dict(), "optimizer": optimizer.state_dict()})
    assert second["model"]["weight"].data_ptr() == first["model"]["weight"].data_ptr()
    assert torch.equal(second["model"]["weight"], model.weight)


def test_an_alias_in_the_state_is_copied_once_and_stays_an_alias():
    model = torch.nn.Linear(4, 2)
    weights = model.state_dict()
    copied = Snapshot().copy({"models": {"model": weights}, "model": weights})
    assert copied["model"] is copied["models"]["model"]
    assert torch.equal(copied["model"]["weight"], model.weight)

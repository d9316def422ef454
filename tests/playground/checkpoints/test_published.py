"""Publishing a complete checkpoint (playground/checkpoints/published.py), the one sequence playground's
checkpointer and CANDLE's helper share: pointers, ckpt.log, keep limit, each behind the attempt's fence."""
from __future__ import annotations

import os
import time

import pytest

from playground.checkpoints.files import read_pointer, save_state, write_completed_info
from playground.checkpoints.published import PublishedCheckpoints
from playground.restarts.fence import Fence, Fenced, create_claim

STEPS = ["the 'last' pointer", "the 'best' pointer", "ckpt.log", "the deletions of the keep limit"]


class ClaimedAtCheck(Fence):
    """Attempt 1's fence; the successor's claim-2 lands on disk just before the check numbered `claim_at`."""

    def __init__(self, run_dir: str, claim_at: int) -> None:
        super().__init__(run_dir, 1)
        self.claim_at, self.checks = claim_at, 0

    def check(self, what: str) -> None:
        self.checks += 1
        if self.checks == self.claim_at:
            create_claim(self.run_dir, 2)
        super().check(what)


def write_checkpoint(folder: str, epoch: int, run_id: str = "run1") -> str:
    """A complete checkpoint file of `run_id` with its info file, as the writers leave it before publishing."""
    path = os.path.join(folder, f"model_checkpoint_epoch{epoch}.pt")
    info = {"format": "playground-checkpoint", "version": 1, "file": os.path.basename(path), "epoch": epoch,
            "epoch_iter": 0, "run_id": run_id}
    save_state(path, {"epoch": epoch}, before_rename=lambda tmp, sha: write_completed_info(path, tmp, sha, info))
    return path


def epochs_on_disk(folder: str) -> list[int]:
    return sorted(int(n[len("model_checkpoint_epoch"):-3]) for n in os.listdir(folder) if n.endswith(".pt"))


def test_publishing_moves_last_and_best_logs_and_applies_the_keep_limit(tmp_path):
    folder = str(tmp_path)
    published = PublishedCheckpoints(folder, Fence(folder, None), keep_limit=1)
    for epoch in (1, 2, 3):
        published.publish(write_checkpoint(folder, epoch), epoch == 2, "run1", f"epoch checkpoint: epoch {epoch}",
                          1000, time.perf_counter())
    assert read_pointer(folder, "last").endswith("epoch3.pt") and read_pointer(folder, "best").endswith("epoch2.pt")
    assert epochs_on_disk(folder) == [2, 3]                   # epoch 1 fell to the limit; best and last are kept
    log = (tmp_path / "ckpt.log").read_text()
    assert "saved model_checkpoint_epoch2.pt (epoch checkpoint: epoch 2, 0.0 MB," in log
    assert "deleted model_checkpoint_epoch1.pt" in log


@pytest.mark.parametrize("claim_at", [1, 2, 3, 4], ids=STEPS)
def test_a_claim_landing_before_a_write_of_the_sequence_stops_it_there_deleting_nothing(tmp_path, claim_at):
    folder = str(tmp_path)
    for epoch in (1, 2):
        write_checkpoint(folder, epoch)
    published = PublishedCheckpoints(folder, ClaimedAtCheck(folder, claim_at), keep_limit=1)
    with pytest.raises(Fenced, match=f"not writing {STEPS[claim_at - 1]}"):
        published.publish(write_checkpoint(folder, 3), True, "run1", "epoch checkpoint: epoch 3", 1000,
                          time.perf_counter())
    assert epochs_on_disk(folder) == [1, 2, 3]                # a superseded attempt deletes nothing
    assert (read_pointer(folder, "last") is not None) == (claim_at > 1)
    assert (read_pointer(folder, "best") is not None) == (claim_at > 2)
    log = tmp_path / "ckpt.log"
    assert (log.exists() and "saved model_checkpoint_epoch3.pt" in log.read_text()) == (claim_at > 3)


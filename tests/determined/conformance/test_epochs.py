"""An epoch is the training loader's length as Determined's harness counts it (the chief's len(loader)): a pass's
short last batch counts, unless the loader drops it (drop_last); on several slots the per-slot batches are dealt
to the ranks in turn, so an epoch is ceil(batches / slots) steps. Determined's test_epoch_sync (2 slots, global
batch 2, 3 records: epochs of 2 batches), and the records each batch holds on 1 slot."""
from __future__ import annotations

import re

import pytest

from tests.determined.conformance.trial_runs import config, records, run_trial
from tests.determined.ranks import output

LINE = re.compile(r"rank (\d+) finished batch (\d+) in epoch (\d+) with records \[([\d, ]*)\]")


def batches(run_dir) -> dict[int, list[tuple[int, int, list[int]]]]:
    """Per rank, each batch's (batch index, epoch index, records) as train_batch was given them."""
    seen: dict[int, list] = {}
    for rank, batch, epoch, got in LINE.findall(output(run_dir)):
        seen.setdefault(int(rank), []).append((int(batch), int(epoch), [int(r) for r in got.split(", ") if r]))
    return seen


def hparams(dataset_len: int, global_batch: int, drop_last: bool = False, shuffle: bool = False) -> dict:
    return {"global_batch_size": global_batch, "dataset_len": dataset_len, "drop_last": drop_last,
            "shuffle": shuffle}


@pytest.mark.parametrize("dataset_len", [2, 3])
def test_epoch_sync_on_2_slots_counts_a_short_last_batch(tmp_path, dataset_len):
    """Determined's test_epoch_sync: 10 batches on 2 slots of 1 record; batch i is in epoch
    i // ceil(dataset_len / global batch) on every rank."""
    run_trial("records:RecordsTrial", tmp_path / "run", config(10, hparams=hparams(dataset_len, 2)), ranks=2)
    per_epoch = -(-dataset_len // 2)
    seen = batches(tmp_path / "run")
    for rank in (0, 1):
        assert [(b, e) for b, e, _ in seen[rank]] == [(b, b // per_epoch) for b in range(10)], seen
    # the per-slot batches of the endless passes (record 0, 1, 2, 0, 1, 2...) dealt in turn: rank r takes r, r + 2...
    stream = [r for rank_step in zip(seen[0], seen[1]) for _, _, got in rank_step for r in got]
    assert stream == [i % dataset_len for i in range(20)]


@pytest.mark.parametrize("drop_last, sizes", [(False, [4, 4, 2]), (True, [4, 4])])
def test_an_epoch_of_10_records_in_batches_of_4_is_3_batches_or_2_with_drop_last(tmp_path, drop_last, sizes):
    info = config(0, hparams=hparams(10, 4, drop_last=drop_last, shuffle=True))
    info["max_length"] = {"epochs": 2}
    run_trial("records:RecordsTrial", tmp_path / "run", info)
    seen = batches(tmp_path / "run")[0]
    assert [(b, e) for b, e, _ in seen] == [(b, b // len(sizes)) for b in range(2 * len(sizes))]
    assert [len(got) for _, _, got in seen] == sizes * 2
    for epoch in (0, 1):        # each epoch one shuffled pass over the records (less the dropped short batch)
        got = [r for _, e, records_ in seen if e == epoch for r in records_]
        assert len(set(got)) == len(got) == sum(sizes) and set(got) <= set(range(10))
    assert [got for _, e, got in seen if e == 0] != [got for _, e, got in seen if e == 1]    # reshuffled
    found = records(tmp_path / "run", "epoch")
    assert (found[-1]["iteration"], found[-1]["epochs"]) == (2 * len(sizes), 2.0)


def test_a_trial_continued_inside_an_epoch_trains_the_same_batches_short_one_included(tmp_path):
    """4 batches and a checkpoint (inside the second epoch of 3), then continued to 2 epochs: the batches of a
    run trained to 2 epochs at once, the short ones (2 records) where they were."""
    shuffled = hparams(10, 4, shuffle=True)
    run_trial("records:RecordsTrial", tmp_path / "cut", config(4, checkpoint=4, hparams=shuffled))
    longer = config(0, hparams=shuffled)
    longer["max_length"] = {"epochs": 2}
    run_trial("records:RecordsTrial", tmp_path / "cut", longer)
    assert "resumed from" in output(tmp_path / "cut")
    run_trial("records:RecordsTrial", tmp_path / "whole", longer)
    whole = batches(tmp_path / "whole")[0]
    assert batches(tmp_path / "cut")[0] == whole and [len(got) for _, _, got in whole] == [4, 4, 2] * 2

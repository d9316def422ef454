"""`--resume` matches a run folder by the hash of its resolved opts, also a folder an older version wrote."""
from __future__ import annotations

import copy

from playground.options.digest import opts_digest, same_experiment
from tests.playground.options.test_loader import resolve, smoke


def test_a_hosts_shard_id_does_not_change_the_hash():
    ours = resolve(("blob", smoke())).opts
    theirs = copy.deepcopy(ours)
    theirs["distributed"]["shard_id"] = 1
    assert opts_digest(theirs) == opts_digest(ours)


def test_opts_written_before_keys_were_added_are_the_same_experiment():
    ours = resolve(("blob", smoke())).opts
    older = copy.deepcopy(ours)   # what the version before early stopping and metric modes wrote
    del older["output"]["early_stopping"]
    for metric in older["output"]["metrics"]:
        del metric["mode"]
    assert opts_digest(older) != opts_digest(ours)
    assert same_experiment(ours, older)


def test_a_changed_value_or_an_added_key_away_from_its_default_is_another_experiment():
    ours = resolve(("blob", smoke())).opts
    changed = copy.deepcopy(ours)
    changed["epoch_iter"]["num_epochs"] += 1
    assert not same_experiment(ours, changed)
    with_stopping = copy.deepcopy(ours)
    with_stopping["output"]["early_stopping"] = {"metric": "test_loss", "mode": None, "patience": 3, "min_delta": 0}
    older = copy.deepcopy(ours)
    del older["output"]["early_stopping"]
    assert not same_experiment(with_stopping, older)

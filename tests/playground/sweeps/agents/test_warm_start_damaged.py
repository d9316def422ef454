"""`sweep continue` from a damaged checkpoint, or one whose pickle torch.load(weights_only=True) refuses, is refused
(exit 2, naming it) instead of a trial that would train from scratch while its warm_start.json says it continues;
the agent checks the linked file again before its first attempt, and fails the trial when it changed since."""
from __future__ import annotations

import hashlib
import json

from playground.cli import main
from playground.sweeps.agents.warm_start import link_checkpoint


def _finished_sweep(write_spec, tmp_path):
    """A sweep of one real `playground run` trial of one epoch: (spec, sweep folder, its checkpoint, the checkpoint's
    info file, the `sweep continue` command that continues it for a second epoch)."""
    spec = write_spec({"name": "single"}, {"epoch_iter.num_epochs": 1}, contract=False)
    sweep = tmp_path / "sweep"
    assert main(["sweep", "run", str(spec), "--sweep-dir", str(sweep), "--quiet"]) == 0
    checkpoint = sweep / "trials" / "t0000" / "checkpoints" / "model_checkpoint_epoch1.pt"
    continued = ["sweep", "continue", str(sweep), "t0000", "--set", "epoch_iter.num_epochs=2"]
    return spec, sweep, checkpoint, checkpoint.with_suffix(".json"), continued


def test_continue_from_a_cut_or_damaged_checkpoint_exits_2_naming_it(write_spec, tmp_path, capsys):
    _, sweep, checkpoint, info, continued = _finished_sweep(write_spec, tmp_path)
    whole, facts = checkpoint.read_bytes(), json.loads(info.read_text())

    checkpoint.write_bytes(whole[: len(whole) // 2])                       # cut by a full disk
    assert main(continued) == 2
    err = capsys.readouterr().err
    assert f"trial t0000's checkpoint {checkpoint} cannot be continued from" in err and "cut or overwritten" in err

    damaged = bytearray(whole)                                             # same size, bytes flipped in the middle
    damaged[len(whole) // 2: len(whole) // 2 + 64] = bytes(64)
    checkpoint.write_bytes(bytes(damaged))
    assert main(continued) == 2
    assert "fails its checksum (sha256" in capsys.readouterr().err      # the info file has the SHA-256
    info.write_text(json.dumps({**facts, "sha256": None}))               # a run with checksums off
    assert main(continued) == 2
    assert "fails its CRC" in capsys.readouterr().err                   # the zip archive's own check
    assert sorted(p.name for p in (sweep / "trials").iterdir()) == ["t0000"]   # nothing was added

    info.write_text(json.dumps(facts))
    checkpoint.write_bytes(whole)
    assert main(continued) == 0
    warm = json.loads((sweep / "trials" / "t0001" / "warm_start.json").read_text())["user_attrs"]["warm_start"]
    assert link_checkpoint(str(sweep / "trials" / "t0001"), warm) is None
    checkpoint.write_bytes(bytes(damaged))        # the linked file (a hard link: the same bytes) damaged since
    problem = link_checkpoint(str(sweep / "trials" / "t0001"), warm)
    assert problem is not None and "model_checkpoint_epoch1.pt" in problem


def _refused_by_weights_only(checkpoint, info) -> None:
    """Rewrite the checkpoint in place (its hard links see it too) holding an object whose pickle torch.load with
    weights_only=True refuses, and its info file to match (size, SHA-256): every byte-level check passes."""
    import fractions

    import torch
    state = torch.load(checkpoint, weights_only=True)
    state["note"] = fractions.Fraction(1, 3)
    torch.save(state, str(checkpoint))
    facts = json.loads(info.read_text())
    facts.update(size=checkpoint.stat().st_size, sha256=hashlib.sha256(checkpoint.read_bytes()).hexdigest())
    with open(info, "r+") as handle:                # in place: the linked info file is the same file
        handle.write(json.dumps(facts))
        handle.truncate()


def test_a_checkpoint_whose_pickle_weights_only_refuses_is_never_continued_from_scratch(write_spec, tmp_path, capsys):
    spec, sweep, checkpoint, info, continued = _finished_sweep(write_spec, tmp_path)
    whole, facts = checkpoint.read_bytes(), info.read_text()
    _refused_by_weights_only(checkpoint, info)
    assert main(continued) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    assert (f"trial t0000's checkpoint {checkpoint} cannot be continued from: its pickle is refused by "
            "torch.load(weights_only=True) (Unsupported global: GLOBAL fractions.Fraction)") in err, err
    assert sorted(p.name for p in (sweep / "trials").iterdir()) == ["t0000"]   # nothing was added

    # accepted whole, then changed in place before an agent started it: the trial fails, nothing is trained
    checkpoint.write_bytes(whole)
    info.write_text(facts)
    assert main(continued) == 0
    _refused_by_weights_only(checkpoint, info)
    capsys.readouterr()
    assert main(["sweep", "run", str(spec), "--sweep-dir", str(sweep)]) == 1
    err = capsys.readouterr().err
    assert "sweep done: 1 complete, 1 failed (t0001: see sweep status); exit code 1" in err
    trial = json.loads((sweep / "trials" / "t0001" / "trial.json").read_text())
    assert trial["state"] == "fail" and "has changed since `sweep continue` checked it" in trial["reason"], trial
    assert not (sweep / "trials" / "t0001" / "metrics.jsonl").exists()     # no run started from scratch

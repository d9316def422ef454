"""`sweep continue` from a damaged checkpoint is refused (exit 2, naming it) instead of a trial that would train
from scratch while its warm_start.json says it continues; the agent checks the linked file again before its
first attempt."""
from __future__ import annotations

import json

from playground.cli import main
from playground.sweeps.agents.warm_start import link_checkpoint


def test_continue_from_a_cut_or_damaged_checkpoint_exits_2_naming_it(write_spec, tmp_path, capsys):
    spec = write_spec({"name": "single"}, {"epoch_iter.num_epochs": 1}, contract=False)   # a real playground run
    sweep = tmp_path / "sweep"
    assert main(["sweep", "run", str(spec), "--sweep-dir", str(sweep), "--quiet"]) == 0
    checkpoint = sweep / "trials" / "t0000" / "checkpoints" / "model_checkpoint_epoch1.pt"
    info = checkpoint.with_suffix(".json")
    whole, facts = checkpoint.read_bytes(), json.loads(info.read_text())
    continued = ["sweep", "continue", str(sweep), "t0000", "--set", "epoch_iter.num_epochs=2"]

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

"""The job a rank does is handed to launch() (playground/launch/jobs.py, spawn.py): each spawned rank runs the
job it was given, with the opts resolved in the launching process, and no job travels in the environment."""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import tiny_opts

pytestmark = pytest.mark.slow


@dataclass(frozen=True)
class NoteTheRank:
    """A job of the test's own: each rank notes what it was given and trains nothing."""
    folder: str

    def run(self, trainer):
        note = {"rank": trainer.rank, "pid": os.getpid(), "seed": trainer.opts["model_param"]["seed"],
                "job_variables": sorted(k for k in os.environ if k in ("PLAYGROUND_PREDICT", "PLAYGROUND_TEST_MODE"))}
        Path(self.folder, f"rank{trainer.rank}.json").write_text(json.dumps(note))
        return None


def test_each_spawned_rank_runs_the_job_launch_was_given(tmp_path, monkeypatch):
    from playground.launch.prepare import prepare
    from playground.launch.spawn import launch

    monkeypatch.delenv("MASTER_ADDR", raising=False)     # launch() sets the loopback address for its ranks
    monkeypatch.delenv("MASTER_PORT", raising=False)
    opts = tiny_opts(model_param={"seed": 1234})
    opts["distributed"]["num_cpus"] = 2
    prepared = prepare([("test opts", opts)], run_dir=str(tmp_path / "run"))
    assert prepared.plan.topology.spawns

    assert launch(prepared, NoteTheRank(str(tmp_path))) == 0
    notes = [json.loads((tmp_path / f"rank{rank}.json").read_text()) for rank in (0, 1)]
    assert [n["rank"] for n in notes] == [0, 1]
    assert notes[0]["pid"] != notes[1]["pid"] != os.getpid()
    assert [n["seed"] for n in notes] == [1234, 1234]
    assert notes[0]["job_variables"] == notes[1]["job_variables"] == []
    assert not (tmp_path / "run" / "metrics.jsonl").exists()        # the job trained nothing

"""The sweep's module map and storage on every sweep command: `--module-map` after the action, recorded in
sweep.json and used by a later agent and its trials with no variable set; `--storage` on status, summary, plots
and continue."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from playground.cli import main
from tests.conftest import HANG, tiny_opts
from tests.playground.options.test_registry import LINEAR_FORWARD


def test_a_module_map_given_to_sweep_run_is_recorded_and_used_by_a_later_agent_and_its_trials(
        tmp_path, monkeypatch):
    monkeypatch.setenv("PLAYGROUND_MODULE_MAP", "")     # unset, and restored after whatever the sweep sets
    monkeypatch.setattr(sys, "path", list(sys.path))
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "linear_forward_of_a_sweeper.py").write_text(LINEAR_FORWARD.format(doc="A user's model.", key="mine_width"))
    user_map = mine / "my_map.py"     # not module_map.py beside the base: found only through --module-map
    user_map.write_text("MODULE_MAP = {'my_linear': 'linear_forward_of_a_sweeper'}\n")
    opts = tiny_opts(model={"forward_pass_py": "my_linear"})
    opts["epoch_iter"]["num_epochs"] = 1
    (tmp_path / "base.json").write_text(json.dumps({"opts": opts}))
    (tmp_path / "spec.json").write_text(json.dumps({
        "name": "mine", "base": "base.json", "objective": {"metric": "test_loss", "mode": "min"},
        "searcher": {"name": "single"}, "space": {"model_param.mine_width": 5}}))   # a key of the user's component
    sweep = tmp_path / "sweep"
    assert main(["sweep", "run", str(tmp_path / "spec.json"), "--sweep-dir", str(sweep), "--quiet",
                 "--module-map", str(user_map)]) == 0
    assert json.loads((sweep / "sweep.json").read_text())["module_map"] == str(user_map)
    assert json.loads((sweep / "trials" / "t0000" / "opts.json").read_text())["module_map"] == str(user_map)

    monkeypatch.setenv("PLAYGROUND_MODULE_MAP", "")     # a new shell: no map given, the recorded one is used
    assert main(["sweep", "continue", str(sweep), "t0000", "--set", "epoch_iter.num_epochs=2"]) == 0
    env = {k: v for k, v in os.environ.items() if k != "PLAYGROUND_MODULE_MAP"}
    done = subprocess.run([sys.executable, "-m", "playground", "sweep", "agent", str(sweep), "--quiet"],
                          env=env, capture_output=True, text=True, timeout=HANG)
    assert done.returncode == 0, done.stderr
    trial = json.loads((sweep / "trials" / "t0001" / "trial.json").read_text())
    assert trial["state"] == "complete", (sweep / "trials" / "t0001" / "sweep-trial.log").read_text()[-2000:]
    assert json.loads((sweep / "trials" / "t0001" / "opts.json").read_text())["module_map"] == str(user_map)


def test_a_recorded_module_map_that_is_gone_is_refused_naming_it(tmp_path, monkeypatch, write_spec, capsys):
    monkeypatch.setenv("PLAYGROUND_MODULE_MAP", "")
    sweep = tmp_path / "sweep"
    spec = write_spec({"name": "random", "max_trials": 1}, {"epoch_iter.num_epochs": 1})
    assert main(["sweep", "run", str(spec), "--sweep-dir", str(sweep), "--quiet"]) == 0
    data = json.loads((sweep / "sweep.json").read_text())
    (sweep / "sweep.json").write_text(json.dumps({**data, "module_map": str(tmp_path / "gone.py")}))
    assert main(["sweep", "agent", str(sweep), "--quiet"]) == 2
    assert f"the sweep's module map {tmp_path / 'gone.py'} is gone" in capsys.readouterr().err


@pytest.mark.parametrize("command", [["status"], ["summary"], ["plots"], ["continue", "--set",
                                                                          "epoch_iter.num_epochs=2"]])
def test_storage_is_taken_by_status_summary_plots_and_continue(tmp_path, write_spec, capsys, command):
    sweep = tmp_path / "sweep"
    spec = write_spec({"name": "random", "max_trials": 1}, {"epoch_iter.num_epochs": 1})
    assert main(["sweep", "run", str(spec), "--sweep-dir", str(sweep), "--quiet"]) == 0
    action, *rest = command
    where = [str(sweep), "t0000"] if action == "continue" else [str(sweep)]
    assert main(["sweep", action, *where, *rest, "--storage", "postgresql://ann@127.0.0.1:9/db"]) == 2
    assert "cannot move to postgresql://ann@127.0.0.1:9/db" in capsys.readouterr().err
    assert main(["sweep", action, *where, *rest, "--storage", "journal"]) == 0

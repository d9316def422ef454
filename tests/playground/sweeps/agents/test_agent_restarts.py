"""The sweep's restart policy end to end (agent.py with playground/restarts/policy.py): a failed attempt is run
again in its own folder while the sweep-wide max_restarts lasts, exit 75 is continued for free, and a
log-policy match (CUDA out of memory) cancels the retries. The trials are the contract trial program."""
from __future__ import annotations

import json

from playground.cli import main
from playground.sweeps.files.sweep_folder import SweepFolder

ONE_POINT = {"model_param.base_learning_rate": 0.1, "epoch_iter.num_epochs": 3}


def _run(write_spec, base_file, tmp_path, knobs: dict, max_restarts: int, code: int = 0) -> SweepFolder:
    """The sweep of ONE_POINT run to its end with `knobs` in the base opts; exit code `code` (1: its trial failed)."""
    opts = json.loads(base_file.read_text())
    opts["opts"]["model_param"].update(knobs)
    base_file.write_text(json.dumps(opts))
    spec = write_spec({"name": "single"}, ONE_POINT, max_restarts=max_restarts)
    sweep = tmp_path / "sweep"
    assert main(["sweep", "run", str(spec), "--sweep-dir", str(sweep), "--quiet"]) == code
    return SweepFolder(str(sweep))


def _ended(folder: SweepFolder) -> list[dict]:
    return [a for a in folder.read_attempts("t0000") if "end" in a]


def test_a_trial_failing_its_first_two_attempts_completes_with_max_restarts_5(write_spec, base_file, tmp_path):
    folder = _run(write_spec, base_file, tmp_path, {"contract_fail_attempts": 2}, max_restarts=5)
    trial = folder.read_trial("t0000")
    assert trial["state"] == "complete" and trial["restarts_used"] == 2
    ended = _ended(folder)
    assert [a["exit_code"] for a in ended] == [1, 1, 0]
    assert [a["restart_consumed"] for a in ended] == [True, True, False]
    assert "restart 2 of max_restarts 5" in ended[1]["reason"]
    # every attempt ran in the trial's one folder; the third trained all 3 epochs there
    records = [json.loads(line) for line in open(folder.trial_dir("t0000") + "/metrics.jsonl")]
    assert [r["epoch"] for r in records if r["kind"] == "epoch"] == [0, 1, 2]


def test_the_same_trial_ends_failed_with_max_restarts_1(write_spec, base_file, tmp_path):
    folder = _run(write_spec, base_file, tmp_path, {"contract_fail_attempts": 2}, max_restarts=1, code=1)
    trial = folder.read_trial("t0000")
    assert trial["state"] == "fail" and trial["restarts_used"] == 1
    ended = _ended(folder)
    assert [a["exit_code"] for a in ended] == [1, 1]
    assert "no restarts left (max_restarts 1 used)" in ended[-1]["reason"]
    assert "no restarts left" in trial["reason"]


def test_exit_75_is_continued_without_consuming_the_restart_budget(write_spec, base_file, tmp_path):
    folder = _run(write_spec, base_file, tmp_path, {"contract_preempt_attempts": 2}, max_restarts=0)
    trial = folder.read_trial("t0000")
    assert trial["state"] == "complete" and trial["restarts_used"] == 0
    ended = _ended(folder)
    assert [a["exit_code"] for a in ended] == [75, 75, 0]
    assert not any(a["restart_consumed"] for a in ended)
    assert "costing no restart" in ended[0]["reason"]
    # each preempted attempt resumed from its checkpoint: one epoch per attempt, none trained twice
    records = [json.loads(line) for line in open(folder.trial_dir("t0000") + "/metrics.jsonl")]
    assert [r["epoch"] for r in records if r["kind"] == "epoch"] == [0, 1, 2]


def test_the_out_of_memory_log_policy_cancels_the_retries(write_spec, base_file, tmp_path):
    folder = _run(write_spec, base_file, tmp_path, {"contract_oom": True}, max_restarts=5, code=1)
    trial = folder.read_trial("t0000")
    assert trial["state"] == "fail" and trial["restarts_used"] == 0
    ended = _ended(folder)
    assert len(ended) == 1 and ended[0]["exit_code"] == 1 and ended[0]["retry"] is False
    assert "log policy 'CUDA out of memory' cancelled its retries" in ended[0]["reason"]

"""A failure in an agent's slot ends `sweep run` non-zero with one message naming what and where, after the other
running trials were stopped with a checkpoint; nothing already written is lost and a re-run finishes the sweep.

The failures are real: a full disk (trial t0001's folder a 1 MiB tmpfs in a user and mount namespace of its own,
`unshare -rm`, filled while both trials train, t0000's folder on the ordinary disk; or the sweep folder full
from the start), and a trial program that cannot start.
"""
from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys

import pytest

from tests.conftest import HANG, REPO
from tests.playground.sweeps.agents.test_agent import _contract

EPOCHS = 8

# runs inside the namespace: $1 sweep folder, $2 spec, $3 where to copy t0001's folder before the tmpfs goes
SCRIPT = r"""
set -u
sweep=$1; spec=$2; out=$3; py=$4
mkdir -p "$sweep/trials/t0001" && mount -t tmpfs -o size=1m tmpfs "$sweep/trials/t0001" || exit 97
"$py" -m playground sweep run "$spec" --sweep-dir "$sweep" --workers 2 > "$out/run1.log" 2>&1 &
run=$!
for t in t0000 t0001; do
    until [ -f "$sweep/trials/$t/checkpoint.json" ]; do sleep 0.05; done
done
cat /dev/zero > "$sweep/trials/t0001/filler" 2>/dev/null       # the disk is full
wait $run; echo $? > "$out/rc1"
cp -a "$sweep/trials/t0001" "$out/t0001-after-failure"
rm "$sweep/trials/t0001/filler"                                   # space again
"$py" -m playground sweep run "$spec" --sweep-dir "$sweep" --workers 2 > "$out/run2.log" 2>&1; echo $? > "$out/rc2"
cp -a "$sweep/trials/t0001" "$out/t0001-final"
"""


def _namespaces_work() -> str | None:
    if not shutil.which("unshare"):
        return "no unshare binary"
    done = subprocess.run(["unshare", "-rm", "sh", "-c", "d=$(mktemp -d) && mount -t tmpfs -o size=64k tmpfs $d"
                           " && umount $d && rmdir $d"], capture_output=True, text=True)
    return None if done.returncode == 0 else f"unshare -rm cannot mount a tmpfs here: {done.stderr.strip()}"


def test_a_full_disk_in_one_slot_ends_the_sweep_with_exit_1_and_one_message_after_the_other_trial_checkpointed(
        write_spec, base_file, tmp_path):
    reason = _namespaces_work()
    if reason:
        pytest.skip(reason)
    _contract(base_file, contract_epoch_seconds=0.3)
    spec = write_spec({"name": "grid"}, {"model_param.base_learning_rate": {"type": "categorical",
                                                                            "vals": [0.1, 0.01]},
                                         "epoch_iter.num_epochs": EPOCHS})
    sweep, out = tmp_path / "sweep", tmp_path / "out"
    out.mkdir()
    done = subprocess.run(["unshare", "-rm", "sh", "-c", SCRIPT, "sh", str(sweep), str(spec), str(out),
                           sys.executable], cwd=REPO, capture_output=True, text=True, timeout=HANG)
    assert done.returncode == 0, done.stderr
    log = (out / "run1.log").read_text()
    assert (out / "rc1").read_text().strip() == "1", log
    assert "Traceback" not in log, log
    errors = [line for line in log.splitlines() if "No space left on device" in line]
    assert len(errors) == 1, log                                  # one message ...
    assert "t0001" in errors[0] and "slot" in errors[0], errors    # ... naming what and where
    # the other trial was stopped through SIGTERM and wrote a checkpoint, before the agent exited (exit 75; or
    # -15 when the agent's second SIGTERM lands in its interpreter's shutdown, after the checkpoint)
    first = [json.loads(line) for line in (sweep / "trials" / "t0000" / "attempts.jsonl").read_text().splitlines()]
    assert first[1]["exit_code"] in (75, -15) and first[1]["end"] < first[2]["start"], first
    stopped = re.search(r"contract trial: SIGTERM at \S+ in epoch \d+, stopped after epoch (\d+)",
                        (sweep / "trials" / "t0000" / "sweep-trial.log").read_text())
    assert stopped and int(stopped.group(1)) < EPOCHS
    assert f"after {stopped.group(1)} epoch(s)" in (sweep / "trials" / "t0000" / "sweep-trial.log").read_text()
    # no empty claim left behind on the full disk; the checkpoint written before it filled is intact
    failed = out / "t0001-after-failure"
    assert all(json.loads(claim.read_text()) for claim in failed.glob("claim-*")), list(failed.iterdir())
    kept = json.loads((failed / "checkpoint.json").read_text())["epochs_done"]
    assert kept >= 1
    # with space again, the same command finishes both trials, each resumed from its own checkpoint
    assert (out / "rc2").read_text().strip() == "0", (out / "run2.log").read_text()
    for folder in (sweep / "trials" / "t0000", out / "t0001-final"):
        assert json.loads((folder / "trial.json").read_text())["state"] == "complete"
        epochs = [json.loads(line)["epoch"] for line in (folder / "metrics.jsonl").read_text().splitlines()]
        assert epochs == [e for e in range(EPOCHS) for _ in ("interval", "epoch")]
        assert "resumed from" in (folder / "sweep-trial.log").read_text()
    assert f"after {kept} epoch(s)" in (out / "t0001-final" / "sweep-trial.log").read_text()


FULL_FROM_THE_START = r"""
sweep=$1; spec=$2; out=$3; py=$4
mkdir -p "$sweep" && mount -t tmpfs -o size=64k tmpfs "$sweep" || exit 97
cat /dev/zero > "$sweep/filler" 2>/dev/null
"$py" -m playground sweep run "$spec" --sweep-dir "$sweep" > "$out/run.log" 2>&1; echo $? > "$out/rc"
"""


def test_a_full_disk_before_any_trial_is_one_line_and_exit_1_not_a_traceback(write_spec, tmp_path):
    reason = _namespaces_work()
    if reason:
        pytest.skip(reason)
    spec = write_spec({"name": "random", "max_trials": 2}, {"model_param.base_learning_rate": {
        "type": "double", "minval": 0.01, "maxval": 0.1}, "epoch_iter.num_epochs": 1})
    out = tmp_path / "out"
    out.mkdir()
    done = subprocess.run(["unshare", "-rm", "sh", "-c", FULL_FROM_THE_START, "sh", str(tmp_path / "sweep"),
                           str(spec), str(out), sys.executable], cwd=REPO, capture_output=True, text=True,
                          timeout=HANG)
    assert done.returncode == 0, done.stderr
    log = (out / "run.log").read_text()
    assert (out / "rc").read_text().strip() == "1" and "Traceback" not in log, log
    assert len(log.strip().splitlines()) == 1 and "No space left on device" in log, log


def test_a_trial_program_that_cannot_start_ends_the_sweep_with_exit_1_naming_it_and_the_trial(
        write_spec, tmp_path, capsys):
    """Not a storage error, not the disk: an error in a slot of any kind, here the trial program is missing."""
    from playground.cli import main
    spec = write_spec({"name": "grid"}, {"model_param.base_learning_rate": {"type": "categorical",
                                                                            "vals": [0.1, 0.01]},
                                         "epoch_iter.num_epochs": 1},
                      contract=False, trial_program=[str(tmp_path / "no-such-program")])
    sweep = tmp_path / "sweep"
    assert main(["sweep", "run", str(spec), "--sweep-dir", str(sweep), "--quiet"]) == 1
    err = capsys.readouterr().err
    failed = [line for line in err.splitlines() if line.startswith("sweep failed:")]
    assert len(failed) == 1 and "Traceback" not in err, err
    assert "FileNotFoundError" in failed[0] and "no-such-program" in failed[0] and "on trial t0000" in failed[0]
    trial = json.loads((sweep / "trials" / "t0000" / "trial.json").read_text())
    assert trial["state"] == "interrupted"        # released: the next agent takes it at once, nothing is lost

"""What a run leaves in its folder (playground/outputs/run_outputs.py, run_log.py): results.json's best values; a
full disk during a metrics append or a train.log line is one line, the file left whole, and the same command
resumes."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from playground.api import run
from tests.conftest import HANG, REPO, tiny_opts

SEEN_METER = '''
"""test_seen_loss: how many test samples were added since the last record point (lower is "better")."""
from playground.trainer.meters import Meter


class CountSeen(Meter):
    def Add(self, blobs):
        self.total = self.total + blobs["label"].shape[0]
        self.count = 1.0
'''


def test_best_values_come_only_from_full_test_passes(tmp_path, monkeypatch):
    (tmp_path / "seen_meter.py").write_text(SEEN_METER)
    monkeypatch.syspath_prepend(str(tmp_path))
    opts = tiny_opts()
    opts["output"]["metrics"].append({"name": "test_seen_loss", "meter_py": "seen_meter.CountSeen",
                                      "meter_kargs": {}, "is_train": False})
    run(opts, run_dir=str(tmp_path / "run"))
    results = json.loads((tmp_path / "run" / "results.json").read_text())
    records = [json.loads(line) for line in (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()]
    # one test batch of 16 at each interval point, the whole test set of 40 at each end of epoch
    assert {r["test_seen_loss"] for r in records if r["kind"] == "interval"} == {16}
    best = results["best"]["test_seen_loss"]
    assert best["value"] == 40 and records[best["index"]]["kind"] == "epoch"
    full = [r for r in records if r["kind"] == "epoch"]
    assert results["best"]["test_accuracy_top1"]["value"] == max(r["test_accuracy_top1"] for r in full)


# a hook that fills the run folder's disk (a tmpfs gives space by pages) just after an interval record point whose
# successor is one too (no checkpoint is written between them), so that the next write to the file FILL_AT names is
# the one that hits it, while the other file still takes its line. train.log's line (the progress hook logs it) is
# written before metrics.jsonl's. For train.log the hook first logs a padding line that leaves its page too little
# room for any line; for metrics.jsonl it waits for a point where the next record needs a new page and train.log's
# line has room (a record's length moves by a few characters from one point to the next: samples/s, the losses).
FILL_DISK_HOOK = '''
import json, logging, os
from playground.api import Hook
from playground.trainer.progress import format_record

STAMP = "2024-01-01 00:00:00,000 INFO "    # train.log's asctime and level before each message
ROOM_LEFT = 16                              # what the padding leaves of train.log's page: less than any line


class FillDisk(Hook):
    def after_record(self, record):
        run_dir, filler = self.trainer.run_dir, os.environ.get("FILL")
        slack = lambda name: -os.path.getsize(os.path.join(run_dir, name)) % 4096
        if not filler or os.path.exists(filler) or not os.path.exists(os.path.join(run_dir, "metrics.jsonl")):
            return      # not asked to, filled already, or no record written yet
        if record["kind"] != "interval" or record["epochs"] % 1 == 0:
            return      # the next output may be the epoch's record or a checkpoint, not this kind of record point
        log_line = len(STAMP) + len(format_record(record)) + 1
        if os.environ["FILL_AT"] == "train.log":
            pad = slack("train.log") - ROOM_LEFT - len(STAMP) - 1
            if pad > 0:
                logging.getLogger("playground").info("-" * pad)
            elif slack("train.log") > log_line // 2:
                return  # too little room to pad, too much to be sure the next line overflows: the next point
        elif not (len(json.dumps(record)) - 48 > slack("metrics.jsonl") and log_line + 64 < slack("train.log")):
            return
        with open(filler, "wb", buffering=0) as handle:
            try:
                while True:
                    handle.write(bytes(4096))
            except OSError:
                pass
'''

FULL_DISK = r"""
set -u
disk=$1; out=$2; shift 2
mount -t tmpfs -o size=8m tmpfs "$disk" || exit 97
FILL="$disk/filler" "$@" --run-dir "$disk/run" > "$out/run1.log" 2>&1; echo $? > "$out/rc1"
test -f "$disk/filler" || exit 98
cp "$disk/run/metrics.jsonl" "$out/metrics-after-failure.jsonl"
cp "$disk/run/train.log" "$out/train-after-failure.log"
rm "$disk/filler"
"$@" --run-dir "$disk/run" > "$out/run2.log" 2>&1; echo $? > "$out/rc2"
cp "$disk/run/metrics.jsonl" "$out/metrics-final.jsonl"
"""


def full_disk_then_space(tmp_path, fill_at: str) -> tuple[str, list[str]]:
    """A run whose disk (a real tmpfs) fills just before `fill_at` (metrics.jsonl or train.log) gets a record
    point's line; it must fail with exit 1 and one line, leave both files with whole lines, and the same command,
    with space again, must resume and end with every record point once. (The failed run's last line, the
    metrics.jsonl lines it left.)"""
    from tests.playground.sweeps.agents.test_slot_failures import _namespaces_work
    reason = _namespaces_work()
    if reason:
        pytest.skip(reason)
    (tmp_path / "fill_disk_hook.py").write_text(FILL_DISK_HOOK)
    opts = tiny_opts(model={"hooks_py": ["fill_disk_hook"]})
    opts["epoch_iter"].update(num_epochs=12, num_train_iteration_per_test=1)
    opts["output"]["progress"] = "log"    # a line per record point in train.log
    (tmp_path / "opts.json").write_text(json.dumps({"opts": opts}))
    disk, out = tmp_path / "disk", tmp_path / "out"
    disk.mkdir()
    out.mkdir()
    command = [sys.executable, "-m", "playground", "run", "--parameters-file", str(tmp_path / "opts.json")]
    done = subprocess.run(["unshare", "-rm", "sh", "-c", FULL_DISK, "sh", str(disk), str(out), *command],
                          cwd=tmp_path, env=dict(os.environ, PYTHONPATH=f"{tmp_path}:{REPO}", FILL_AT=fill_at),
                          capture_output=True, text=True, timeout=HANG)
    assert done.returncode == 0, done.stderr
    log = (out / "run1.log").read_text()
    assert (out / "rc1").read_text().strip() == "1", log
    assert "Traceback" not in log and "Logging error" not in log, log
    # each file as it was before the failed write: whole lines only
    kept = (out / "metrics-after-failure.jsonl").read_text()
    assert kept.endswith("\n") and [json.loads(line)["index"] for line in kept.splitlines()] == list(
        range(kept.count("\n")))
    train_log = (out / "train-after-failure.log").read_text()
    assert train_log.endswith("\n") and all(line[:4].isdigit() for line in train_log.splitlines()), train_log
    # space again: the same command resumes from the last checkpoint and ends with every record point, once each
    assert (out / "rc2").read_text().strip() == "0", (out / "run2.log").read_text()
    records = [json.loads(line) for line in (out / "metrics-final.jsonl").read_text().splitlines()]
    assert [r["index"] for r in records] == list(range(len(records))) and records[-1]["epoch"] == 11
    assert len(records) > kept.count("\n")
    return log.strip().splitlines()[-1], kept.splitlines()


def test_a_full_disk_during_a_metrics_append_is_one_line_and_the_same_command_resumes(tmp_path):
    error, _ = full_disk_then_space(tmp_path, "metrics.jsonl")
    disk = tmp_path / "disk"
    assert error.startswith(f"playground: error: could not append a record to {disk}/run/metrics.jsonl: No space "
                            "left on device. The records before it and the last checkpoint are intact"), error


def test_a_full_disk_during_a_train_log_line_is_one_line_and_the_same_command_resumes(tmp_path):
    error, kept = full_disk_then_space(tmp_path, "train.log")
    disk = tmp_path / "disk"
    assert error == (f"playground: error: could not append a line to {disk}/run/train.log: No space left on device. "
                     "The records before it and the last checkpoint are intact; free space, then re-run the same "
                     "command to resume from that checkpoint.")
    # the run stopped at the record point whose line train.log lost: metrics.jsonl has no record past it
    logged = [line for line in (tmp_path / "out" / "train-after-failure.log").read_text().splitlines()
              if " INFO epoch " in line]
    assert len(logged) == len(kept)

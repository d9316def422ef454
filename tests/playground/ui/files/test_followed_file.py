"""A followed file is read once: each poll reads only what was appended, holds back a line still being written,
starts again from the top when the file is replaced (the atomic rewrite of a resumed run), and reads NaN as None."""
from __future__ import annotations

import os

from playground.ui.files.followed_file import FollowedFile, FollowedLog, FollowedRecords, JsonFile


def append(path, text: str) -> None:
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(text)


def test_each_poll_reads_only_what_was_appended_and_holds_back_an_unfinished_line(tmp_path):
    path = tmp_path / "metrics.jsonl"
    followed = FollowedFile(str(path))
    assert followed.poll().text == ""                      # absent: nothing
    append(path, "one\ntw")
    assert followed.poll().text == "one\n"
    assert followed.poll().text == ""                      # unchanged: not read again
    append(path, "o\nthree\n")
    got = followed.poll()
    assert (got.restarted, got.text) == (False, "two\nthree\n")
    assert followed._offset == os.path.getsize(path)      # every byte read once


def test_a_replaced_file_is_read_again_from_its_start(tmp_path):
    path = tmp_path / "metrics.jsonl"
    path.write_text('{"index": 0}\n{"index": 1}\n{"index": 2}\n')
    records = FollowedRecords(str(path))
    assert records.poll() and [r["index"] for r in records.records] == [0, 1, 2]
    replacement = tmp_path / "metrics.jsonl.tmp"
    replacement.write_text('{"index": 0}\n{"index": 1}\n')
    os.replace(replacement, path)                          # a resumed run rewrites its records atomically
    assert records.poll() and [r["index"] for r in records.records] == [0, 1] and records.generation == 1
    append(path, '{"index": 2, "test_loss": NaN}\nnot json\n')
    assert records.poll() and records.records[-1] == {"index": 2, "test_loss": None}


def test_a_log_starts_at_its_tail_on_a_line_boundary_and_hands_out_lines_after_the_last_seen(tmp_path):
    path = tmp_path / "train.log"
    path.write_text("".join(f"line {i}\n" for i in range(1000)))
    log = FollowedLog(str(path), keep=50, tail=100)
    log.poll()
    last, lines = log.since(0)
    assert lines[-1] == "line 999" and all(line.startswith("line ") for line in lines) and len(lines) < 20
    append(path, "line 1000\n")
    log.poll()
    assert log.since(last) == (last + 1, ["line 1000"])


def test_a_json_file_is_read_again_only_when_it_changed(tmp_path):
    path = tmp_path / "trial.json"
    value = JsonFile(str(path))
    assert not value.poll() and value.value is None
    path.write_text('{"state": "running"}')
    assert value.poll() and value.value == {"state": "running"}
    assert not value.poll()
    path.write_text('{"state": "comp')                      # half written: the last good value stays
    assert not value.poll() and value.value == {"state": "running"}

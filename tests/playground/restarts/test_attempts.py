"""attempts.jsonl and the attempt numbers (playground/restarts/attempts.py) agree with the claim files."""
from __future__ import annotations

import json
import socket

from playground.restarts.attempts import append_attempt, next_attempt, read_attempts, restarts_used
from playground.restarts.fence import create_claim, read_claim


def test_next_attempt_counts_started_attempts_and_claims_whose_agent_died_before_its_first_line(tmp_path):
    run_dir = str(tmp_path)
    assert next_attempt(run_dir) == 1
    append_attempt(run_dir, {"attempt": 1, "start": 1.0})
    append_attempt(run_dir, {"attempt": 1, "start": 1.0, "end": 2.0, "exit_code": 1})
    assert next_attempt(run_dir) == 2
    assert create_claim(run_dir, 2) and create_claim(run_dir, 3)   # the agent of claim-3 was killed at once
    assert next_attempt(run_dir) == 4
    assert not create_claim(run_dir, 3)                           # someone else holds it: never taken twice


def test_an_attempt_names_its_host_by_the_host_id_agents_use_with_the_hostname_beside_it(tmp_path, monkeypatch):
    monkeypatch.setenv("PLAYGROUND_HOST_ID", "node-b")
    append_attempt(str(tmp_path), {"attempt": 1, "start": 1.0})
    assert create_claim(str(tmp_path), 1)
    line = json.loads((tmp_path / "attempts.jsonl").read_text())
    assert line["host"] == "node-b" == read_claim(str(tmp_path), 1)["host"]
    assert line["hostname"] == socket.gethostname()


def test_attempts_files_written_before_the_host_id_are_still_read(tmp_path):
    old = [{"host": "login1", "pid": 7, "attempt": 1, "start": 1.0},
           {"host": "login1", "pid": 7, "attempt": 1, "start": 1.0, "end": 2.0, "exit_code": 1,
            "restart_consumed": True}]
    (tmp_path / "attempts.jsonl").write_text("".join(json.dumps(line) + "\n" for line in old))
    assert read_attempts(str(tmp_path)) == old
    assert restarts_used([str(tmp_path)]) == 1 and next_attempt(str(tmp_path)) == 2


def test_a_line_cut_by_a_kill_is_ended_before_the_next_append_so_the_next_attempt_still_counts(tmp_path):
    run_dir = str(tmp_path)
    append_attempt(run_dir, {"attempt": 1, "start": 1.0})
    append_attempt(run_dir, {"attempt": 1, "start": 1.0, "end": 2.0, "exit_code": 1, "restart_consumed": True})
    path = tmp_path / "attempts.jsonl"
    with open(path, "r+b") as handle:        # the agent killed while appending its second line
        handle.truncate(path.stat().st_size - 9)
    append_attempt(run_dir, {"attempt": 2, "start": 3.0, "end": 4.0, "exit_code": 1, "restart_consumed": True})
    attempts = read_attempts(run_dir)
    assert [a["attempt"] for a in attempts] == [1, 2]         # only the cut line is lost, not the one after it
    assert restarts_used([run_dir]) == 1 and path.read_bytes().endswith(b"\n")

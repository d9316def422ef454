"""attempts.jsonl and the attempt numbers (playground/restarts/attempts.py) agree with the claim files."""
from __future__ import annotations

from playground.restarts.attempts import append_attempt, next_attempt
from playground.restarts.fence import create_claim


def test_next_attempt_counts_started_attempts_and_claims_whose_agent_died_before_its_first_line(tmp_path):
    run_dir = str(tmp_path)
    assert next_attempt(run_dir) == 1
    append_attempt(run_dir, {"attempt": 1, "start": 1.0})
    append_attempt(run_dir, {"attempt": 1, "start": 1.0, "end": 2.0, "exit_code": 1})
    assert next_attempt(run_dir) == 2
    assert create_claim(run_dir, 2) and create_claim(run_dir, 3)   # the agent of claim-3 was killed at once
    assert next_attempt(run_dir) == 4
    assert not create_claim(run_dir, 3)                           # someone else holds it: never taken twice

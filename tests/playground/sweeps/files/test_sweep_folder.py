"""SweepFolder.restarts_used counts the sweep-wide restarts from every trial's attempts.jsonl, and reads again only
the files that changed since: a failed attempt late in a large sweep does not read every trial's file."""
from __future__ import annotations

import builtins

from playground.sweeps.files.sweep_folder import SweepFolder


def test_restarts_used_rereads_only_the_attempts_files_that_changed(tmp_path, monkeypatch):
    folder = SweepFolder(str(tmp_path / "sweep"))
    for number in range(50):
        folder.append_attempt(f"t{number:04d}", {"attempt": 1, "end": 1.0, "restart_consumed": number % 10 == 0})
    opened: list[str] = []
    real_open = builtins.open

    def counted_open(path, *args, **kwargs):
        opened.append(str(path))
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", counted_open)
    assert folder.restarts_used() == 5
    assert len(opened) == 50
    opened.clear()
    assert folder.restarts_used() == 5
    assert opened == []
    folder.append_attempt("t0007", {"attempt": 2, "end": 2.0, "restart_consumed": True})
    opened.clear()
    assert folder.restarts_used() == 6
    assert [p for p in opened if p.endswith("attempts.jsonl")] == [folder.trial_dir("t0007") + "/attempts.jsonl"]
    assert SweepFolder(folder.root).restarts_used() == 6     # a fresh view counts the same

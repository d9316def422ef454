"""How an agent's work ended, in its last line and its exit code: what became of the sweep's trials.

Done: the exit code is EXIT_DONE only when no trial of the study failed (each completed, was pruned, or stopped
early by its own rule, which ends complete); a sweep with failed trials ends EXIT_FAILED once everything else has
run, its last line naming them (Ray Tune's raise_on_failed_trial), unless --allow-failed-trials.
Stopped (Ctrl-C, SIGTERM, pause, a failed slot): which running trials wrote a checkpoint (exit 75) and which did not,
killed trial_stop_grace after an unanswered SIGTERM or ended otherwise; those resume from an earlier checkpoint.
"""
from __future__ import annotations

import signal
from collections import Counter
from typing import Any

from playground.processes.exit_codes import EXIT_DONE, EXIT_FAILED, EXIT_STOPPED
from playground.processes.supervisor import ending
from playground.sweeps.search.trial_ids import trial_id_of

NAMED = 8    # trials named in a line; more are counted


def done_ending(trials: list[Any], allow_failed: bool = False) -> tuple[int, str]:
    """(exit code, last line) of an agent that found nothing left to do, from the study's trials (restart-file
    rows, which never ran here, left out): `sweep done: 6 complete, 2 failed (t0003, t0007: see sweep status);
    exit code 1`."""
    ran = [t for t in trials if not t.user_attrs.get("imported")]
    counts = Counter(t.state.name for t in ran)
    failed = [trial_id_of(t) for t in ran if t.state.name == "FAIL"]
    parts = [f"{counts['COMPLETE']} complete"]
    if counts["PRUNED"]:
        parts.append(f"{counts['PRUNED']} pruned")
    if failed:
        parts.append(f"{len(failed)} failed ({names(failed)}: see sweep status)")
    elsewhere = counts["RUNNING"] + counts["WAITING"]
    if elsewhere:
        parts.append(f"{elsewhere} not ended yet (another agent's)")
    code = EXIT_FAILED if failed and not allow_failed else EXIT_DONE
    allowed = "; allowed by --allow-failed-trials" if failed and allow_failed else ""
    return code, f"sweep done: {', '.join(parts)}{allowed}; exit code {code}"


def stopped_trials(left: dict[str, int | None], grace: float) -> str:
    """What became of the trials the sweep's stop ended (`left`: trial id -> the exit code of that attempt):
    `t0000, t0002 stopped after a checkpoint; t0001 killed 60 s after an unanswered SIGTERM (trial_stop_grace),
    no checkpoint written: it resumes from its previous checkpoint`."""
    if not left:
        return "no trial was running"
    checkpointed = [t for t, code in left.items() if code == EXIT_STOPPED]
    killed = [t for t, code in left.items() if code == -signal.SIGKILL]
    others: dict[str, list[str]] = {}
    for trial_id, code in left.items():
        if trial_id not in checkpointed and trial_id not in killed:
            others.setdefault(ending(code) if code is not None else "not started", []).append(trial_id)
    parts = []
    if checkpointed:
        parts.append(f"{names(checkpointed)} stopped after a checkpoint")
    if killed:
        parts.append(f"{names(killed)} killed {grace:g} s after an unanswered SIGTERM (trial_stop_grace), no "
                     "checkpoint written")
    for how, ids in others.items():
        parts.append(f"{names(ids)} ended without a checkpoint ({how})")
    unsaved = len(left) - len(checkpointed)
    if unsaved:
        parts[-1] += (": it resumes from its previous checkpoint" if unsaved == 1 else
                      ": they resume from their previous checkpoints") + " (from the start if none)"
    return "; ".join(parts)


def names(ids: list[str]) -> str:
    """`t0003, t0007`, or the first NAMED of many and how many more."""
    shown = ", ".join(ids[:NAMED])
    return shown if len(ids) <= NAMED else f"{shown} and {len(ids) - NAMED} more"

"""Does the study lag the trial folders? A journal cut, emptied or restored from an older copy knows fewer trials,
or older states, than the folders record; a study lost beside trial folders must never be replaced by a new one.

Agents write in a fixed order (the study creates a trial before its folder exists; trial.json says how it ended
before the study is told), so a folder the study does not know means the study lost records, while a trial that
ended in its folder but runs in the study is either ending this very moment or lost its last record.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from playground.outputs.run_folder import RunFolder
from playground.sweeps.errors import SweepError
from playground.sweeps.files.sweep_folder import SweepFolder
from playground.sweeps.search.journal_file import repair_command, torn_tail
from playground.sweeps.search.trial_ids import trial_id_of

ENDED = ("complete", "pruned", "fail")


def trial_folders(folder: SweepFolder) -> list[str]:
    """The folders in trials/ (a stray file or a hidden folder there is no trial), by name."""
    try:
        with os.scandir(os.path.join(folder.root, "trials")) as entries:
            return sorted(e.name for e in entries if e.is_dir() and not e.name.startswith("."))
    except FileNotFoundError:
        return []


def holds_a_trial(folder: SweepFolder, trial_id: str) -> bool:
    """Whether an agent or `sweep continue` wrote in trials/<id>: a claim file, trial.json or warm_start.json (an
    empty folder, a mount point made ready for a trial, is none yet)."""
    try:
        with os.scandir(folder.trial_dir(trial_id)) as entries:
            return any(e.name.startswith("claim-") or e.name in (RunFolder.TRIAL, RunFolder.WARM_START)
                       for e in entries)
    except OSError:
        return False


def written(folder: SweepFolder, listed: list[str]) -> list[str]:
    """The folders of `listed` that hold a trial."""
    return [trial_id for trial_id in listed if holds_a_trial(folder, trial_id)]


def unknown_folders(folder: SweepFolder, listed: list[str], trials: list[Any]) -> list[str]:
    """The trial folders of `listed` (listed before the study was read) that no trial of the study names."""
    known = {trial_id_of(t) for t in trials}
    return written(folder, [trial_id for trial_id in listed if trial_id not in known])


def study_lost(folder: SweepFolder, where: str, listed: list[str], size: int | None) -> SweepError:
    """The error for a study missing beside trial folders: never start a new one over them. `size`: the
    journal's size before it was opened (None: there was none), when the study is the folder's journal."""
    if where != folder.journal:
        what = "holds no study of this sweep"
    else:
        what = ("is missing" if size is None else "is empty" if size == 0 else
                "holds no study (cut before its first record)")
    return SweepError(f"{where} {what}, but {folder.root}/trials holds {len(listed)} trial folder(s) "
                      f"({_span(listed)}): a new study would run them again. Rebuild the study from the folders with "
                      f"{repair_command(folder.journal)}")


def refuse_unknown(folder: SweepFolder, listed: list[str], trials: list[Any]) -> None:
    """An agent does not start on a study that lost trials whose folders exist: it would number new trials into
    those folders."""
    unknown = unknown_folders(folder, listed, trials)
    if unknown:
        raise SweepError(f"{folder.journal}: the study does not know {len(unknown)} trial folder(s) of "
                         f"{folder.root}/trials ({_span(unknown)}): it lost records (cut, or restored from an older "
                         f"copy), and new trials would be numbered into those folders. Rebuild it from the folders "
                         f"with {repair_command(folder.journal)}")


@dataclass
class Lag:
    """Where the study lags the trial folders (lag_of)."""
    unknown: list[str]      # trial folders the study does not know: it lost records
    behind: list[str]       # `t0011 is complete in its trial.json but running in the study`, per trial
    lines: list[str]        # what `sweep status` and `sweep summary` say; [] when the study does not lag


def lag_of(study: Any, folder: SweepFolder, listed: list[str], journal: bool) -> Lag:
    """Whether, and where, the study lags the folders `listed` (listed before it was read)."""
    trials = study.get_trials(deepcopy=False)
    noun = "the journal" if journal else "the study"
    lines = []
    unknown = unknown_folders(folder, listed, trials)
    if unknown:
        lines.append(f"{noun} lags the trial folders: it does not know {_span(unknown)} "
                     f"({len(unknown)} folder(s) in trials/)")
    behind = []
    for trial in trials:
        if trial.state.is_finished():
            continue
        trial_id = trial_id_of(trial)
        state = folder.read_trial(trial_id).get("state") if trial_id in listed else None
        if state in ENDED:
            behind.append(f"{trial_id} is {state} in its trial.json but {trial.state.name.lower()} in the study")
    if behind:
        lines.append(f"{noun} lags the trial folders: " + "; ".join(behind[:8])
                     + (f"; and {len(behind) - 8} more" if len(behind) > 8 else "")
                     + " (an agent ending that trial this moment shows so briefly)")
    if journal:
        complete, torn = torn_tail(folder.journal)
        if torn:
            lines.append(f"{folder.journal} ends in {torn} bytes after its line {complete} without a newline (a "
                         "writer killed mid-append): the next write cuts them off")
    if unknown or behind:
        lines.append(f"if no agent works on the sweep, {noun} was cut or restored from an older copy: rebuild "
                     f"it from the trial folders with {repair_command(folder.journal)}")
    return Lag(unknown, behind, lines)


def _span(ids: list[str]) -> str:
    if len(ids) <= 4:
        return ", ".join(ids)
    return f"{ids[0]}, {ids[1]} ... {ids[-1]}"

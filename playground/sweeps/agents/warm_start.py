"""`sweep continue DIR ID --set key=value ...`: a new trial that continues trial ID's training from its latest
checkpoint with changed settings (Determined's "continue trial"), e.g. more epochs or another learning rate.

The new trial's run folder starts with the source's latest checkpoint (the file `<checkpoint folder>/last` names,
hard-linked, else copied, under the same relative path, with its info file and a `last` pointer), so the run
resumes it as it resumes its own: weights, optimizer state, position, random and data state and the record
points so far, then trains on with the trial's settings, which are the source's plus the --set items (a run
resuming with changed opts logs which keys changed; the learning rate is a function of the position, so a new
rate applies from the resumed iteration; more epochs continue the run). The network must be the same: a changed
architecture does not fit the checkpoint (use model_param.pretrained_model in a new sweep for that).

The trial is enqueued in the study at once with the next trial number (folder t<number>); it is an extra trial
outside the budget (`max_trials` still counts the searcher's own trials), run by the `sweep run` working on the
folder or by the next one, and the searcher never prunes it. The checkpoint is linked right away (or by the agent
that starts the trial first, whichever comes first); `warm_start.json` in its folder records what it continued
from. Bad input (not a sweep,
an unknown trial, a trial without a checkpoint, an unusable --set) is refused before anything is written.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
import uuid
import zipfile
from typing import Any

from playground.outputs.atomic_files import write_json
from playground.outputs.run_folder import RunFolder
from playground.processes import supervisor
from playground.processes.exit_codes import EXIT_DONE
from playground.sweeps.errors import SweepError
from playground.sweeps.files.sweep_folder import SweepFolder
from playground.sweeps.search._optuna_private import distribution_contains

WARM_START_FILE = RunFolder.WARM_START
POINTER = "last"
LOAD_SECONDS = 600    # loading a checkpoint to check it: a big one takes a while, a hung filesystem ends here


def continue_trial(sweep_dir: str, source_id: str, set_items: list[str], storage: str | None = None) -> int:
    from playground.options.layers import parse_set
    from playground.sweeps.agents.control import sweep_folder
    from playground.sweeps.files.module_maps import use_sweep_module_map
    from playground.sweeps.inputs.opts_check import check_points, load_base
    from playground.sweeps.inputs.spec import parse_spec
    from playground.sweeps.search.study import distributions, encoded, load_study
    folder = sweep_folder(sweep_dir)
    source = _source_record(folder, source_id)
    checkpoint = latest_checkpoint(folder.trial_dir(source_id))
    if checkpoint is None:
        raise SweepError(f"trial {source_id} of {folder.root} has no checkpoint to continue from (no usable "
                         f"'{POINTER}' pointer in its checkpoint folder): it never reached one")
    problem = unusable_checkpoint(checkpoint) or unloadable_checkpoint(checkpoint)
    if problem:   # the run would start from scratch while warm_start.json said it continues
        raise SweepError(f"trial {source_id}'s checkpoint {checkpoint} cannot be continued from: {problem}")
    spec = parse_spec(folder.read_spec()["spec"], folder.root, origin=folder.spec_file)
    if spec.experiment:   # a Determined experiment's hyperparameters need not be dotted
        from playground.determined.trial_setup import parse_sets
        changes = parse_sets(list(set_items))
    else:
        changes = dict(parse_set(item) for item in set_items)
    sets = {**source.get("params", {}), **changes}
    if spec.experiment:   # checked now as the trial will read them (a new length included), not when it fails
        from playground.determined.trial_setup import check_trial_sets
        check_trial_sets(spec.experiment, sets)
    use_sweep_module_map(folder, spec.base)
    if spec.base is not None:
        check_points(load_base(spec), [(f"sweep continue {source_id} --set", sets)])
    study = load_study(folder, spec.searcher, spec.objectives, create=False, storage=storage)
    dists = distributions(spec.space, grid=spec.searcher_name == "grid")
    params = {k: encoded(v) for k, v in sets.items() if k in dists and contained(dists[k], encoded(v))}
    token = uuid.uuid4().hex
    relative = os.path.relpath(checkpoint, folder.trial_dir(source_id))
    user_attrs = {"sets": sets, "extra": True,   # sha256: of the bytes checked here, which the run must resume
                  "warm_start": {"trial": source_id, "checkpoint": relative, "set": changes, "token": token,
                                 "sha256": _sha256(checkpoint)}}
    study.enqueue_trial(params, user_attrs=user_attrs, skip_if_exists=False)
    number = next(t.number for t in reversed(study.get_trials(deepcopy=False))
                  if t.user_attrs.get("warm_start", {}).get("token") == token)
    trial_id = f"t{number:04d}"
    os.makedirs(folder.trial_dir(trial_id), exist_ok=True)
    write_json(folder.run_folder(trial_id).warm_start,
               {"number": number, "sets": sets, "params": params, "user_attrs": user_attrs}, durable=False)
    try:  # link now, so the source's keep limit cannot take the file first; an agent that started it already did
        link_checkpoint(folder.trial_dir(trial_id), user_attrs["warm_start"])
    except OSError:
        pass
    print(f"added trial {trial_id}: continues {source_id} from {os.path.relpath(checkpoint, folder.root)} with "
          + (", ".join(f"{k}={json.dumps(v)}" for k, v in changes.items()) or "the same settings")
          + f"; an extra trial outside the budget. The `sweep run` working on {folder.root} runs it, else the "
            "next one does")
    return EXIT_DONE


def _source_record(folder: SweepFolder, source_id: str) -> dict:
    record = folder.read_trial(source_id) if os.path.isdir(folder.trial_dir(source_id)) else {}
    if not isinstance(record.get("number"), int):
        known = [t for t in folder.trial_ids() if isinstance(folder.read_trial(t).get("number"), int)]
        raise SweepError(f"{folder.root} has no trial {source_id!r} (trials: "
                         f"{', '.join(known[:12]) + (' ...' if len(known) > 12 else '') or 'none yet'})")
    return record


def checkpoint_folder(run_dir: str) -> str:
    """Where a trial keeps its checkpoints: opts.json's output.checkpoint_folder, else <run_dir>/checkpoints. A
    relative folder is the trial's own (inputs/checkpoint_folder.py: trials get it as an absolute path in their run
    folder, so opts.json holds that; a relative one an older trial recorded is read against its run folder)."""
    try:
        with open(RunFolder(run_dir).opts, encoding="utf-8") as handle:
            opts = json.load(handle).get("opts", {})
    except (OSError, ValueError):
        opts = {}
    output = opts.get("output") if isinstance(opts, dict) else None
    given = output.get("checkpoint_folder") if isinstance(output, dict) else None
    return os.path.abspath(os.path.join(run_dir, given)) if given else RunFolder(run_dir).checkpoints


def latest_checkpoint(run_dir: str) -> str | None:
    """The file the run's `last` pointer names (what a re-run resumes from), inside its run folder; else None."""
    link = os.path.join(checkpoint_folder(run_dir), POINTER)
    if not os.path.islink(link):
        return None
    target = os.path.normpath(os.path.join(os.path.dirname(link), os.readlink(link)))
    inside = not os.path.relpath(target, os.path.abspath(run_dir)).startswith("..")
    return target if os.path.isfile(target) and inside else None


def link_checkpoint(run_dir: str, warm_start: dict[str, Any]) -> str | None:
    """Give a warm-started trial's folder its source checkpoint before its first attempt; a problem, or None.

    Nothing is done when the folder already has a checkpoint (a later attempt resumes its own); the linked one,
    not yet trained on, is checked again (changed_checkpoint)."""
    linked = os.path.join(os.path.abspath(run_dir), warm_start["checkpoint"])
    latest = latest_checkpoint(run_dir)
    if latest is not None:
        problem = changed_checkpoint(latest, warm_start) if latest == linked else None
        return f"the checkpoint it continues, {latest}, {problem}" if problem else None
    source_dir = os.path.join(os.path.dirname(os.path.abspath(run_dir)), warm_start["trial"])  # trials/<source>
    source = os.path.join(source_dir, warm_start["checkpoint"])
    if not os.path.isfile(source):
        return (f"the checkpoint it continues, {source}, is gone (deleted by trial {warm_start['trial']}'s keep "
                "limit once it trained on?)")
    problem = changed_checkpoint(source, warm_start)
    if problem:
        return f"the checkpoint it continues, {source}, {problem}"
    target = os.path.join(run_dir, warm_start["checkpoint"])
    os.makedirs(os.path.dirname(target), exist_ok=True)
    _link_or_copy(source, target)
    info = os.path.splitext(source)[0] + ".json"   # a playground checkpoint's info file (checksum, position)
    if info != source and os.path.isfile(info):
        _link_or_copy(info, os.path.splitext(target)[0] + ".json")
    folder = os.path.join(run_dir, os.path.relpath(checkpoint_folder(source_dir), source_dir))
    os.makedirs(folder, exist_ok=True)
    pointer = os.path.join(folder, f".{POINTER}.{os.getpid()}.tmp")
    if os.path.lexists(pointer):
        os.unlink(pointer)
    os.symlink(os.path.relpath(target, folder), pointer)
    os.replace(pointer, os.path.join(folder, POINTER))
    write_json(RunFolder(run_dir).warm_start,
               {**(read_warm_start(run_dir) or {}), "continued_from": {
                   "trial": warm_start["trial"], "checkpoint": source, "linked_as": target,
                   "set": warm_start.get("set", {}), "time": time.time()}}, durable=False)
    return None


def unusable_checkpoint(path: str) -> str | None:
    """Why a playground checkpoint (a file with its info file beside it) cannot be resumed, found without loading
    it (no torch here): a size or SHA-256 other than its info file's, or a damaged torch.save zip archive (each
    member's CRC). None when it is whole, or is no playground checkpoint (another trial program's layout)."""
    info_file = os.path.splitext(path)[0] + ".json"
    if info_file == path or not os.path.isfile(info_file):
        return None
    try:
        with open(info_file, encoding="utf-8") as handle:
            info = json.load(handle)
    except (OSError, ValueError) as err:
        return f"has an unreadable info file {info_file} ({err})"
    size = os.path.getsize(path)
    if isinstance(info.get("size"), int) and info["size"] != size:
        return f"is {size} bytes where its info file says {info['size']} (cut or overwritten)"
    if info.get("sha256"):
        actual = _sha256(path)
        if actual != info["sha256"]:
            return f"fails its checksum (sha256 {actual[:12]}..., expected {info['sha256'][:12]}...)"
        return None
    try:
        with zipfile.ZipFile(path) as archive:
            damaged = archive.testzip()
    except (zipfile.BadZipFile, OSError) as err:
        return f"is no readable torch.save archive ({err})"
    return f"is damaged: its part {damaged} fails its CRC" if damaged else None


def changed_checkpoint(path: str, warm_start: dict[str, Any]) -> str | None:
    """Why the checkpoint `sweep continue` checked can no longer be resumed: its bytes differ from those it
    checked (their SHA-256, recorded then), or, for a trial added before that was recorded, unusable_checkpoint
    and unloadable_checkpoint find it so now; None when it is as it was checked."""
    checked = warm_start.get("sha256")
    if checked is None:
        return unusable_checkpoint(path) or unloadable_checkpoint(path)
    actual = _sha256(path)
    if actual != checked:
        return (f"has changed since `sweep continue` checked it (sha256 {actual[:12]}..., checked "
                f"{checked[:12]}...); the trial would not continue what it says it continues")
    return None


def unloadable_checkpoint(path: str) -> str | None:
    """Why a playground checkpoint (a file with its info file beside it) does not load as its run loads it (torch.load
    with weights_only=True, then its format marker), e.g. a pickle weights_only refuses: the run would log it and
    train from scratch. None when it loads, or is no playground checkpoint. Asked of a process of its own
    (playground/checkpoints/loadable.py), since the sweep layer never imports torch: a few seconds."""
    if os.path.splitext(path)[0] + ".json" == path or not os.path.isfile(os.path.splitext(path)[0] + ".json"):
        return None
    try:
        done = supervisor.run_tool([sys.executable, "-m", "playground.checkpoints.loadable", path],
                                   timeout=LOAD_SECONDS)
    except subprocess.TimeoutExpired:
        return f"could not be loaded within {LOAD_SECONDS} s to check it (a hung filesystem?)"
    if done.returncode == EXIT_DONE:
        return None
    why = (done.stderr.strip().splitlines() or [f"its check ended with exit code {done.returncode}"])[-1]
    return f"{why}, so its run would start from scratch; playground loads no checkpoint that could run code"


def _sha256(path: str) -> str:
    with open(path, "rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def _link_or_copy(source: str, target: str) -> None:
    """A hard link (checkpoint files are replaced, never changed in place), else a copy."""
    if os.path.lexists(target):
        os.unlink(target)
    try:
        os.link(source, target)
    except OSError:
        shutil.copy2(source, target)


def read_warm_start(run_dir: str) -> dict | None:
    try:
        with open(RunFolder(run_dir).warm_start, encoding="utf-8") as handle:
            return json.load(handle)
    except (OSError, ValueError):
        return None


def contained(dist: Any, value: Any) -> bool:
    """Whether an Optuna distribution holds `value` (a warm-started trial may leave the space)."""
    try:
        return distribution_contains(dist, value)
    except (ValueError, TypeError):
        return False

"""Whose checkpoints a checkpoint folder holds: a run never resumes another run's checkpoints unasked.

An `output.checkpoint_folder` outside the run folder may be shared (the README blob's placeholder
`/home/your_user_name/model_checkpoint/` is kept by every run that copies it). Each checkpoint's info file names
the run folder and the opts digest (playground/options/digest.py) of the run that wrote it; before anything
starts, the launcher asks `foreign_checkpoint` whether the checkpoint a resume would follow (`last`) is another
run's: written from another run folder, with other opts. That is refused (exit 2) unless the command says
`--resume`. Resuming stays free where it always was: the run's own folder (a checkpoint folder inside the run
folder: re-runs, restarts, `sweep continue`'s linked checkpoint), the same opts from another run folder (the same
command run again, or a run folder moved), the same run folder with changed opts (a longer run), and checkpoints
written before info files named their run (nothing to compare).
"""
from __future__ import annotations

import json
import os

from playground.options.digest import changed_keys, opts_digest, same_experiment
from playground.outputs.run_folder import RunFolder

# the checkpoint_folder of Caffe2's Playground README, kept by blobs copied from it
README_PLACEHOLDER = "your_user_name"


def foreign_checkpoint(folder: str, run_dir: str, opts: dict) -> str | None:
    """Why this run (in `run_dir`, with resolved `opts`) must not resume the checkpoint `folder`'s `last` names,
    or None when it may (see the module's docstring)."""
    folder, run_dir = os.path.abspath(folder), os.path.abspath(run_dir)
    if _inside(folder, run_dir) or not os.path.lexists(os.path.join(folder, "last")):
        return None
    from playground.checkpoints.files import read_info, read_pointer   # torch: only for a folder with checkpoints
    last = read_pointer(folder, "last")
    info = (read_info(last) if last else None) or {}
    theirs_dir, theirs_digest = info.get("run_dir"), info.get("opts_digest")
    ours_digest = opts_digest(opts)
    if not isinstance(theirs_dir, str) or not theirs_digest or theirs_digest == ours_digest:
        return None
    if os.path.abspath(theirs_dir) == run_dir:
        return None
    their_opts = _run_opts(theirs_dir)
    if their_opts is not None and same_experiment(opts, their_opts):
        return None
    changed = changed_keys(their_opts, opts) if their_opts is not None else []
    differ = (f": {', '.join(changed[:6])}{', ...' if len(changed) > 6 else ''}" if changed else "")
    return (f"opts.output.checkpoint_folder: {folder} holds another run's checkpoints: its last, "
            f"{os.path.basename(last)}, is the run in {theirs_dir} (opts hash {theirs_digest}), and this run, in "
            f"{run_dir} (opts hash {ours_digest}), has other opts{differ}. Resuming would continue that run, not "
            f"start this one. Give this run its own checkpoint_folder (empty keeps them in "
            f"{RunFolder(run_dir).checkpoints}{_PLACEHOLDER_NOTE if is_readme_placeholder(folder) else ''}), "
            "or add --resume to continue that run's checkpoint with these opts")


_PLACEHOLDER_NOTE = "; this one is the placeholder path of Caffe2's README, shared by every run that keeps it"


def is_readme_placeholder(folder: str) -> bool:
    """Whether `folder` is the README's placeholder (`/home/your_user_name/model_checkpoint/`), meant to be replaced."""
    return README_PLACEHOLDER in folder


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def _run_opts(run_dir: str) -> dict | None:
    """The resolved opts a run folder holds (opts.json), or None when it is gone or unreadable."""
    try:
        with open(RunFolder(run_dir).opts, encoding="utf-8") as handle:
            opts = json.load(handle)["opts"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return opts if isinstance(opts, dict) else None

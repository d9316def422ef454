"""Where a sweep's trials keep their checkpoints: each trial in a folder of its own, never one that several share.

`output.checkpoint_folder` empty (the default): `<trial run folder>/checkpoints`. Relative: relative to the trial's
run folder. A plain run reads a relative folder from its working directory (Caffe2's Playground did), where every
trial of a sweep would find the same one, so each trial is given its own as an absolute path
(`--set output.checkpoint_folder=<run folder>/<path>`, `trial_sets`), which is also where `sweep continue` looks
for it (agents/warm_start.py). Absolute, or relative but leading out of the run folder (`../ckpt`): one folder
for every trial that has it, where each trial after the first would refuse the first's checkpoints (exit 2,
playground/checkpoints/folder_owner.py); `shared_folder_problem` refuses that before any trial starts.
Reads opts keys only: never imports the trainer or the components.
"""
from __future__ import annotations

import os
from typing import Any

from playground.sweeps.inputs.space import constants
from playground.sweeps.inputs.spec import SweepSpec

KEY = "output.checkpoint_folder"


def leaves_run_folder(folder: str) -> bool:
    """Whether a checkpoint_folder value names a place outside each trial's own run folder."""
    return os.path.isabs(folder) or os.path.normpath(folder).split(os.sep)[0] == os.pardir


def trial_sets(spec: SweepSpec, sets: dict[str, Any], run_dir: str) -> dict[str, str]:
    """The setting that gives one trial its own checkpoint folder: {KEY: `run_dir`/path} when the folder its
    opts name (`sets` over the base opts) is relative, else nothing (empty, absolute, no base opts)."""
    folder = sets[KEY] if KEY in sets else base_folder(spec)
    if not isinstance(folder, str) or not folder or os.path.isabs(folder):
        return {}
    return {KEY: os.path.join(os.path.abspath(run_dir), folder)}


def base_folder(spec: SweepSpec) -> Any:
    """output.checkpoint_folder as the base opts file (over the defaults file) gives it, None where neither
    does; read, not resolved (no components imported)."""
    from playground.options.layers import OptsError, load_blob_file
    if spec.base is None:
        return None
    try:
        layers = [_defaults_layer(spec), load_blob_file(spec.base)]
    except OptsError:   # checked when the sweep began; a file changed since fails its trials with the reason
        return None
    given = [_given(layer) for layer in layers if _given(layer)]
    return given[-1][0] if given else None


def shared_folder_problem(spec: SweepSpec, base_opts: dict, layers: list[tuple[str, dict]],
                          points: list[tuple[str, dict[str, Any]]]) -> str | None:
    """Why trials would share a checkpoint folder, in one line naming the key, where it is set and what to do;
    None when each has its own. `points`: (where, params) of every planned trial (upf, grid) or a search's
    corners; `layers`: the base opts' (name, tree), to name the file that set the base's folder."""
    search = spec.searcher_name not in ("upf", "grid")
    if (spec.max_trials if search else len(points)) == 1:
        return None                                   # one trial shares with no one
    base = base_opts["output"]["checkpoint_folder"]
    fixed = KEY in constants(spec.space)
    users: dict[str, list[str]] = {}                  # a folder outside the run folders -> where each user is
    for where, point in points:
        folder = point.get(KEY, base)
        if isinstance(folder, str) and folder and leaves_run_folder(folder):
            source = ("the spec's space" if fixed else where) if KEY in point else _setter(layers)
            users.setdefault(folder, []).append(source)
    for folder, wheres in users.items():
        if search or len(wheres) > 1:                 # a search's trials may draw the same value
            named = list(dict.fromkeys(wheres))
            who = "every trial" if len(wheres) == len(points) else f"{len(wheres)} trials"
            source = "; ".join(named[:3]) + (f" and {len(named) - 3} more" if len(named) > 3 else "")
            return _problem(source, folder, "the trials" if search else who)
    return None


def _problem(source: str, folder: str, who: str) -> str:
    what = "an absolute folder" if os.path.isabs(folder) else "a folder outside each trial's run folder"
    return (f"{source}: {KEY} is {folder!r}, {what} that {who} would share: each trial after the first would refuse "
            "the first's checkpoints (exit 2). Leave it empty: each trial then keeps its checkpoints in its own run "
            "folder (trials/<id>/checkpoints); a relative path is relative to each trial's run folder")


def _setter(layers: list[tuple[str, dict]]) -> str:
    """The layer (base opts file, defaults file) that gave the base's folder."""
    named = [name for name, tree in layers if _given(tree)]
    if not named:
        return "base opts"
    return named[-1] if named[-1].startswith("defaults_file ") else f"base opts {named[-1]}"


def _defaults_layer(spec: SweepSpec) -> dict:
    from playground.options.builtin import BUILTIN_OPTS, SECTIONS
    from playground.options.layers import load_defaults_file
    if not spec.defaults_file:
        return {}
    return load_defaults_file(spec.defaults_file, SECTIONS, lambda: [o.path for o in BUILTIN_OPTS])


def _given(tree: dict) -> tuple[Any] | tuple[()]:
    """(the folder,) when an opts tree (a layer) sets output.checkpoint_folder, else ()."""
    output = tree.get("output")
    return (output["checkpoint_folder"],) if isinstance(output, dict) and "checkpoint_folder" in output else ()

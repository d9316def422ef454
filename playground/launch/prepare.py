"""Turns a command line into a prepared run: layered and validated opts, the run folder, the plan.

Nothing here starts a process or touches data; the only file written is `<run-dir>/opts.json` (the resolved
opts, from which `--parameters-file <run-dir>/opts.json` reproduces the run), and not even that for a dry run,
for an attempt that a later claim already superseded (raises Fenced: playground/restarts/fence.py), or while
another live run holds the folder (raises RunFolderBusy: playground/outputs/run_folder_lock.py; this process
holds it from here to the command's end).
`--resume` picks the newest folder under runs/ whose opts.json holds the same resolved opts (or with --run-dir
names it), and lets the run resume a checkpoint folder that holds another run's checkpoints
(playground/checkpoints/folder_owner.py: refused without it).
"""
from __future__ import annotations

import argparse
import glob
import json
import os
import sys
import time
from dataclasses import dataclass

from playground.outputs.atomic_files import write_json
from playground.outputs.run_folder import RunFolder
from playground.outputs.run_folder_lock import hold_run_folder
from playground.options.builtin import BUILTIN_OPTS, SECTIONS
from playground.options.loader import ResolvedOpts, resolve_opts
from playground.options.digest import opts_digest, same_experiment
from playground.options.layers import OptsError, load_blob, load_blob_file, load_defaults_file, sets_layer
from playground.launch.plan import Plan, make_plan
from playground.restarts.fence import Fence


@dataclass
class PreparedRun:
    resolved: ResolvedOpts
    run_dir: str
    opts_file: str
    plan: Plan

    @property
    def opts(self) -> dict:
        return self.resolved.opts


def layers_from_args(args: argparse.Namespace) -> list[tuple[str, dict]]:
    """The user's layers, lowest precedence first: defaults file, opts blob, --set items, --shard-id."""
    layers: list[tuple[str, dict]] = []
    if args.defaults_file:
        layers.append((f"--defaults-file {args.defaults_file}",
                       load_defaults_file(args.defaults_file, SECTIONS, known_paths)))
    if args.parameters_file:
        layers.append((args.parameters_file, load_blob_file(args.parameters_file)))
    else:
        layers.append(("--parameters-json", load_blob(args.parameters_json, "--parameters-json")))
    sets = sets_layer(args.sets)
    if sets:
        layers.append(("--set", sets))
    if args.shard_id is not None:
        layers.append(("--shard-id", {"distributed": {"shard_id": args.shard_id}}))
    return layers


def known_paths() -> list[str]:
    """Every key a bare defaults-file key may name: the framework's and every registered component's."""
    from playground.options.schema import component_declarations
    return [o.path for o in BUILTIN_OPTS] + [d.path for d in component_declarations()]


def prepare_run(args: argparse.Namespace) -> PreparedRun:
    if args.parameters_file and not getattr(args, "module_map", None) and not os.environ.get("PLAYGROUND_MODULE_MAP"):
        beside = os.path.join(os.path.dirname(os.path.abspath(args.parameters_file)), "module_map.py")
        if os.path.isfile(beside):
            from playground.options.registry import use_module_map
            use_module_map(beside)
    if args.parameters_file:   # a run folder's opts.json names the map that run used
        from playground.options.registry import use_recorded_module_map
        use_recorded_module_map(args.parameters_file)
    layers = layers_from_args(args)
    name = os.path.splitext(os.path.basename(args.parameters_file))[0] if args.parameters_file else None
    resume = getattr(args, "resume", False)
    return prepare(layers, run_dir=args.run_dir, name=name, dry_run=getattr(args, "dry_run", False),
                   resume=resume, strict=getattr(args, "strict", False))


def prepare(layers: list[tuple[str, dict]], run_dir: str | None = None, name: str | None = None,
            dry_run: bool = False, resume: bool = False, strict: bool = False) -> PreparedRun:
    """Validate `layers` and write the resolved opts into the run folder (created when missing, unless
    `dry_run`); `resume` reuses the newest run folder of the same opts when `run_dir` is None, and may resume
    another run's checkpoints in output.checkpoint_folder; `strict` refuses undeclared keys."""
    resolved = resolve_opts(layers, strict=strict)
    opts = resolved.opts
    if resume and not run_dir:
        run_dir = latest_run_dir(opts)
    run_dir = os.path.abspath(run_dir or default_run_dir(name or opts["model"]["model_name_py"]))
    plan = make_plan(resolved, run_dir)
    _check_checkpoint_owner(opts, plan.checkpoint_folder, run_dir, resume, resolved.warnings)
    _check_pretrained(opts, plan.checkpoint_folder)
    opts_file = RunFolder(run_dir).opts
    if owns_run_folder(plan) and not dry_run:
        Fence.from_env(run_dir).check("opts.json")
        try:
            hold_run_folder(run_dir)      # a live run there: RunFolderBusy (exit 2) before anything is written
            write_json(opts_file, _with_module_map({"opts": opts}))
        except OSError as err:
            raise OptsError(f"--run-dir {run_dir}: cannot write the resolved opts there: {err.strerror}") from None
    return PreparedRun(resolved=resolved, run_dir=run_dir, opts_file=opts_file, plan=plan)


def owns_run_folder(plan: Plan) -> bool:
    """Whether this process owns the run folder (holds it, writes opts.json): the launcher of the first host, or
    rank 0 when torchrun or Slurm started every rank (the other ranks share the folder)."""
    return plan.topology.shard_id == 0 and not plan.topology.given_rank


def _with_module_map(blob: dict) -> dict:
    """The user's module map in use, recorded beside the opts: commands that read the run folder use it too."""
    from playground.options.registry import chosen_module_map
    path = chosen_module_map()
    return dict(blob, module_map=path) if path else blob


def _check_checkpoint_owner(opts: dict, folder: str, run_dir: str, resume: bool, warnings: list[str]) -> None:
    """A checkpoint folder holding another run's checkpoints is resumed only with --resume (folder_owner.py)."""
    from playground.checkpoints.folder_owner import foreign_checkpoint, is_readme_placeholder
    if opts["output"]["checkpoint_folder"] and is_readme_placeholder(folder):
        warnings.append(f"opts.output.checkpoint_folder: {folder} is the placeholder path of Caffe2's README: every "
                        "run that keeps it checkpoints into that one folder (a run with other opts refuses the "
                        "checkpoints another run left there); leave it empty to keep each run's checkpoints in its "
                        "run folder")
    if resume or opts["output"]["ckpt_restart_mode"] == "off":
        return
    problem = foreign_checkpoint(folder, run_dir, opts)
    if problem:
        raise OptsError(problem)


def _check_pretrained(opts: dict, checkpoint_folder: str) -> None:
    """The pretrained_model file must be usable, unless the run resumes from its own checkpoint instead (then the
    file is not read, and may be gone)."""
    path = opts["model_param"]["pretrained_model"]
    if not path:
        return
    from playground.checkpoints.files import read_pointer   # both import torch: only when a file is named
    from playground.checkpoints.pretrained import check_pretrained_file
    if opts["output"]["ckpt_restart_mode"] != "off" and read_pointer(checkpoint_folder, "last") is not None:
        return
    problems = check_pretrained_file(path)
    if problems:
        raise OptsError(problems)


def default_run_dir(name: str) -> str:
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in name.rsplit(".", 1)[-1]) or "run"
    base = os.path.join("runs", f"{safe}-{time.strftime('%Y%m%d-%H%M%S')}")
    candidate, n = base, 1
    while os.path.exists(candidate):
        n += 1
        candidate = f"{base}-{n}"
    return candidate



def latest_run_dir(opts: dict, runs: str = "runs") -> str | None:
    """The newest folder under `runs` whose opts.json holds these resolved opts; says which on stderr. None (a new
    folder) where none does but output.checkpoint_folder has a checkpoint to resume."""
    digest = opts_digest(opts)
    matches = []
    for path in glob.glob(RunFolder(os.path.join(runs, "*")).opts):
        try:
            with open(path, encoding="utf-8") as handle:
                theirs = json.load(handle)["opts"]
        except (OSError, ValueError, KeyError, TypeError):
            continue  # not a run folder of ours, or one being written
        if isinstance(theirs, dict) and same_experiment(opts, theirs):
            matches.append((os.path.getmtime(path), os.path.dirname(path)))
    folder = opts["output"]["checkpoint_folder"]
    if not matches and folder and os.path.lexists(os.path.join(folder, "last")):
        print(f"playground: --resume: no run folder under {os.path.abspath(runs)} holds these opts (hash {digest}); "
              f"a new one resumes the checkpoint of output.checkpoint_folder {os.path.abspath(folder)}",
              file=sys.stderr)
        return None
    if not matches:
        raise OptsError(f"--resume: no run folder under {os.path.abspath(runs)} holds these opts (hash {digest}); "
                        "start without --resume, or name the folder with --run-dir")
    matches.sort()
    chosen = matches[-1][1]
    print(f"playground: --resume: resuming {os.path.abspath(chosen)}, the newest of {len(matches)} run folder(s) "
          f"with these opts (hash {digest})", file=sys.stderr)
    return chosen

"""Turns a command line into a prepared run: layered and validated opts, the run folder, the plan.

Nothing here starts a process or touches data; the only file written is `<run-dir>/opts.json` (the resolved
opts, from which `--parameters-file <run-dir>/opts.json` reproduces the run).
"""
from __future__ import annotations

import argparse
import os
import time
from dataclasses import dataclass

from playground.atomic_files import write_json
from playground.builtin_opts import BUILTIN_OPTS, SECTIONS
from playground.opts import ResolvedOpts, resolve_opts
from playground.opts_layers import (OptsError, load_blob, load_blob_file, load_defaults_file, parse_set,
                                    set_path)
from playground.plan import Plan, make_plan


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
        known = [o.path for o in BUILTIN_OPTS]
        layers.append((f"--defaults-file {args.defaults_file}", load_defaults_file(args.defaults_file, SECTIONS, known)))
    if args.parameters_file:
        layers.append((args.parameters_file, load_blob_file(args.parameters_file)))
    else:
        layers.append(("--parameters-json", load_blob(args.parameters_json, "--parameters-json")))
    sets: dict = {}
    for item in args.sets:
        path, value = parse_set(item)
        set_path(sets, path, value)
    if sets:
        layers.append(("--set", sets))
    if args.shard_id is not None:
        layers.append(("--shard-id", {"distributed": {"shard_id": args.shard_id}}))
    return layers


def prepare_run(args: argparse.Namespace) -> PreparedRun:
    layers = layers_from_args(args)
    name = os.path.splitext(os.path.basename(args.parameters_file))[0] if args.parameters_file else None
    return prepare(layers, run_dir=args.run_dir, name=name)


def prepare(layers: list[tuple[str, dict]], run_dir: str | None = None, name: str | None = None) -> PreparedRun:
    """Validate `layers` and write the resolved opts into the run folder (created when missing)."""
    resolved = resolve_opts(layers)
    opts = resolved.opts
    run_dir = os.path.abspath(run_dir or default_run_dir(name or opts["model"]["model_name_py"]))
    plan = make_plan(resolved, run_dir)
    opts_file = os.path.join(run_dir, "opts.json")
    if plan.topology.shard_id == 0:
        try:
            os.makedirs(run_dir, exist_ok=True)
            write_json(opts_file, {"opts": opts})
        except OSError as err:
            raise OptsError(f"--run-dir {run_dir}: cannot write the resolved opts there: {err.strerror}") from None
    return PreparedRun(resolved=resolved, run_dir=run_dir, opts_file=opts_file, plan=plan)


def default_run_dir(name: str) -> str:
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in name.rsplit(".", 1)[-1]) or "run"
    base = os.path.join("runs", f"{safe}-{time.strftime('%Y%m%d-%H%M%S')}")
    candidate, n = base, 1
    while os.path.exists(candidate):
        n += 1
        candidate = f"{base}-{n}"
    return candidate


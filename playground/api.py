"""Running experiments from Python (notebooks, sweeps, tests): the same path as the command line.

    from playground.api import run
    result = run({"input": {...}, "model": {...}, ...}, run_dir="runs/try1", sets=["epoch_iter.num_epochs=2"])

`run` validates, writes <run_dir>/opts.json and trains; errors raise (OptsError for bad opts) instead of
becoming exit codes. A multi-process run spawns its ranks and returns the results.json it wrote.
"""
from __future__ import annotations

import json
import os
from typing import Any

from playground.opts_layers import parse_set, set_path
from playground.run_setup import PreparedRun, prepare


def prepare_opts(opts: dict, run_dir: str | None = None, sets: list[str] | None = None,
                 defaults: dict | None = None) -> PreparedRun:
    layers: list[tuple[str, dict]] = []
    if defaults:
        layers.append(("defaults", defaults))
    layers.append(("opts", opts.get("opts", opts)))
    if sets:
        overrides: dict = {}
        for item in sets:
            path, value = parse_set(item)
            set_path(overrides, path, value)
        layers.append(("--set", overrides))
    return prepare(layers, run_dir=run_dir)


def run(opts: dict, run_dir: str | None = None, sets: list[str] | None = None,
        defaults: dict | None = None) -> dict[str, Any]:
    """Train; return the result dict (as assembleAllOutputs gave it, on rank 0)."""
    prepared = prepare_opts(opts, run_dir, sets, defaults)
    topology = prepared.plan.topology
    if topology.spawns:
        from playground.launch import launch
        code = launch(prepared)
        if code != 0:
            raise RuntimeError(f"the run in {prepared.run_dir} exited with code {code}")
        with open(os.path.join(prepared.run_dir, "results.json"), encoding="utf-8") as handle:
            return json.load(handle)
    from playground.worker import run_rank
    return run_rank(topology.given_local_rank or 0, prepared.opts, prepared.run_dir, topology, prepared.resolved)

"""Everything checked before a sweep starts: the spec, the upf lines (bare names resolved), the restart file,
the objective, every trial's opts against the schema, and that no two trials share a checkpoint folder. Raises `SweepError` (exit 2); writes nothing.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from playground.candle.list_values import list_value_problems
from playground.sweeps.errors import SweepError
from playground.sweeps.inputs.checkpoint_folder import shared_folder_problem
from playground.sweeps.inputs.restart_csv import PriorPoint, read_restart_file
from playground.sweeps.inputs.space import constants, corner_points, grid_points
from playground.sweeps.inputs.spec import SweepSpec
from playground.sweeps.inputs.trial_length import asha_length, needs_base_opts
from playground.sweeps.inputs.upf import UpfLine, read_upf, resolve_name


@dataclass
class PreparedSweep:
    spec: SweepSpec
    upf_lines: list[UpfLine]
    priors: list[PriorPoint]
    base_opts: dict | None


def prepare_sweep(spec: SweepSpec) -> PreparedSweep:
    from playground.sweeps.inputs.opts_check import check_objectives, check_points, load_base
    upf_lines = read_upf(spec.upf) if spec.upf else []
    priors = read_restart_file(spec.restart_file, spec.space) if spec.restart_file else []
    if spec.experiment:    # a Determined experiment: its YAML was checked, each trial's values are in its space
        return PreparedSweep(spec, upf_lines, priors, None)
    if spec.base is None:  # a CANDLE script declares its own keys; its runner checks them (exit 2)
        spec = asha_length(spec, None)
        if not spec.objectives:
            raise SweepError("objective: required with script (the metric to optimise; --objective METRIC)")
        problems = list_value_problems(_points(spec, upf_lines))   # "1500 x" fails here, not in every trial
        if problems:
            raise SweepError(problems)
        return PreparedSweep(spec, upf_lines, priors, None)
    base = load_base(spec)
    spec = asha_length(spec, base.opts)
    upf_lines = [_resolved_line(line, base.known, spec.upf) for line in upf_lines]
    objectives = check_objectives(spec, base)
    raw = spec.raw if spec.objectives else {**spec.raw, "objective": {"metric": objectives[0].metric,
                                                                     "mode": objectives[0].mode}}
    spec = replace(spec, objectives=objectives, raw=raw)
    points = _points(spec, upf_lines)
    check_points(base, points)
    shared = shared_folder_problem(spec, base.opts, base.layers, points)
    if shared:
        raise SweepError(shared)
    return PreparedSweep(spec, upf_lines, priors, base.opts)


def _points(spec: SweepSpec, upf_lines: list[UpfLine]) -> list[tuple[str, dict]]:
    """(where, params) of every trial a upf or grid sweep plans, or of the space's corners for a search."""
    if spec.searcher_name == "upf":
        return [(f"{spec.upf}, line {line.line} (id {line.id})", {**constants(spec.space), **line.params})
                for line in upf_lines]
    if spec.searcher_name == "grid":
        return [(f"grid point {i}", {**constants(spec.space), **p}) for i, p in enumerate(grid_points(spec.space))]
    return [(f"space ({', '.join(f'{k}={v!r}' for k, v in p.items()) or 'constants'})",
             {**constants(spec.space), **p}) for p in corner_points(spec.space)]


def resumed_sweep(spec: SweepSpec, priors: bool = False) -> PreparedSweep | None:
    """What an agent joining an initialised sweep needs, without validating every trial's opts again (which
    imports the components, torch among them): ASHA's trial length and the upf lines (the budget); `priors`:
    the restart file's rows too. None when the spec left something to derive (the objective, ASHA's length from
    the base opts): then prepare_sweep is needed."""
    if not spec.objectives or needs_base_opts(spec):
        return None
    rows = read_restart_file(spec.restart_file, spec.space) if priors and spec.restart_file else []
    return PreparedSweep(spec if spec.experiment else asha_length(spec, None),
                         read_upf(spec.upf) if spec.upf else [], rows, None)


def _resolved_line(line: UpfLine, known: list[str], path: str | None) -> UpfLine:
    params, problems = {}, []
    for key, value in line.params.items():
        resolved, candidates = resolve_name(key, known)
        if resolved is None:
            hint = f"; candidates: {', '.join(candidates)}" if candidates else "; write it as a dotted opts key"
            problems.append(f"{path}, line {line.line} (id {line.id}): {key!r} does not name exactly one opts key{hint}")
            continue
        params[resolved] = value
    if problems:
        raise SweepError(problems)
    return replace(line, params=params)

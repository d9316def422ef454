"""Everything checked before a sweep starts: the spec, the upf lines (bare names resolved), the restart file,
the objective and every trial's opts against the schema. Raises `SweepError` (exit 2); writes nothing.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from playground.candle.list_values import list_value_problems
from playground.sweeps.errors import SweepError
from playground.sweeps.inputs.restart_csv import PriorPoint, read_restart_file
from playground.sweeps.inputs.space import Param, constants, corner_points, grid_points
from playground.sweeps.inputs.spec import SweepSpec
from playground.sweeps.inputs.upf import UpfLine, read_upf, resolve_name


@dataclass
class PreparedSweep:
    spec: SweepSpec
    upf_lines: list[UpfLine]
    priors: list[PriorPoint]
    base_opts: dict | None


def prepare_sweep(spec: SweepSpec) -> PreparedSweep:
    from playground.sweeps.inputs.opts_check import check_objectives, check_points, load_base
    spec = _asha_length(spec)
    upf_lines = read_upf(spec.upf) if spec.upf else []
    priors = read_restart_file(spec.restart_file, spec.space) if spec.restart_file else []
    if spec.base is None:  # a CANDLE script declares its own keys; its runner checks them (exit 2)
        if not spec.objectives:
            raise SweepError("objective: required with script (the metric to optimise; --objective METRIC)")
        problems = list_value_problems(_points(spec, upf_lines))   # "1500 x" fails here, not in every trial
        if problems:
            raise SweepError(problems)
        return PreparedSweep(spec, upf_lines, priors, None)
    base = load_base(spec)
    upf_lines = [_resolved_line(line, base.known, spec.upf) for line in upf_lines]
    objectives = check_objectives(spec, base)
    raw = spec.raw if spec.objectives else {**spec.raw, "objective": {"metric": objectives[0].metric,
                                                                     "mode": objectives[0].mode}}
    spec = replace(spec, objectives=objectives, raw=raw)
    check_points(base, _points(spec, upf_lines))
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
    the restart file's rows too. None when the spec left something to derive (the objective): then
    prepare_sweep is needed."""
    if not spec.objectives:
        return None
    rows = read_restart_file(spec.restart_file, spec.space) if priors and spec.restart_file else []
    return PreparedSweep(_asha_length(spec), read_upf(spec.upf) if spec.upf else [], rows, None)


def _asha_length(spec: SweepSpec) -> SweepSpec:
    """Adaptive ASHA in epochs: a trial trains max_time epochs unless the space says otherwise."""
    s = spec.searcher
    if spec.searcher_name != "adaptive_asha" or s.get("time_metric") != "epochs":
        return spec
    if any(p.key == "epoch_iter.num_epochs" for p in spec.space):
        return spec
    return replace(spec, space=[*spec.space, Param("epoch_iter.num_epochs", "const", val=s["max_time"])])


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

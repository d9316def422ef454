"""`sweep preview`: what a spec would run, without running anything: the grid's points, adaptive ASHA's
brackets x rungs x trials, or the space and budget of a sampler."""
from __future__ import annotations

from playground.sweeps.inputs.space import grid_points
from playground.sweeps.inputs.spec import SweepSpec
from playground.sweeps.inputs.upf import read_upf
from playground.sweeps.search.asha import make_brackets, rung_units
from playground.sweeps.search.study import space_note


def preview(spec: SweepSpec) -> str:
    s = spec.searcher
    lines = [f"sweep {spec.name}: searcher {spec.searcher_name}"]
    if spec.searcher_name == "grid":
        points = grid_points(spec.space)
        lines.append(f"{len(points)} trials:")
        lines += [f"  t{i:04d} " + ", ".join(f"{k}={v!r}" for k, v in p.items()) for i, p in enumerate(points)]
    elif spec.searcher_name == "upf":
        upf = read_upf(spec.upf)
        lines.append(f"{len(upf)} trials:")
        lines += [f"  {line.id} {line.params}" for line in upf]
    elif spec.searcher_name == "adaptive_asha":
        brackets = make_brackets(s["max_trials"], s["max_time"], s["divisor"], s["max_rungs"], s["mode"],
                                 s.get("max_concurrent_trials") or 0, s.get("bracket_rungs"))
        lines.append(f"{s['max_trials']} trials, mode {s['mode']}, divisor {s['divisor']}, max_time {s['max_time']} "
                     f"{s['time_metric']}; {len(brackets)} brackets:")
        full = s["max_trials"] * s["max_time"]
        worst = 0
        for index, b in enumerate(brackets):
            units = rung_units(b.num_rungs, s["divisor"], s["max_time"])
            survivors = [max(int(b.max_trials / s["divisor"] ** r), 1) for r in range(b.num_rungs)]
            cost = sum(n * (u - (units[r - 1] if r else 0)) for r, (n, u) in enumerate(zip(survivors, units)))
            worst += cost
            lines.append(f"  bracket {index}: {b.num_rungs} rungs at {units} {s['time_metric']}, {b.max_trials} "
                         f"trials, {b.max_concurrent_trials} at once; about {survivors} reach each rung")
        lines.append(f"expected compute about {worst} of {full} {s['time_metric']} for every trial to max_time "
                     f"({100 * (1 - worst / full):.0f}% saved)")
    else:
        lines.append(f"{spec.max_trials} trials over:")
    note = space_note(spec)
    if note:
        lines.append(note)
    lines.append("space:")
    for p in spec.space:
        desc = repr(p.val) if p.type == "const" else (list(p.vals) if p.type == "categorical"
                                                     else f"{p.type} [{p.minval}, {p.maxval}]")
        lines.append(f"  {p.key}: {desc}")
    return "\n".join(lines)

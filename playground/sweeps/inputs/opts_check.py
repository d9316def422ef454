"""Checks a sweep's trials against the opts schema before anything runs: every key known, every value valid.

Each concrete point (grid, upf line) and, for sampled spaces, a few corner points (every category, both ends
of every range) are resolved with the one opts loader on top of the base opts; unknown keys, which a single run
only warns about, are errors here, with the closest known key, except a trial class's hyperparameters: the
`model_param` keys a class named by model.trial_py reads with context.get_hparam need no declaration, in a
sweep as in a run. Importing the options layer resolves components
(and so imports torch); the trainer is never imported.
"""
from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any

from playground.sweeps.errors import SweepError
from playground.sweeps.inputs.spec import Objective, SweepSpec


@dataclass
class BaseOpts:
    opts: dict                  # the resolved base opts
    known: list[str]            # every declared dotted key
    test_metrics: list[str]     # metric names measured on full test passes
    layers: list[tuple[str, dict]]


def load_base(spec: SweepSpec) -> BaseOpts:
    from playground.options.builtin import BUILTIN_OPTS, SECTIONS
    from playground.options.loader import resolve_opts
    from playground.options.layers import OptsError, load_blob_file, load_defaults_file
    from playground.options.registry import ComponentError
    layers: list[tuple[str, dict]] = []
    try:
        if spec.defaults_file:
            known = [o.path for o in BUILTIN_OPTS]
            layers.append((f"defaults_file {spec.defaults_file}", load_defaults_file(spec.defaults_file, SECTIONS, known)))
        layers.append((spec.base, load_blob_file(spec.base)))
        resolved = resolve_opts(layers)
    except (OptsError, ComponentError) as err:
        raise SweepError([f"base opts {spec.base}: {p}" for p in getattr(err, "problems", [str(err)])]) from None
    metrics = resolved.opts["output"]["metrics"]
    return BaseOpts(resolved.opts, sorted(resolved.declarations), [m["name"] for m in metrics if not m["is_train"]],
                    layers)


def nested(point: dict[str, Any]) -> dict:
    from playground.options.layers import set_path
    tree: dict = {}
    for key, value in point.items():
        set_path(tree, key, value)
    return tree


def check_points(base: BaseOpts, points: list[tuple[str, dict[str, Any]]]) -> None:
    """Resolve base + each point; raise one `SweepError` listing every problem, each naming its trial."""
    from playground.options.loader import resolve_opts
    from playground.options.unknown_keys import closest_hint
    from playground.options.layers import OptsError
    from playground.options.registry import ComponentError
    problems: list[str] = []
    hparams: dict[str, str] = {}    # undeclared model_param keys of a trial class -> the class
    for where, point in points:
        try:
            resolved = resolve_opts(base.layers + [(where, nested(point))])
        except (OptsError, ComponentError) as err:
            problems.extend(f"{where}: {p}" for p in getattr(err, "problems", [str(err)]))
            continue
        known = sorted(resolved.declarations)
        trial = (resolved.opts.get("model") or {}).get("trial_py")
        for key in point:
            if key in resolved.declarations or _under_container(key, resolved.declarations):
                continue
            if trial and key.startswith("model_param."):
                hparams[key] = trial
                continue
            problems.append(f"{where}: {key} is not an opts key. {closest_hint(key, known)}".rstrip())
    if problems:
        raise SweepError(list(dict.fromkeys(problems)))
    for key, trial in hparams.items():
        print(f"playground sweep: note: {key} is declared by no component; the trial class {trial} may read it "
              "as a hyperparameter (context.get_hparam), so it is passed on, as a run does", file=sys.stderr)


def check_objectives(spec: SweepSpec, base: BaseOpts) -> list[Objective]:
    """The objectives, defaulted to the first test metric in its own direction; each must be a test metric."""
    from playground.options.metric_modes import mode_of
    from playground.options.unknown_keys import closest_hint
    objectives = spec.objectives
    if not objectives:
        if not base.test_metrics:
            raise SweepError(f"base opts {spec.base}: no test metric (is_train: false) to optimise")
        name = base.test_metrics[0]
        objectives = [Objective(name, mode_of(base.opts.get("output") or {}, name))]
    problems = [f"objective: {o.metric!r} is not a test metric of the base opts (full test passes measure "
                f"{', '.join(base.test_metrics) or 'none'}). {closest_hint(o.metric, base.test_metrics)}".rstrip()
                for o in objectives if o.metric not in base.test_metrics]
    if problems:
        raise SweepError(problems)
    return objectives


def _under_container(key: str, declarations: dict) -> bool:
    from playground.options.value_types import Anything, Mapping
    parts = key.split(".")
    for n in range(1, len(parts)):
        decl = declarations.get(".".join(parts[:n]))
        if decl is not None and isinstance(decl.type, (Mapping, Anything)):
            return True
    return False

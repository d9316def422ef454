"""The `hyperparameters` of a Determined experiment: checked as Determined's schema does, flattened to dotted
names (nested groups), and turned into one trial's values.

A value that is not a mapping is a constant; `{type: const|int|double|log|categorical, ...}` is a parameter;
any other mapping is a nested group. Problems are appended to a list as `hyperparameters.<path>: ...` lines, so
the caller reports all of them at once. `global_batch_size` is split over the slots as Determined's
`calculate_batch_sizes` does (per slot: global // slots; global below slots is an error).
"""
from __future__ import annotations

import math
from typing import Any

TYPES = ("const", "int", "double", "log", "categorical")
_FIELDS = {"const": ({"val"}, set()), "int": ({"minval", "maxval"}, {"count"}),
           "double": ({"minval", "maxval"}, {"count"}), "log": ({"minval", "maxval", "base"}, {"count"}),
           "categorical": ({"vals"}, set())}
RANGES = ("int", "double", "log")


def is_parameter(value: Any) -> bool:
    """A `{type: ...}` mapping (as opposed to a constant or a nested group)."""
    return isinstance(value, dict) and "type" in value


def check_hyperparameters(raw: Any, problems: list[str], grid: bool = False) -> None:
    """Append one line per problem of the `hyperparameters` mapping (grid: ranges need `count`)."""
    if raw is None:
        return
    if not isinstance(raw, dict):
        problems.append("hyperparameters: expected a mapping of names to values or parameters")
        return
    for name, value in flatten(raw).items():
        _check_parameter(f"hyperparameters.{name}", value, problems, grid)


def flatten(raw: dict, prefix: str = "") -> dict[str, Any]:
    """Dotted name -> a constant value or a `{type: ...}` mapping; nested groups are walked (an empty group
    stays, as the empty mapping it is)."""
    out: dict[str, Any] = {}
    for key, value in raw.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict) and "type" not in value and value:
            out.update(flatten(value, name + "."))
        else:
            out[name] = value
    return out


def _check_parameter(where: str, value: Any, problems: list[str], grid: bool) -> None:
    if not is_parameter(value):
        return
    kind = value["type"]
    if kind not in TYPES:
        problems.append(f"{where}.type: {kind!r} is not a hyperparameter type; use one of {', '.join(TYPES)}")
        return
    required, optional = _FIELDS[kind]
    for key in sorted(required - set(value)):
        problems.append(f"{where}.{key}: required for type {kind}")
    for key in sorted(set(value) - required - optional - {"type"}):
        problems.append(f"{where}.{key}: not a key of type {kind} (keys: {', '.join(sorted(required | optional))})")
    if kind == "categorical" and "vals" in value and not (isinstance(value["vals"], list) and value["vals"]):
        problems.append(f"{where}.vals: expected a non-empty list")
    if kind not in RANGES:
        return
    numbers = (int,) if kind == "int" else (int, float)
    ends = [value.get("minval"), value.get("maxval")]
    wrong = [k for k, v in zip(("minval", "maxval"), ends) if k in value
             and (isinstance(v, bool) or not isinstance(v, numbers))]
    for key in wrong:
        problems.append(f"{where}.{key}: expected {'an integer' if kind == 'int' else 'a number'}, "
                        f"got {value[key]!r}")
    if not wrong and None not in ends and ends[0] >= ends[1]:
        problems.append(f"{where}: minval ({ends[0]}) must be below maxval ({ends[1]})")
    base = value.get("base")
    if kind == "log" and "base" in value and (isinstance(base, bool) or not isinstance(base, (int, float))
                                              or base <= 0):
        problems.append(f"{where}.base: expected a number above 0, got {base!r}")
    count = value.get("count")
    if count is not None and (isinstance(count, bool) or not isinstance(count, int) or count < 1):
        problems.append(f"{where}.count: expected a positive integer, got {count!r}")
    if grid and count is None:
        problems.append(f"{where}.count: the grid searcher needs `count` on {kind} hyperparameters")


def sampled_names(raw: dict | None) -> list[str]:
    """The dotted names of the parameters a searcher samples (every type but const)."""
    return [n for n, v in flatten(raw or {}).items() if is_parameter(v) and v["type"] != "const"]


def fixed_values(raw: dict | None) -> dict[str, Any]:
    """Dotted name -> value of every constant (bare values and `type: const`)."""
    return {n: (v["val"] if is_parameter(v) else v) for n, v in flatten(raw or {}).items()
            if not is_parameter(v) or v["type"] == "const"}


def value_problem(name: str, param: Any, value: Any) -> str | None:
    """Why `value` cannot be the value of the parameter `param` (a `{type: ...}` mapping), or None."""
    if not is_parameter(param) or param["type"] == "const":
        return None
    kind = param["type"]
    if kind == "categorical":
        return None if value in param["vals"] else f"{value!r} is not one of {param['vals']}"
    if isinstance(value, bool) or not isinstance(value, (int, float)) or (kind == "int" and not isinstance(value, int)):
        return f"expected {'an integer' if kind == 'int' else 'a number'}, got {value!r}"
    lo, hi = param["minval"], param["maxval"]
    if kind == "log":
        if value <= 0:
            return f"expected a number above 0, got {value!r}"
        value = math.log(value, param["base"])
    slack = 1e-9 * max(abs(lo), abs(hi), 1.0)
    if not lo - slack <= value <= hi + slack:
        scale = f" ({param['base']}**{lo} .. {param['base']}**{hi})" if kind == "log" else ""
        return f"outside [{lo}, {hi}]{scale}"
    return None


def nest(values: dict[str, Any]) -> dict:
    """Dotted names -> nested groups, as Determined hands hparams to a trial."""
    tree: dict = {}
    for name, value in values.items():
        node = tree
        *groups, leaf = name.split(".")
        for group in groups:
            node = node.setdefault(group, {})
        node[leaf] = value
    return tree


def per_slot_batch_size(hparams: dict, slots: int) -> tuple[int | None, str | None]:
    """(per-slot batch size, problem): global_batch_size // slots, or a problem; (None, None) without one."""
    if "global_batch_size" not in hparams:
        return None, None
    size = hparams["global_batch_size"]
    if isinstance(size, bool) or not isinstance(size, int):
        return None, f"hyperparameters.global_batch_size: must be an integer, not {type(size).__name__}"
    if size < max(slots, 1):
        return None, (f"hyperparameters.global_batch_size: {size} is below resources.slots_per_trial ({slots}); "
                      "every slot needs at least one record per batch")
    return size // max(slots, 1), None


def sample_once(raw: dict | None, names: list[str], seed: int) -> dict[str, Any]:
    """One value for each of the dotted `names` (sampled parameters), as Determined's `single` searcher draws
    its one trial (its random searcher with max_trials 1): int uniform over [minval, maxval], double uniform,
    log base ** uniform(minval, maxval), categorical one of vals; from a NumPy RandomState seeded with `seed`,
    the names in order (the same values at every re-run of the trial, so a resume continues the same trial)."""
    import numpy as np
    rng = np.random.RandomState(seed)
    params = flatten(raw or {})
    out: dict[str, Any] = {}
    for name in names:
        param = params[name]
        kind = param["type"]
        if kind == "int":
            out[name] = int(param["minval"] + rng.randint(param["maxval"] - param["minval"] + 1))
        elif kind == "double":
            out[name] = float(rng.uniform(param["minval"], param["maxval"]))
        elif kind == "log":
            out[name] = float(param.get("base", 10) ** rng.uniform(param["minval"], param["maxval"]))
        elif kind == "categorical":
            out[name] = param["vals"][rng.randint(len(param["vals"]))]
    return out

"""The sweep spec (JSON or YAML): what to run (base opts or a CANDLE script), the objective, the searcher and
the space. `load_spec` checks its shape and reports every problem at once as a `SweepError` (exit 2).

Paths in the spec are relative to the spec file. The upf form (`--upf FILE --base OPTS`) builds the same spec
with the searcher `upf`. `identity` is the part of the spec that must not change when a sweep is resumed
(everything except the budget and the retry policy: max_restarts, log_policies).
"""
from __future__ import annotations

import copy
import hashlib
import json
import os
from dataclasses import dataclass, field
from typing import Any

from playground.options.user_input.user_files import parse_json, parse_yaml, read_text
from playground.restarts.policy import LogPolicy, default_log_policies, parse_log_policies
from playground.sweeps.errors import SweepError
from playground.sweeps.inputs.space import Param, parse_space
from playground.sweeps.inputs.storage_url import parse_storage, redact
from playground.sweeps.inputs.trial_timeouts import KEYS as TIMEOUT_KEYS, check_timeouts

SEARCHERS = ("single", "grid", "upf", "random", "tpe", "gp", "cmaes", "adaptive_asha", "hyperband")
ASHA_MODES = ("aggressive", "standard", "conservative")
TIME_METRICS = ("epochs", "samples", "iteration")
TOP_KEYS = {"name", "base", "defaults_file", "script", "objective", "searcher", "space", "resources",
            "max_restarts", "log_policies", "storage", "trial_program", "upf", "restart_file", "agents",
            "experiment", *TIMEOUT_KEYS}
SEARCHER_KEYS = {"name", "max_trials", "max_concurrent_trials", "seed", "time_metric", "max_time", "divisor",
                 "max_rungs", "mode", "bracket_rungs", "sampler", "min_resource", "reduction_factor"}
BUDGET_KEYS = ("max_trials", "max_concurrent_trials")
RETRY_KEYS = ("max_restarts", "log_policies")    # may change on resume: how failures are retried, not what runs
DEFAULT_HEARTBEAT_SECONDS = 5.0   # how often an agent rewrites its heartbeat file (agents/heartbeat.py)
DEFAULT_GRACE_SECONDS = 60.0    # above NFS attribute caching (acregmax 60 s) so a live heartbeat is seen to change
AGENT_KEYS = {"heartbeat_seconds": DEFAULT_HEARTBEAT_SECONDS,   # `agents:`, may change on resume too
              "grace_seconds": DEFAULT_GRACE_SECONDS}
ACCESS_KEYS = ("storage",)      # how the study is reached (a restarted proxy's new port), not what runs
DEFAULT_MAX_RESTARTS = 5                          # Determined's default


@dataclass(frozen=True)
class Objective:
    metric: str
    mode: str          # "min" | "max"

    @property
    def direction(self) -> str:
        return "minimize" if self.mode == "min" else "maximize"


@dataclass
class SweepSpec:
    raw: dict                      # the spec as resolved (absolute paths), written to sweep.json
    name: str
    base: str | None
    defaults_file: str | None
    script: str | None
    objectives: list[Objective]
    reduce: str                    # "last" | "best" over full test passes
    searcher: dict
    space: list[Param]
    upf: str | None = None
    restart_file: str | None = None
    trial_program: list[str] | None = None
    slots_per_trial: int = 1
    storage: str = "auto"
    max_restarts: int = DEFAULT_MAX_RESTARTS
    log_policies: list[LogPolicy] = field(default_factory=default_log_policies)
    notes: list[str] = field(default_factory=list)
    experiment: str | None = None  # a Determined experiment YAML: each trial is `playground run EXPERIMENT --set ...`

    @property
    def searcher_name(self) -> str:
        return self.searcher["name"]

    @property
    def multi_objective(self) -> bool:
        return len(self.objectives) > 1

    @property
    def max_trials(self) -> int | None:
        return self.searcher.get("max_trials")

    def identity(self) -> str:
        """Hash of everything but the budget: a resumed sweep must have the same one."""
        return hashlib.sha256(json.dumps(identity_part(self.raw), sort_keys=True).encode()).hexdigest()[:16]


def identity_part(raw: dict) -> dict:
    part = copy.deepcopy(raw)
    for key in BUDGET_KEYS:
        part.get("searcher", {}).pop(key, None)
    for key in (*RETRY_KEYS, *TIMEOUT_KEYS, "agents", *ACCESS_KEYS):
        part.pop(key, None)
    return part


def agent_settings(raw: dict) -> tuple[float, float]:
    """(heartbeat_seconds, grace_seconds) of the spec's `agents:` (checked by parse_spec)."""
    agents = {**AGENT_KEYS, **(raw.get("agents") or {})}
    return float(agents["heartbeat_seconds"]), float(agents["grace_seconds"])


def _check_agents(raw: Any, origin: str, problems: list[str]) -> None:
    if raw is None:
        return
    if not isinstance(raw, dict):
        problems.append(f"{origin}: agents must be a mapping {{heartbeat_seconds, grace_seconds}}")
        return
    for key in sorted(set(raw) - set(AGENT_KEYS)):
        problems.append(f"{origin}: agents: unknown key {key} (known: {', '.join(AGENT_KEYS)})")
    for key in AGENT_KEYS:
        value = raw.get(key, AGENT_KEYS[key])
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
            problems.append(f"{origin}: agents.{key} must be a positive number of seconds, got {value!r}")
    heartbeat, grace = (raw.get(k, AGENT_KEYS[k]) for k in AGENT_KEYS)
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (heartbeat, grace)) and grace <= 2 * heartbeat:
        problems.append(f"{origin}: agents.grace_seconds ({grace}) must exceed twice heartbeat_seconds "
                        f"({heartbeat}), or live agents would look dead")


def read_spec_file(path: str) -> dict:
    text = read_text(path, "the sweep spec", path, SweepError)
    parse = parse_yaml if path.endswith((".yaml", ".yml")) else parse_json
    data = parse(text, "the sweep spec", path, SweepError)
    if not isinstance(data, dict):
        raise SweepError(f"{path}: a sweep spec is a mapping (name, base, objective, searcher, space)")
    if "entrypoint" in data:   # a Determined experiment configuration
        from playground.sweeps.inputs.determined_spec import experiment_spec
        return experiment_spec(data, path, text)
    return data


def load_spec(path: str) -> SweepSpec:
    return parse_spec(read_spec_file(path), os.path.dirname(os.path.abspath(path)), origin=path)


def upf_spec(upf: str, base: str | None, script: str | None = None, defaults_file: str | None = None,
             objective: Any = None) -> dict:
    """The spec of `sweep run --upf FILE --base OPTS`: every line of the file is one trial, no feedback loop."""
    name = os.path.splitext(os.path.basename(upf))[0]
    raw: dict = {"name": name, "upf": upf, "searcher": {"name": "upf"}}
    for key, value in (("base", base), ("script", script), ("defaults_file", defaults_file),
                       ("objective", objective)):
        if value is not None:
            raw[key] = value
    return raw


def parse_spec(data: dict, root: str, origin: str = "the spec") -> SweepSpec:
    problems: list[str] = []
    unknown = sorted(set(data) - TOP_KEYS)
    if unknown:
        problems.append(f"{origin}: unknown keys {', '.join(unknown)} (known: {', '.join(sorted(TOP_KEYS))})")
    raw = copy.deepcopy({k: v for k, v in data.items() if k in TOP_KEYS})
    for key in ("base", "defaults_file", "script", "upf", "restart_file", "experiment"):
        if raw.get(key) is not None:
            if not isinstance(raw[key], str):
                problems.append(f"{origin}: {key} must be a path")
                continue
            raw[key] = os.path.normpath(os.path.join(root, raw[key]))
            if not os.path.isfile(raw[key]):
                problems.append(f"{origin}: {key} {raw[key]} does not exist")
    if sum(bool(raw.get(key)) for key in ("base", "script", "experiment")) != 1:
        problems.append(f"{origin}: give exactly one of base (an opts file), script (a CANDLE benchmark script) and "
                        "experiment (a Determined experiment YAML)")
    searcher = _parse_searcher(raw.setdefault("searcher", {"name": "tpe"}), origin, problems)
    objectives, reduce = _parse_objective(raw.get("objective"), origin, problems)
    try:
        space = parse_space(_space_of(raw, root, origin), f"{origin}: space", dotted=not (raw.get("script") or raw.get("experiment")))
    except SweepError as err:
        problems.extend(err.problems)
        space = []
    program = raw.get("trial_program")
    if program is not None and not (isinstance(program, list) and program and all(isinstance(p, str) for p in program)):
        problems.append(f"{origin}: trial_program must be a list of strings (a command taking playground run's arguments)")
    slots = (raw.get("resources") or {}).get("slots_per_trial", 1)
    if not isinstance(slots, int) or slots < 1:
        problems.append(f"{origin}: resources.slots_per_trial must be a positive integer")
    storage = raw.get("storage", "auto")
    try:
        parse_storage(storage)
        if isinstance(storage, str):
            raw["storage"] = redact(storage, mark="")   # sweep.json never holds a password
    except ValueError as err:
        problems.append(f"{origin}: {err}")
    max_restarts = raw.get("max_restarts", DEFAULT_MAX_RESTARTS)
    if not isinstance(max_restarts, int) or isinstance(max_restarts, bool) or max_restarts < 0:
        problems.append(f"{origin}: max_restarts must be a whole number >= 0 (failed attempts the whole sweep may "
                        f"retry), got {max_restarts!r}")
        max_restarts = 0
    log_policies = parse_log_policies(raw.get("log_policies"), origin, problems)
    _check_agents(raw.get("agents"), origin, problems)
    check_timeouts(raw, origin, problems)
    if searcher and searcher["name"] == "upf" and not raw.get("upf"):
        problems.append(f"{origin}: the upf searcher needs a upf file (--upf FILE)")
    if searcher and searcher["name"] in ("adaptive_asha", "hyperband") and len(objectives) > 1:
        problems.append(f"{origin}: {searcher['name']} prunes on one metric; a several-key objective cannot be pruned")
    if problems:
        raise SweepError(problems)
    return SweepSpec(raw=raw, name=str(raw.get("name") or os.path.splitext(os.path.basename(origin))[0]),
                     base=raw.get("base"), defaults_file=raw.get("defaults_file"), script=raw.get("script"),
                     objectives=objectives, reduce=reduce, searcher=searcher, space=space, upf=raw.get("upf"),
                     restart_file=raw.get("restart_file"), trial_program=program, slots_per_trial=slots,
                     storage=storage, max_restarts=max_restarts, log_policies=log_policies,
                     experiment=raw.get("experiment"))


def _space_of(raw: dict, root: str, origin: str) -> Any:
    """The spec's `space`: a mapping, or the path of Supervisor's mlrMBO parameter-set file (R), read here."""
    space = raw.get("space")
    if not isinstance(space, str):
        return space
    if not space.endswith(".R"):
        raise SweepError(f"{origin}: space {space!r}: give a mapping of parameters, or an mlrMBO parameter-set "
                         "file (.R)")
    raw["space"] = os.path.normpath(os.path.join(root, space))
    from playground.sweeps.inputs.mlrmbo_params import read_param_set
    return read_param_set(raw["space"])


def _parse_searcher(searcher: Any, origin: str, problems: list[str]) -> dict:
    if isinstance(searcher, str):
        searcher = {"name": searcher}
    if not isinstance(searcher, dict) or searcher.get("name") not in SEARCHERS:
        name = searcher.get("name") if isinstance(searcher, dict) else searcher
        problems.append(f"{origin}: searcher.name {name!r} is not a searcher; use one of {', '.join(SEARCHERS)}")
        return {}
    out = dict(searcher)
    unknown = sorted(set(out) - SEARCHER_KEYS)
    if unknown:
        problems.append(f"{origin}: searcher: unknown keys {', '.join(unknown)}")
    name = out["name"]
    defaults: dict[str, Any] = {"seed": 0}
    if name == "single":
        defaults["max_trials"] = 1
    if name == "adaptive_asha":
        defaults.update(time_metric="epochs", divisor=4, max_rungs=5, mode="standard")
    if name == "hyperband":
        defaults.update(sampler="tpe", reduction_factor=3, min_resource=1)
    for key, value in defaults.items():
        out.setdefault(key, value)
    for key in ("max_trials", "max_concurrent_trials", "max_rungs", "max_time", "min_resource", "reduction_factor"):
        value = out.get(key)
        if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 1):
            problems.append(f"{origin}: searcher.{key} must be a positive integer, got {value!r}")
    if name in ("random", "tpe", "gp", "cmaes", "adaptive_asha", "hyperband") and out.get("max_trials") is None:
        problems.append(f"{origin}: searcher.max_trials is required for {name} (the exact total number of trials)")
    if name == "adaptive_asha":
        if out.get("max_time") is None:
            problems.append(f"{origin}: searcher.max_time is required for adaptive_asha (in units of time_metric)")
        if out["mode"] not in ASHA_MODES:
            problems.append(f"{origin}: searcher.mode {out['mode']!r}: use one of {', '.join(ASHA_MODES)}")
        if out["time_metric"] not in TIME_METRICS:
            problems.append(f"{origin}: searcher.time_metric {out['time_metric']!r}: use one of {', '.join(TIME_METRICS)}")
        if not isinstance(out["divisor"], (int, float)) or out["divisor"] <= 1:
            problems.append(f"{origin}: searcher.divisor must be a number above 1")
    if name == "hyperband" and out["sampler"] not in ("tpe", "random"):
        problems.append(f"{origin}: searcher.sampler for hyperband is tpe or random")
    return out


def _parse_objective(raw: Any, origin: str, problems: list[str]) -> tuple[list[Objective], str]:
    """`{metric, mode, reduce}`, or a list of `{metric, mode}` for several objectives; None means decide later."""
    if raw is None:
        return [], "last"
    items = raw if isinstance(raw, list) else [raw]
    objectives, reduce = [], "last"
    for index, item in enumerate(items):
        where = f"{origin}: objective" + (f"[{index}]" if isinstance(raw, list) else "")
        if not isinstance(item, dict) or not isinstance(item.get("metric"), str):
            problems.append(f"{where}: expected {{metric: NAME, mode: min|max}}")
            continue
        mode = item.get("mode", "min")
        if mode not in ("min", "max"):
            problems.append(f"{where}.mode: {mode!r}: use min or max")
        reduce = item.get("reduce", reduce)
        if reduce not in ("last", "best"):
            problems.append(f"{where}.reduce: {reduce!r}: use last or best (over full test passes)")
        objectives.append(Objective(item["metric"], mode))
    return objectives, reduce

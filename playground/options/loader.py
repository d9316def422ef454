"""The one opts loader: layers the user's opts, resolves components, fills defaults and validates.

Precedence, lowest first: built-in defaults < component-declared defaults < --defaults-file < the opts blob
< --set. Everything here runs before any worker process exists; every problem found is reported at once as
an `OptsError` whose lines name the dotted path (`opts.epoch_iter.batch_per_device: expected a positive
integer, got "32a"`). Keys nobody declared are kept (a component may read them) with a warning that names the
closest known key, except inside what the framework owns (`epoch_iter`, `distributed`, `output.ckpt_*`), where
an undeclared key is a mistake (`num_epoch` for `num_epochs`) and an error; `strict` makes every undeclared key
an error.
"""
from __future__ import annotations

import copy
import json
import os
import re
from dataclasses import dataclass, field, replace
from typing import Any

from playground.options.builtin import BUILTIN_OPTS, SECTIONS
from playground.options.component_keys import declarations_of
from playground.options.declaration import NO_DEFAULT, Need, Opt
from playground.options.value_types import ComponentName, ListOf, Nullable, OptTypeError
from playground.options.layers import OptsError, describe_origin, merge
from playground.options.output_checks import check_meters_build, check_metrics_and_plots, resolve_meters
from playground.options.machine_checks import check_machine
from playground.options.registry import Component, ComponentError, resolve
from playground.options.unknown_keys import is_ignored, leaf_paths, unknown_keys

# The components a trial class replaces: optional when model.trial_py names one.
TRIAL_REPLACES = ("input.input_name_py", "model.forward_pass_py")


@dataclass
class ResolvedOpts:
    opts: dict
    components: dict[str, Component]          # dotted opts path of a *_py key -> component
    meters: dict[str, Component]              # metric name -> meter component
    declarations: dict[str, Opt]
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def component(self, path: str) -> Component | None:
        return self.components.get(path)


def merge_declarations(builtin: tuple[Opt, ...], components: list[Component]) -> dict[str, Opt]:
    """Built-in declarations refined by components: a component's default and type win over the built-in ones."""
    table = {o.path: o for o in builtin}
    default_owner: dict[str, str] = {}
    problems = []
    for component in components:
        for decl in declarations_of(component):
            base = table.get(decl.path)
            if base is None:
                table[decl.path] = decl
                if decl.default is not NO_DEFAULT:
                    default_owner[decl.path] = component.name
                continue
            merged = Opt(path=decl.path, type=decl.type, need=max(base.need, decl.need, key=_need_rank),
                         default=base.default, help=decl.help or base.help,
                         readers=tuple(dict.fromkeys(base.readers + decl.readers)), inert=False)
            if decl.default is not NO_DEFAULT:
                owner = default_owner.get(decl.path)
                if owner and owner != component.name and table[decl.path].default != decl.default:
                    problems.append(f"opts.{decl.path}: components {owner} and {component.name} declare different "
                                    f"defaults ({table[decl.path].default!r} and {decl.default!r}); set it explicitly")
                merged = replace(merged, default=decl.default)
                default_owner[decl.path] = component.name
            table[decl.path] = merged
    if problems:
        raise OptsError(problems)
    return table


def resolve_opts(layers: list[tuple[str, dict]], check_devices: bool = True, strict: bool = False) -> ResolvedOpts:
    """Layer, resolve and validate; raise `OptsError` listing every problem. `strict`: an undeclared key
    anywhere is an error, not a warning."""
    raw, origin = merge(layers)
    problems: list[str] = []
    for section in SECTIONS:
        if section in raw and not isinstance(raw[section], dict):
            problems.append(f"opts.{section}: expected an object (a JSON dictionary of keys), "
                            f"got {_show(raw[section])}{describe_origin(origin, section)}")
    if problems:
        raise OptsError(problems)

    builtin = {o.path: o for o in BUILTIN_OPTS}
    components = _resolve_components(raw, builtin, problems)
    try:
        declarations = merge_declarations(_builtin_for(raw), list(dict.fromkeys(components.values())))
    except OptsError as err:
        raise OptsError(problems + err.problems) from None

    opts = copy.deepcopy(raw)
    for decl in declarations.values():
        _fill_and_check(opts, decl, origin, problems)
    meters = resolve_meters(opts, problems)
    _check_rules(opts, origin, problems, check_devices, components)
    _check_learning_rate(raw, components.get("model.optimizer_py"), problems)
    unknown_errors, unknown_warnings = unknown_keys(raw, declarations, strict)
    problems.extend(unknown_errors)
    if not problems:
        _component_checks(opts, components, meters, problems)
    if problems:
        raise OptsError(problems)

    resolved = ResolvedOpts(opts=opts, components=components, meters=meters, declarations=declarations)
    resolved.warnings.extend(unknown_warnings)
    ignored = sorted(p for p in leaf_paths(raw) if is_ignored(p))
    if ignored:
        resolved.notes.append("accepted and ignored (Caffe2-internal keys): " + ", ".join(ignored))
    inert = sorted(p for p, d in declarations.items() if d.inert and _get(raw, p) is not None)
    if inert:
        resolved.notes.append("accepted with no effect in PyTorch: " + ", ".join(inert))
    return resolved


def _builtin_for(raw: dict) -> tuple[Opt, ...]:
    """The built-in declarations, with the components a trial class replaces made optional when one is named."""
    if not _get(raw, "model.trial_py"):
        return BUILTIN_OPTS
    return tuple(replace(o, need=Need.OPTIONAL, default="") if o.path in TRIAL_REPLACES else o for o in BUILTIN_OPTS)


def _need_rank(need: Need) -> int:
    return {Need.OPTIONAL: 0, Need.NULLABLE: 1, Need.NON_EMPTY: 2}[need]


def _resolve_components(raw: dict, builtin: dict[str, Opt], problems: list[str]) -> dict[str, Component]:
    found: dict[str, Component] = {}
    for path, decl in builtin.items():
        if isinstance(decl.type, ListOf) and isinstance(decl.type.item, ComponentName):
            found.update(_resolve_component_list(raw, path, decl.type.item.kind, problems))
            continue
        if not isinstance(decl.type, ComponentName):
            continue
        value = _get(raw, path)
        if value is None:
            value = decl.default if decl.default is not NO_DEFAULT else None
        if not isinstance(value, str) or not value:
            continue  # missing or wrong type: reported by _fill_and_check
        try:
            found[path] = resolve(value, decl.type.kind, where=f"opts.{path}")
        except ComponentError as err:
            problems.append(str(err))
    return found


def _resolve_component_list(raw: dict, path: str, kind: str, problems: list[str]) -> dict[str, Component]:
    """Components named by a list key (model.hooks_py), as `path[index]`; wrong types are reported elsewhere."""
    found: dict[str, Component] = {}
    names = _get(raw, path)
    for index, name in enumerate(names if isinstance(names, list) else []):
        if isinstance(name, str) and name:
            try:
                found[f"{path}[{index}]"] = resolve(name, kind, where=f"opts.{path}[{index}]")
            except ComponentError as err:
                problems.append(str(err))
    return found


def _fill_and_check(opts: dict, decl: Opt, origin: dict[str, str], problems: list[str]) -> None:
    where = f"opts.{decl.path}"
    present, value = _lookup(opts, decl.path)
    if not present:
        if decl.need is not Need.OPTIONAL:
            problems.append(f"{where}: missing; it is {decl.need.value} ({decl.type.description}). {decl.help}".strip())
        elif decl.default is not NO_DEFAULT:
            _put(opts, decl.path, copy.deepcopy(decl.default))
        return
    if decl.need is Need.NON_EMPTY and value in (None, ""):
        problems.append(f"{where}: must not be empty; expected {decl.type.description}{describe_origin(origin, decl.path)}")
        return
    if (decl.need is Need.NULLABLE or isinstance(decl.type, Nullable)) and value == "" \
            and not isinstance(decl.type, ComponentName):
        return  # "" is the original blobs' way of writing null
    if isinstance(decl.type, ComponentName) and value == "":
        return
    try:
        _put(opts, decl.path, decl.type.check(value))
    except OptTypeError as err:
        found, inner = _at_subpath(value, err.subpath)
        shown = f", got {_show(inner)}" if found else ""
        problems.append(f"{where}{err.subpath}: expected {err.expected}{shown}"
                        f"{describe_origin(origin, decl.path + err.subpath.split('[')[0])}")


def _at_subpath(value: Any, subpath: str) -> tuple[bool, Any]:
    """The part of `value` at an error's subpath (".field", "[index]", chained), and whether it is there."""
    for name, index in re.findall(r"\.(\w+)|\[(\d+)\]", subpath):
        if name and isinstance(value, dict) and name in value:
            value = value[name]
        elif index and isinstance(value, list) and int(index) < len(value):
            value = value[int(index)]
        else:
            return False, None
    return True, value


def _trial_builds_optimizer(trial: Component | None) -> bool:
    cls = trial.trial_class() if trial is not None else None
    return cls is not None and callable(getattr(cls, "build_optimizer", None))


def _check_rules(opts: dict, origin: dict[str, str], problems: list[str], check_devices: bool,
                 components: dict[str, Component]) -> None:
    update, optimizer = _get(opts, "model.parameter_update_py"), _get(opts, "model.optimizer_py")
    trial_optimizer = _trial_builds_optimizer(components.get("model.trial_py"))
    if bool(update) == bool(optimizer) and not (trial_optimizer and not update):
        state = "both are set" if update else "neither is set"
        problems.append("opts.model: exactly one of parameter_update_py and optimizer_py must name a component"
                        f"{' (or the trial class defines build_optimizer)' if components.get('model.trial_py') else ''}"
                        f"; {state}{' (' + repr(update) + ' and ' + repr(optimizer) + ')' if update else ''}")
    dist = opts.get("distributed", {})
    shards, shard_id = dist.get("num_shards"), dist.get("shard_id")
    if isinstance(shards, int) and isinstance(shard_id, int) and shard_id >= shards:
        problems.append(f"opts.distributed.shard_id: {shard_id} is not below num_shards ({shards})"
                        f"{describe_origin(origin, 'distributed.shard_id')}")
    hooks = _get(opts, "model.hooks_py")
    if isinstance(hooks, list):
        for index, name in enumerate(hooks):
            if name in hooks[:index]:
                problems.append(f"opts.model.hooks_py[{index}]: {name!r} is listed twice (a hook runs once; its "
                                "state is saved under its name)")
    check_metrics_and_plots(opts, problems)
    _check_epoch_sizes(opts, problems)
    _check_folder(opts, "output.checkpoint_folder", problems)
    if check_devices:  # the launcher's checks; ranks re-resolve the same opts without repeating them
        check_machine(opts, problems)


def _check_learning_rate(raw: dict, optimizer: Component | None, problems: list[str]) -> None:
    """The built-in base_learning_rate (0.1) suits the Caffe2 update rules and SGD; a torch optimizer either
    declares its own default or the opts give one."""
    if optimizer is None or _lookup(raw, "model_param.base_learning_rate")[0]:
        return
    if not any(d.path == "model_param.base_learning_rate" and d.default is not NO_DEFAULT
               for d in declarations_of(optimizer)):
        problems.append(f"opts.model_param.base_learning_rate: missing; the optimizer {optimizer.name} declares no "
                        "default learning rate (0.1 suits SGD, not most others): set one")


def _component_checks(opts: dict, components: dict[str, Component], meters: dict[str, Component],
                      problems: list[str]) -> None:
    """Each component's optional `validate_opts(opts) -> list[str]` (paths exist, data readable...), and
    constructing each meter once, so mistakes surface before any process starts."""
    for component in dict.fromkeys(components.values()):
        check = getattr(component.module, "validate_opts", None)
        if callable(check):
            problems.extend(check(opts) or [])
    if not problems:
        _check_data_size(opts, components.get("input.input_name_py"), problems)
    _check_num_classes(opts, components, problems)
    check_meters_build(opts, meters, problems)


def _check_num_classes(opts: dict, components: dict[str, Component], problems: list[str]) -> None:
    """A null input.num_classes suits any forward pass but a classifier: a component that lists input.num_classes
    in its `reads` (mlp_forward...) needs a number, which an input component that reads it too finds in its data
    (gfs_IN1k: the database's metadata); any other input leaves it null, and the classifier would fail at run
    time."""
    if _get(opts, "input.num_classes") is not None:
        return
    source = components.get("input.input_name_py")
    if source is not None and "input.num_classes" in _reads(source):
        return
    classifiers = [c.name for path, c in components.items() if path != "input.input_name_py"
                   and "input.num_classes" in _reads(c)]
    if classifiers:
        counter = f"the input {source.name}" if source else "no input component"
        problems.append(f"opts.input.num_classes: null, but {classifiers[0]} builds a classifier with "
                        f"input.num_classes outputs and {counter} does not say how many classes there are; set "
                        "input.num_classes (1 for one output)")


def _reads(component: Component) -> list[str]:
    return list(getattr(component.module, "reads", None) or [])


def _check_data_size(opts: dict, component: Component | None, problems: list[str]) -> None:
    """A full-pass epoch (num_train_sample_per_epoch 0) needs at least one global batch of training records; an
    input component that can count them cheaply says so with `dataset_sizes(opts) -> {"train": n, ...}`."""
    sizes = getattr(component.module, "dataset_sizes", None) if component else None
    if not callable(sizes) or opts["epoch_iter"]["num_train_sample_per_epoch"] != 0:
        return
    train = sizes(opts).get("train")
    global_batch, how = _global_batch(opts)
    if isinstance(train, int) and train < global_batch:
        problems.append(f"opts.epoch_iter.batch_per_device: the global batch ({global_batch} = {how}) is larger than "
                        f"the training set ({train} samples, from {component.name}); with num_train_sample_per_epoch "
                        "0 (one full pass, the last partial batch dropped) an epoch would have no iteration")


def _global_batch(opts: dict) -> tuple[int, str]:
    dist = opts["distributed"]
    devices = dist["num_gpus"] if dist["num_gpus"] > 0 else dist["num_cpus"]
    return (opts["epoch_iter"]["batch_per_device"] * devices * dist["num_shards"],
            f"batch_per_device x {devices} devices x {dist['num_shards']} shards")


def _check_epoch_sizes(opts: dict, problems: list[str]) -> None:
    epoch_iter, dist = opts.get("epoch_iter", {}), opts.get("distributed", {})
    values = [epoch_iter.get("batch_per_device"), epoch_iter.get("num_train_sample_per_epoch"),
              dist.get("num_gpus"), dist.get("num_cpus"), dist.get("num_shards")]
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        return  # already reported as missing or mistyped
    global_batch, how = _global_batch(opts)
    samples = epoch_iter["num_train_sample_per_epoch"]
    if 0 < samples < global_batch:
        problems.append(f"opts.epoch_iter.num_train_sample_per_epoch: {samples} is smaller than the global batch "
                        f"({global_batch} = {how})")


def _check_folder(opts: dict, path: str, problems: list[str]) -> None:
    """A folder the run will write to must be creatable: no file in the way, writable where it exists."""
    folder = _get(opts, path)
    if not isinstance(folder, str) or not folder:
        return
    probe = os.path.abspath(folder)
    while not os.path.exists(probe):
        probe = os.path.dirname(probe)
    hint = "; name a folder you can write, or leave it empty for <run-dir>/checkpoints" \
        if path == "output.checkpoint_folder" else ""
    if not os.path.isdir(probe):
        problems.append(f"opts.{path}: cannot create {folder}: {probe} is a file, not a folder{hint}")
    elif not os.access(probe, os.W_OK):
        problems.append(f"opts.{path}: cannot write to {probe} (permission denied){hint}")


def _lookup(tree: dict, path: str) -> tuple[bool, Any]:
    node: Any = tree
    for part in path.split("."):
        if not isinstance(node, dict) or part not in node:
            return False, None
        node = node[part]
    return True, node


def _get(tree: dict, path: str) -> Any:
    return _lookup(tree, path)[1]


def _put(tree: dict, path: str, value: Any) -> None:
    parts = path.split(".")
    node = tree
    for part in parts[:-1]:
        node = node.setdefault(part, {})
    node[parts[-1]] = value


def _show(value: Any) -> str:
    text = json.dumps(value)
    return text if len(text) <= 60 else text[:57] + "..."

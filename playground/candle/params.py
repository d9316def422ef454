"""A CANDLE benchmark's parameters: read a defaults file as CANDLE does, layer ours on top, check the result.

CANDLE's contract, kept: a defaults file of `key = value` lines (`[Global_Params]`; every section is read, later
keys win), values as Python literals; a script's `additional_definitions` (dicts with `name`, `type`, and
optionally `nargs`, `choices`, `default`, `action`, `help`) and `required` (names that must have a value).
CANDLE's common keys (epochs, batch_size, ...) and the checkpoint keys (ckpt_*) are known with their types.

Layers, lowest first: what `initialize_parameters()` returned (the script's defaults file), `--defaults-file`,
`--parameters-file` (a JSON object of params, or `{"opts": {...}}`), `--set key=value`. Problems are raised
together as one `OptsError` whose lines name the key and the layer (file) its value came from.
"""
from __future__ import annotations

from typing import Any

from playground.options.value_types import Bool, Choice, Float, Int, ListOf, OptType, OptTypeError, Str, from_python_type
from playground.options.did_you_mean import did_you_mean
from playground.options.layers import OptsError, describe_origin, literal_value, merge
from playground.options.user_input.user_files import read_ini, read_json

# CANDLE's common parameters (a subset of its default_utils table) and ckpt_keras_utils' keys, with their types.
COMMON: dict[str, OptType] = {
    "epochs": Int(1), "batch_size": Int(1), "learning_rate": Float(0), "optimizer": Str(), "loss": Str(),
    "activation": Str(), "dropout": Float(0, 1), "rng_seed": Int(0), "save_path": Str(), "output_dir": Str(),
    "data_url": Str(), "train_data": Str(), "val_data": Str(), "test_data": Str(), "model_name": Str(),
    "experiment_id": Str(), "run_id": Str(), "verbose": Bool(), "shuffle": Bool(), "timeout": Int(),
    "ckpt_restart_mode": Choice(["off", "auto", "required"]), "ckpt_save_best": Bool(),
    "ckpt_save_best_metric": Str(), "ckpt_skip_epochs": Int(0), "ckpt_save_interval": Int(0),
    "ckpt_checksum": Bool(), "ckpt_keep_mode": Choice(["linear", "exponential"]), "ckpt_keep_limit": Int(1),
    "ckpt_directory": Str(), "ckpt_metadata": Str(),
}


def read_defaults_file(path: str) -> dict:
    """The `key = value` pairs of every section of a CANDLE defaults file, values as Python literals."""
    parser = read_ini(path, "the defaults file", f"defaults file {path}", OptsError, strict=False)
    return {key: literal_value(text) for section in parser.sections() for key, text in parser.items(section)}


# The keys that name one run's own folders (playground/candle/script_process.py): taken from another run's
# opts.json they would make this run write into, and resume from, that run's folders.
RUN_FOLDER_KEYS = ("output_dir", "experiment_id", "run_id", "ckpt_directory", "data_dir")


def read_parameters_file(path: str) -> dict:
    """A JSON object of params (`{"epochs": 3}`), or the run folder's `{"opts": {...}}` form, less the keys
    that name that run's folders (RUN_FOLDER_KEYS: this run gets its own)."""
    data = read_json(path, "the parameters file", f"--parameters-file {path}", OptsError)
    if isinstance(data, dict) and set(data) >= {"opts"} and isinstance(data["opts"], dict):
        data = {k: v for k, v in data["opts"].items() if k not in RUN_FOLDER_KEYS}
    if not isinstance(data, dict):
        raise OptsError(f"--parameters-file {path}: expected a JSON object of params, got {type(data).__name__}")
    return data


def definition_types(definitions: list[dict] | None) -> dict[str, OptType]:
    """CANDLE's `additional_definitions` as opts types (`nargs` makes a list; `action: store_true` a bool)."""
    types: dict[str, OptType] = {}
    for definition in definitions or []:
        name = definition.get("name")
        if not isinstance(name, str):
            raise OptsError(f"additional_definitions: an entry has no 'name': {definition!r}")
        if "choices" in definition:
            item: OptType = Choice(definition["choices"])
        elif definition.get("action") in ("store_true", "store_false"):
            item = Bool()
        else:
            declared = definition.get("type", str)
            item = _callable_type(declared) if declared not in (int, float, str, bool, list, dict) and \
                not isinstance(declared, OptType) else from_python_type(declared)
        nargs = definition.get("nargs")
        types[name] = ListOf(item, min_items=1 if nargs == "+" else 0) if nargs in ("+", "*") or \
            isinstance(nargs, int) else item
    return types


def _callable_type(declared: Any) -> OptType:
    """A converter such as candle.str2bool: bool when it names booleans, else any value."""
    return Bool() if "bool" in getattr(declared, "__name__", "") else OptType()


def resolve_params(layers: list[tuple[str, dict]], definitions: list[dict] | None,
                   required: list[str] | None) -> tuple[dict, list[str]]:
    """Merge the layers, check types and required keys; return (params, warnings). Raises OptsError."""
    params, origin = merge(layers)
    types = {**COMMON, **definition_types(definitions)}
    for definition in definitions or []:
        if "default" in definition and params.get(definition["name"]) is None:
            params[definition["name"]] = definition["default"]
    problems = []
    for key, value in params.items():
        opt_type = types.get(key)
        if opt_type is None or value is None:
            continue
        if isinstance(opt_type, ListOf) and not isinstance(value, list):
            value = [value]   # CANDLE's nargs keys accept a single value
        try:
            params[key] = opt_type.check(value)
        except OptTypeError as err:
            problems.append(f"{key}{err.subpath}: expected {err.expected}, got {value!r}"
                            f"{describe_origin(origin, key) or ' (a default of additional_definitions)'}")
    missing = [key for key in required or [] if params.get(key) in (None, "")]
    if missing:
        where = ", ".join(layer for layer, _ in layers)
        problems.append(f"required parameter{'s' if len(missing) > 1 else ''} missing: {', '.join(missing)} "
                        f"(set in none of: {where}); give {'them' if len(missing) > 1 else 'it'} in the defaults "
                        "file or with --set key=value")
    if problems:
        raise OptsError(problems)
    known = set(types) | set(required or [])
    warnings = [f"{key}: not a known CANDLE key nor in additional_definitions{describe_origin(origin, key)}"
                + _closest(key, known) for key in params if key not in known and _closest(key, known)]
    return params, warnings


def _closest(key: str, known: set[str]) -> str:
    """A hint only for keys that look like a typo of a known one; other unknown keys are the script's own."""
    hint = did_you_mean(key, sorted(known), cutoff=0.8)
    return f"; {hint}" if hint else ""

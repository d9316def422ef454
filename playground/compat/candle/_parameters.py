"""candle_lib's parameter API: `Benchmark`, `finalize_parameters`, `ArgumentStruct`, `check_flag_conflicts`.

Precedence as candle_lib's: the common parameters' defaults and the `additional_definitions` defaults, then the
defaults file (`<filepath>/<defmodel>`, or `--config_file`), then the command line (`sys.argv`: `--key value`,
`--key v1 v2` for list keys, `--key=value`). A key the command line names must be a common parameter, a
definition, or a key of the defaults file (candle_lib refuses the last kind; accepting it lets `--set` reach
any key of the file); an unknown key or a value that does not convert exits 2 with argparse's message.
Then, as candle_lib does: `data_type` becomes a numpy class, `output_dir` becomes
`<output_dir>/<experiment_id>/<run_id>` (created), `data_dir` is `$CANDLE_DATA_DIR/<model_name>/Data`, the
required keys are checked and the params are written to `<output_dir>/final_params.txt`.
"""
from __future__ import annotations

import ast
import configparser
import os
import sys
from pprint import PrettyPrinter, pprint
from typing import Any

from playground.processes.exit_codes import EXIT_USAGE
from playground.compat.candle._common import (COMMON, CHOICES, DATA_TYPES, DEFAULT_DATATYPE, DEFAULT_SEED,
                                              DEFAULT_TIMEOUT, UNSET, str2bool)

CONFLICT_LIST = [["clr_flag", "warmup_lr"], ["clr_flag", "reduce_lr"]]


class ArgumentStruct:
    """The params as attributes: `args = ArgumentStruct(**params); args.epochs`."""

    def __init__(self, **entries: Any) -> None:
        self.__dict__.update(entries)


class Benchmark:
    """A benchmark's defaults file, definitions and required keys; subclasses override `set_locals`."""

    def __init__(self, filepath: str, defmodel: str, framework: str, prog: str = None, desc: str = None,
                 parser=None, additional_definitions=None, required=None) -> None:
        if os.getenv("CANDLE_DATA_DIR") is None:
            raise Exception("ERROR ! Required system variable not specified.  You must define CANDLE_DATA_DIR "
                            "... Exiting")
        fname = os.path.join(filepath, defmodel)
        if not os.path.isfile(fname):
            raise Exception(f"ERROR ! Required default configuration file not available.  File {fname} ... Exiting")
        self.model_name = self.get_parameter_from_file(fname, "model_name")
        self.parser = parser
        self.prog = prog or os.path.basename(sys.argv[0] or "benchmark")
        self.desc = desc
        self.file_path, self.default_model, self.framework = filepath, defmodel, framework
        self.required: set[str] = set(required) if required is not None else set()
        self.additional_definitions: list[dict] = list(additional_definitions or [])
        self.set_locals()

    def set_locals(self) -> None:
        """Set `self.required` and `self.additional_definitions` (the hook benchmarks override)."""

    def parse_parameters(self) -> None:
        self.conffile = os.path.join(self.file_path, self.default_model)

    def read_config_file(self, file: str) -> dict:
        """Every section's `key = value` (the first occurrence of a key wins), values as Python literals."""
        config = configparser.ConfigParser()
        config.read(file)
        params: dict[str, Any] = {}
        for section in config.sections():
            for key, text in config.items(section):
                params.setdefault(key, _literal(text))
        return params

    def get_parameter_from_file(self, absfname: str, param: str) -> str:
        """The raw value of the first line of the file that mentions `param`."""
        with open(absfname, encoding="utf-8") as handle:
            for line in handle:
                if param in line:
                    value = line.split("=")[-1].strip("'\n ")
                    if value:
                        return value
                    break
        raise Exception(f"ERROR ! Parameter {param} was not found in file {absfname}... Exiting")

    def check_required_exists(self, gparam: dict) -> None:
        missing = self.required.difference(gparam)
        if missing:
            raise Exception("ERROR ! Required parameters are not specified.  These required parameters have not "
                            f"been initialized: {sorted(missing)}... Exiting")


def finalize_parameters(bmk: Benchmark) -> dict:
    """The benchmark's params: defaults, then its defaults file, then the command line (see the module doc)."""
    bmk.parse_parameters()
    given = _command_line(sys.argv[1:], bmk.prog)
    conffile = _config_file(bmk, given.pop("config_file", None))
    if not os.path.isfile(conffile):
        raise Exception(f"ERROR ! Specified configuration file {conffile} not found ... Exiting")
    print("Configuration file: ", conffile)
    from_file = bmk.read_config_file(conffile)
    definitions = {d["name"]: d for d in bmk.additional_definitions if "name" in d}
    params = _defaults(definitions)
    params.update(from_file)
    params.update({key: _convert(key, tokens, definitions, from_file, bmk.prog) for key, tokens in given.items()})
    _candle_derived(params)
    bmk.check_required_exists(params)
    print("Params:")
    pprint(params)
    with open(os.path.join(params["output_dir"], "final_params.txt"), "w", encoding="utf-8") as handle:
        PrettyPrinter(stream=handle).pprint(params)
    check_flag_conflicts(params)
    return params


def check_flag_conflicts(params: dict) -> None:
    """Raise when flags that exclude each other (clr_flag with warmup_lr or reduce_lr) are both True."""
    for flags in CONFLICT_LIST:
        if sum(1 for flag in flags if params.get(flag) is True) > 1:
            raise Exception("ERROR ! Conflict in flag specification. These flags should not be used together: "
                            f"{sorted(flags)}... Exiting")


def _literal(text: str) -> Any:
    try:
        return ast.literal_eval(text.strip())
    except (ValueError, SyntaxError):
        return text.strip()


def _command_line(argv: list[str], prog: str) -> dict[str, list[str]]:
    """`--key v1 v2 --other=v` -> {"key": ["v1", "v2"], "other": ["v"]} (tokens, converted later)."""
    given: dict[str, list[str]] = {}
    key = None
    for token in argv:
        if token.startswith("--") and len(token) > 2 and not _is_number(token):
            key, _, value = token[2:].partition("=")
            given[key] = [value] if "=" in token else []
        elif key is None:
            _usage_error(prog, f"unrecognized arguments: {token}")
        else:
            given[key].append(token)
    return given


def _is_number(token: str) -> bool:
    try:
        float(token)
        return True
    except ValueError:
        return False


def _config_file(bmk: Benchmark, given: list[str] | None) -> str:
    if not given:
        return bmk.conffile
    text = given[-1]
    if os.path.isabs(text):
        return text
    if text.startswith("./"):
        return os.path.join(bmk.file_path, text)
    return os.path.join(os.environ["CANDLE_DATA_DIR"], text)


def _defaults(definitions: dict[str, dict]) -> dict:
    params = {key: default for key, (_, default, _) in COMMON.items() if default is not UNSET}
    params.update({key: d["default"] for key, d in definitions.items() if d.get("default", UNSET) is not UNSET})
    return params


def _convert(key: str, tokens: list[str], definitions: dict[str, dict], from_file: dict, prog: str) -> Any:
    """The command line's tokens for `key`, typed as argparse would for its definition."""
    if key in definitions:
        definition = definitions[key]
        convert = definition.get("type", str)
        if definition.get("action") in ("store_true", "store_false"):
            convert, tokens = str2bool, tokens or [str(definition["action"] == "store_true")]
        many, choices = definition.get("nargs") in ("+", "*") or isinstance(definition.get("nargs"), int), \
            definition.get("choices")
    elif key in COMMON:
        convert, _, nargs = COMMON[key]
        many, choices = nargs is not None, CHOICES.get(key)
    elif key in from_file:
        known = from_file[key]
        convert = str2bool if isinstance(known, bool) else _literal
        many, choices = isinstance(known, (list, tuple)), None
    else:
        _usage_error(prog, f"unrecognized arguments: --{key}")
    if not tokens or (len(tokens) > 1 and not many):
        _usage_error(prog, f"argument --{key}: expected {'at least one argument' if many else 'one argument'}")
    try:
        values = [convert(token) for token in tokens]
    except (ValueError, TypeError) as err:
        _usage_error(prog, f"argument --{key}: invalid {getattr(convert, '__name__', 'value')} value: "
                           f"{tokens!r} ({err})")
    if choices is not None and any(v not in choices for v in values):
        _usage_error(prog, f"argument --{key}: invalid choice: {tokens!r} (choose from {', '.join(map(repr, choices))})")
    return values if many else values[0]


def _usage_error(prog: str, message: str) -> None:
    print(f"{prog}: error: {message}", file=sys.stderr)
    raise SystemExit(EXIT_USAGE)   # what argparse exits with, as candle_lib's parser does


def _candle_derived(params: dict) -> None:
    """data_type as a numpy class; data_dir and output_dir as candle_lib lays them out; seed and timeout."""
    if "data_type" not in params:
        params["data_type"] = DEFAULT_DATATYPE
    elif params["data_type"] in DATA_TYPES:
        params["data_type"] = DATA_TYPES[params["data_type"]]
    root = os.environ["CANDLE_DATA_DIR"]
    out_root = os.getenv("CANDLE_OUTPUT_DIR") or root
    model = str(params.get("model_name", "model"))
    params["data_dir"] = os.path.abspath(os.path.join(root, model, "Data"))
    output = os.path.join(out_root, model, params.get("output_dir") or "Output", str(params["experiment_id"]),
                          str(params["run_id"]))
    params["output_dir"] = os.path.abspath(output)     # an absolute output_dir replaces the root, as in os.path.join
    os.makedirs(params["data_dir"], exist_ok=True)
    os.makedirs(params["output_dir"], exist_ok=True)
    params.setdefault("rng_seed", DEFAULT_SEED)
    params.setdefault("timeout", DEFAULT_TIMEOUT)

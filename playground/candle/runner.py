"""Runs a CANDLE benchmark script in this process: params layered and checked, run(params), the run folder.

Exit codes as for every run: 0 done, 2 unusable script or params (nothing was run), 1 the run failed, 75
stopped by SIGTERM/SIGINT after the checkpoint helper wrote a checkpoint (re-run the same command to resume), or
stopped without writing because a later attempt claimed the run folder (playground/restarts/fence.py).
"""
from __future__ import annotations

import importlib.util
import logging
import os
import sys
import traceback
from dataclasses import dataclass, field
from types import ModuleType
from typing import IO

from playground.candle import benchmark
from playground.candle.log_metrics import LogMetrics
from playground.candle.list_values import ListValueError, split_candle_list
from playground.candle.params import read_defaults_file, read_parameters_file, resolve_params
from playground.candle.script_process import outputs_inside, run_keys, script_argv, script_process
from playground.options.layers import OptsError
from playground.options.user_input.set_items import PARAM_KEY, parse_value, split_sets
from playground.outputs.run_folder import RunFolder
from playground.processes.exit_codes import EXIT_DONE, EXIT_FAILED, EXIT_STOPPED, EXIT_USAGE, UserError
from playground.restarts.fence import Fence

log = logging.getLogger("playground")


@dataclass
class CandleCommand:
    script: str
    defaults_file: str | None = None
    parameters_file: str | None = None
    sets: list[str] = field(default_factory=list)
    run_dir: str | None = None
    test: bool = False
    script_args: list[str] = field(default_factory=list)   # CANDLE's form after SCRIPT: --epochs 3 --dense 8 4


# `--test` on a CANDLE script: the script owns its loop, so the test is one epoch, with every checkpoint read back.
TEST_SETS = ["epochs=1", "ckpt_restart_mode=off", "ckpt_save_interval=1", "ckpt_skip_epochs=0"]


def run_candle(command: CandleCommand) -> int:
    return _run_test(command) if command.test else _run_candle_once(command)


def _run_candle_once(command: CandleCommand) -> int:
    from playground.launch.prepare import default_run_dir
    run_dir = os.path.abspath(command.run_dir or default_run_dir(os.path.splitext(os.path.basename(command.script))[0]))
    try:
        sets = command_sets(command)
        files = given_files(command)
        outputs_inside(sets, run_dir)       # so the script's own parser reads them inside the run folder too
        argv = script_argv(os.path.abspath(command.script), sets, run_dir, command.defaults_file)
        with script_process(argv, run_dir):
            module = load_script(command.script)
            params, warnings = resolved_params(module, command, sets, files, run_dir)
            for key, value in run_keys(run_dir).items():
                params.setdefault(key, value)
            outputs_inside(params, run_dir)
            for line in warnings:
                print(f"playground candle: warning: {line}", file=sys.stderr)
            return _run(module, params, command.script, run_dir, command.test)
    except OptsError as err:
        print(f"playground candle: error: {err}", file=sys.stderr)
        return EXIT_USAGE


def command_sets(command: CandleCommand) -> dict:
    """--set items, then CANDLE's `--key value ...` after SCRIPT, as one mapping (later wins); CANDLE's list
    strings ("1500 500") become lists. Raises OptsError naming the item."""
    sets = dict(split_sets(command.sets, PARAM_KEY))
    sets.update(_script_args_as_sets(command.script_args))
    for key, value in sets.items():
        try:
            split = split_candle_list(value)
        except ListValueError as err:
            raise OptsError(f"{key}: {err} (from --set or the command line)") from None
        if split is not None:
            sets[key] = split
    return sets


def _script_args_as_sets(args: list[str]) -> dict:
    """`--epochs 3 --dense 8 4 --name=x` -> {"epochs": 3, "dense": [8, 4], "name": "x"}."""
    sets: dict = {}
    key = None
    for token in args:
        if token.startswith("--") and len(token) > 2:
            key, eq, text = token[2:].partition("=")
            sets[key] = [parse_value(text)] if eq else []
        elif key is None:
            raise OptsError(f"{token!r} after SCRIPT: expected CANDLE's --key value form (e.g. --epochs 3), "
                            "or --set key=value")
        else:
            sets[key].append(parse_value(token))
    for key, values in sets.items():
        if not values:
            raise OptsError(f"--{key} after SCRIPT has no value; write --{key} VALUE (or --set {key}=VALUE)")
        sets[key] = values[0] if len(values) == 1 else values
    return sets


def _run_test(command: CandleCommand) -> int:
    """One epoch in a temporary folder (unless --run-dir), each checkpoint read back and compared; a summary."""
    import shutil
    import tempfile

    own = command.run_dir is None
    run_dir = command.run_dir or tempfile.mkdtemp(prefix="playground-test-")
    test = CandleCommand(command.script, command.defaults_file, command.parameters_file, command.sets, run_dir,
                         test=True, script_args=[*command.script_args, *(f"--{item}" for item in TEST_SETS)])
    code = _run_candle_once(test)
    if code != EXIT_DONE:
        print(f"playground candle: test FAILED (exit code {code}; the first error is above). Run folder kept: "
              f"{run_dir}", file=sys.stderr)
        return EXIT_USAGE if code == EXIT_USAGE else EXIT_FAILED
    print(f"test passed: {command.script} ran one epoch; its checkpoint was written, read back and equal to the "
          f"model, optimizer and random state in memory\n  run folder: {run_dir}{' (temporary, removed)' if own else ''}")
    if own:
        shutil.rmtree(run_dir, ignore_errors=True)
    return EXIT_DONE


def load_script(path: str) -> ModuleType:
    """Import the script as a module named after its file, its folder first on sys.path (CANDLE scripts import
    their sibling modules). Raises OptsError when it cannot be imported or lacks the contract's functions."""
    if not os.path.isfile(path):
        raise OptsError(f"SCRIPT {path}: no such file")
    folder, name = os.path.dirname(os.path.abspath(path)), os.path.splitext(os.path.basename(path))[0]
    sys.path.insert(0, folder)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as err:  # noqa: BLE001 - any import-time error makes the script unusable
        raise OptsError(f"SCRIPT {path}: importing it failed: {type(err).__name__}: {err}") from err
    missing = [f for f in ("initialize_parameters", "run") if not callable(getattr(module, f, None))]
    if missing:
        raise OptsError(f"SCRIPT {path}: a CANDLE script defines initialize_parameters() and run(params); "
                        f"{' and '.join(missing)} {'is' if len(missing) == 1 else 'are'} missing")
    return module


def given_files(command: CandleCommand) -> dict[str, dict]:
    """The params of --defaults-file and --parameters-file, read before the script is imported: a file that
    cannot be used stops the command (exit 2) before any of the script's code runs."""
    files = {}
    if command.defaults_file:
        files["defaults_file"] = read_defaults_file(command.defaults_file)
    if command.parameters_file:
        files["parameters_file"] = read_parameters_file(command.parameters_file)
    return files


def resolved_params(module: ModuleType, command: CandleCommand, sets: dict, files: dict[str, dict],
                    run_dir: str) -> tuple[dict, list[str]]:
    """initialize_parameters(), then --defaults-file, --parameters-file (as given_files read them), --set; checked
    against the script's additional_definitions and required (module attributes, or what it gave
    initialize_parameters)."""
    benchmark.set_command_context(command.defaults_file and os.path.abspath(command.defaults_file))
    try:
        base = module.initialize_parameters()
    except OptsError:
        raise
    except SystemExit as stop:    # candle_lib's argument parser exits 2 on a bad command line, after its message
        raise OptsError(f"SCRIPT {command.script}: initialize_parameters() exited with code {stop.code} (its "
                        "message is above)") from None
    except Exception as err:  # noqa: BLE001
        raise OptsError(f"SCRIPT {command.script}: initialize_parameters() failed: {type(err).__name__}: {err}") \
            from err
    if not isinstance(base, dict):
        raise OptsError(f"SCRIPT {command.script}: initialize_parameters() must return a dict of params, got "
                        f"{type(base).__name__}")
    used = benchmark.called_with.get("defaults_file")
    layers = [(f"defaults file {used}" if used else "initialize_parameters()", dict(base))]
    if command.defaults_file and used != os.path.abspath(command.defaults_file):
        layers.append((f"--defaults-file {command.defaults_file}", files["defaults_file"]))
    if command.parameters_file:
        layers.append((f"--parameters-file {command.parameters_file}", files["parameters_file"]))
    if sets:
        layers.append(("--set", sets))
    definitions = getattr(module, "additional_definitions", None) or benchmark.called_with.get("additional_definitions")
    required = getattr(module, "required", None) or benchmark.called_with.get("required")
    params, warnings = resolve_params(layers, definitions, required)
    return _objects_kept(base, _parsed_kept(base, params, sets, run_dir)), warnings


def _parsed_kept(base: dict, params: dict, sets: dict, run_dir: str) -> dict:
    """When the script parsed its command line (candle_lib's finalize_parameters: its params hold the run_id and
    experiment_id we passed), the values it made of our --set items stay: `--set hidden=6` is [6] for a `nargs`
    key and `--set noise=yes` True for a str2bool one, as the script's parser made them."""
    passed = {**run_keys(run_dir), **sets}
    if all(base.get(key) == passed[key] for key in ("run_id", "experiment_id")):
        params.update({key: base[key] for key in sets if key in base})
    return params


def _objects_kept(base: dict, params: dict) -> dict:
    """A value the script made that JSON cannot hold (candle_lib's data_type, numpy.float32) stays itself where a
    later layer gives it back as opts.json recorded it ("numpy.float32"), as `--parameters-file DIR/opts.json`
    does."""
    from playground.candle.candle_run import recordable
    for key, value in base.items():
        if params.get(key) is not value and recordable(value) != value and params.get(key) == recordable(value):
            params[key] = value
    return params


def _run(module: ModuleType, params: dict, script: str, run_dir: str, test: bool = False) -> int:
    from playground.candle.candle_lib_callback import recorded_checkpoint_values
    from playground.candle.history import history_lists
    from playground.candle.candle_run import CandleRun, activate
    from playground.checkpoints.preemption import Preempted
    from playground.outputs.run_folder_lock import hold_run_folder
    from playground.outputs.run_log import close_logging, setup_logging
    from playground.launch import deferred_dynamo
    from playground.launch.spawn import fenced_line
    from playground.restarts.fence import Fenced

    deferred_dynamo.install()   # the script's optimizer does not import the compiler; torch.compile still would

    folder = CandleRun(run_dir, script)
    folder.test_mode = test
    try:
        hold_run_folder(run_dir)     # one live run per folder: another is refused (exit 2) before anything is written
        folder.write_opts(params)
    except OSError as err:
        print(f"playground candle: error: --run-dir {run_dir}: cannot write there: {err.strerror}", file=sys.stderr)
        return EXIT_USAGE
    except Fenced as err:
        print(fenced_line(err), file=sys.stderr)
        return EXIT_STOPPED
    setup_logging(run_dir, 0)
    activate(folder)     # the checkpoint helper finds it, and installs the stop handler: without the helper a
                         # SIGTERM stops the script at once, as it would outside playground
    stdout, stderr = sys.stdout, sys.stderr
    train_log = open(RunFolder(run_dir).log, "a", encoding="utf-8")
    printed = LogMetrics()
    sys.stdout, sys.stderr = (_Tee(stdout, train_log, folder.fence, printed),     # the script's prints too
                              _Tee(stderr, train_log, folder.fence, printed))
    try:
        log.info("running %s in %s", os.path.abspath(script), run_dir)
        with recorded_checkpoint_values(folder):
            returned = module.run(params)
        lists = history_lists(returned)
        # what the checkpoint callback was given, then what the history and the printed lines add to it
        folder.add_lists(lists)
        folder.add_lists(printed.lists())
        folder.model_path = folder.model_path or candle_lib_last_checkpoint(params)
        folder.write_results(lists)
        log.info("done: results in %s", folder.outputs.results_path)
        print(final_metrics_line(folder.records))
        if test and folder.model_path is None:
            log.error("playground candle: the test wrote no checkpoint: does run(params) save with the checkpoint "
                      "helper (playground.candle.CandleCheckpoint)?")
            return EXIT_FAILED
        return EXIT_DONE
    except Fenced as err:
        print(fenced_line(err), file=stderr)
        return EXIT_STOPPED
    except Preempted as stop:
        log.info("stopped by %s after a checkpoint; re-run the same command (same --run-dir) to resume. Exit code "
                 "%d.", stop, EXIT_STOPPED)
        return EXIT_STOPPED
    except UserError as err:   # a checkpoint that cannot be written, a history it cannot read
        log.error("playground candle: error: %s", err)
        return EXIT_FAILED
    except Exception:  # noqa: BLE001 - the script's own failure: its traceback, then exit 1
        traceback.print_exc()
        log.error("playground candle: %s failed (traceback above)", script)
        return EXIT_FAILED
    finally:
        sys.stdout, sys.stderr = stdout, stderr
        train_log.close()
        folder.preemption.uninstall()
        activate(None)
        close_logging()


def final_metrics_line(records: list[dict]) -> str:
    """`final metrics (epoch 3 of 3): loss 0.12, val_loss 0.2` from the last record, or that there were none."""
    if not records:
        return ("final metrics: none (the script returned no history, gave no values to a checkpoint callback "
                "and printed no epoch lines playground reads; docs/candle.md, Metrics)")
    last = records[-1]
    values = ", ".join(f"{k} {v!r}" for k, v in last.items()
                       if k not in ("index", "kind", "epoch", "epochs", "samples", "wall_time"))
    return f"final metrics (after epoch {last['epoch'] + 1}): {values or 'none'}"


def candle_lib_last_checkpoint(params: dict) -> str | None:
    """The model file candle_lib's own CandleCkptPyTorch left as `last` in ckpt_directory, if any."""
    folder = params.get("ckpt_directory")
    path = os.path.join(str(folder), "last", "model.h5") if folder else None
    return os.path.realpath(path) if path and os.path.exists(path) else None


class _Tee:
    """Writes to the terminal and, while this attempt holds the run folder, to train.log."""

    def __init__(self, terminal: IO[str], copy: IO[str], fence: Fence, reader: LogMetrics) -> None:
        self.terminal, self.copy, self.fence, self.reader = terminal, copy, fence, reader

    def write(self, text: str) -> int:
        self.reader.write(text)
        if not self.fence.superseded():
            self.copy.write(text)
            self.copy.flush()   # so nothing buffered before the claim lands in the file after it
        return self.terminal.write(text)

    def flush(self) -> None:
        if not self.fence.superseded():
            self.copy.flush()
        self.terminal.flush()

    def __getattr__(self, name: str):
        return getattr(self.terminal, name)

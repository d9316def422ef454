"""Evaluate a checkpoint: one full test pass of a run's opts (or new ones) on its weights, on 1 or N processes.

    playground eval runs/first                      the `last` checkpoint of that run, with the run's opts
    playground eval runs/first/checkpoints/model_checkpoint_epoch2.pt --set input.test_input_path=other/
    playground eval CKPT --parameters-file new_opts.json --set distributed.num_cpus=2

The evaluation is an ordinary run with `num_epochs: 0` and the checkpoint as `model_param.pretrained_model`,
in its own folder (default RUN_DIR/eval-<time>); it prints the metrics and writes them to eval.json there.
Exit codes as for `playground run`.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time

from playground.outputs.run_folder import RunFolder
from playground.processes.exit_codes import EXIT_DONE, EXIT_USAGE, UserError


class EvalError(UserError, ValueError):
    pass


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("target", metavar="CHECKPOINT_OR_RUN_DIR",
                        help="a checkpoint file (.pt), or a run folder (its `last` checkpoint is evaluated)")
    parser.add_argument("--parameters-file", metavar="FILE",
                        help="opts to evaluate with (default: the run's opts.json, else the checkpoint's own opts)")
    parser.add_argument("--set", metavar="SECTION.KEY=VALUE", action="append", default=[], dest="sets",
                        help="override one key of those opts (repeatable); VALUE as for playground run --set")
    parser.add_argument("--run-dir", metavar="DIR", help="the evaluation's folder (default RUN_DIR/eval-<time>)")


def main(args: argparse.Namespace) -> int:
    from playground.options.layers import OptsError, load_blob_file, sets_layer
    from playground.options.registry import ComponentError
    from playground.launch.prepare import default_run_dir, prepare

    try:
        checkpoint, run_dir = find_checkpoint(args.target)
        base = load_blob_file(args.parameters_file) if args.parameters_file else base_opts(checkpoint, run_dir)
        sets = sets_layer(args.sets)
        out = args.run_dir or (RunFolder(run_dir).evaluation(time.strftime('%Y%m%d-%H%M%S')) if run_dir
                               else default_run_dir("eval"))
        layers = [(args.parameters_file or "the run's opts", base), ("playground eval", eval_layer(checkpoint, out))]
        if sets:
            layers.append(("--set", sets))
        prepared = prepare(layers, run_dir=out)
    except (EvalError, OptsError, ComponentError) as err:
        print(f"playground eval: error: {err}", file=sys.stderr)
        return EXIT_USAGE
    from playground.launch.jobs import TRAIN
    from playground.launch.spawn import launch
    code = launch(prepared, TRAIN)
    if code != EXIT_DONE:
        return code
    return report(checkpoint, prepared.run_dir)


def find_checkpoint(target: str) -> tuple[str, str | None]:
    """(checkpoint file, run folder or None) for a checkpoint file or a run folder."""
    from playground.checkpoints.files import read_pointer

    from playground.options.registry import use_recorded_module_map

    if os.path.isfile(target):
        folder = os.path.dirname(os.path.dirname(os.path.abspath(target)))
        if not os.path.isfile(RunFolder(folder).opts):
            return os.path.abspath(target), None
        _refuse_candle_run(folder, target)
        use_recorded_module_map(RunFolder(folder).opts)
        return os.path.abspath(target), folder
    if not os.path.isdir(target):
        raise EvalError(f"{target} is neither a checkpoint file nor a run folder")
    run_dir = os.path.abspath(target)
    opts_path = RunFolder(run_dir).opts
    if not os.path.isfile(opts_path):
        raise EvalError(f"{target} is not a run folder: opts.json is missing")
    _refuse_candle_run(run_dir, target)
    use_recorded_module_map(opts_path)
    with open(opts_path, encoding="utf-8") as handle:
        folder = json.load(handle)["opts"].get("output", {}).get("checkpoint_folder") or RunFolder(run_dir).checkpoints
    last = read_pointer(folder, "last")
    if last is None:
        raise EvalError(f"{folder} has no 'last' checkpoint to evaluate; name a checkpoint file instead")
    return os.path.abspath(last), run_dir


def _refuse_candle_run(run_dir: str, target: str) -> None:
    """A `playground candle` run (its opts.json names the script) has params, not opts: its network lives in the
    script, which eval and predict cannot build."""
    try:
        with open(RunFolder(run_dir).opts, encoding="utf-8") as handle:
            script = json.load(handle).get("script")
    except (OSError, ValueError):
        return
    if script:
        raise EvalError(f"{target} is from a run of the CANDLE script {script} (`playground candle`); eval and predict "
                        "read runs of opts blobs and trial classes (`playground run`) only. The script's own "
                        f"validation metrics are in {RunFolder(run_dir).metrics}")


def base_opts(checkpoint: str, run_dir: str | None) -> dict:
    """The run's resolved opts, else those stored in the checkpoint."""
    if run_dir is not None:
        with open(RunFolder(run_dir).opts, encoding="utf-8") as handle:
            return json.load(handle)["opts"]
    import torch
    try:
        state = torch.load(checkpoint, map_location="cpu", weights_only=True)
    except Exception as err:
        raise EvalError(f"{checkpoint}: cannot read it as a checkpoint: {type(err).__name__}: {err}") from None
    if not isinstance(state, dict) or not isinstance(state.get("opts"), dict):
        raise EvalError(f"{checkpoint} holds no opts (not a playground checkpoint); give --parameters-file")
    return state["opts"]


def eval_layer(checkpoint: str, out: str) -> dict:
    """No training, the checkpoint's weights, and nothing written outside the evaluation's folder."""
    return {"model_param": {"pretrained_model": checkpoint, "reset_epoch": False},
            "epoch_iter": {"num_epochs": 0},
            "output": {"ckpt_restart_mode": "off", "checkpoint_folder": RunFolder(out).checkpoints, "plots": []}}


def report(checkpoint: str, out: str) -> int:
    from playground.outputs.atomic_files import write_json
    from playground.outputs.run_records import read_run

    records = read_run(out).records
    full = [r for r in records if r.get("kind") == "epoch"]
    if not full:
        print("playground eval: error: the opts have no test set (input gave no test dataset): nothing was evaluated",
              file=sys.stderr)
        return EXIT_USAGE
    record = full[-1]
    fixed = {"index", "kind", "epoch", "epoch_iter", "iteration", "samples", "epochs", "samples_per_sec",
             "secs_per_train", "lr", "wall_time"}
    metrics = {k: v for k, v in record.items() if k not in fixed and v is not None}
    path = RunFolder(out).eval_results
    write_json(path, {"checkpoint": checkpoint, "metrics": metrics, "record": record})
    print(f"evaluated {checkpoint}")
    for name, value in metrics.items():
        print(f"  {name}: {value:.6g}")
    print(f"written to {path}")
    return EXIT_DONE

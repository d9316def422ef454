"""`playground run --test` (and `AnyExpOnTerm.py --test`): prepare the shrunk run, launch it with the checks of
one_batch_check.py as its job (jobs.OneBatchCheck), and say what was done. Exit codes (processes/exit_codes.py):
EXIT_DONE passed, EXIT_USAGE unusable opts (nothing ran), EXIT_FAILED the run or a check failed (the first error
is printed)."""
from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time

from playground.processes.exit_codes import EXIT_DONE, EXIT_FAILED, EXIT_USAGE


def run_test(args: argparse.Namespace) -> int:
    from playground.data.form_check import check_input_forms
    from playground.trainer.trial import trial_for_checks
    from playground.launch.spawn import launch
    from playground.launch.jobs import OneBatchCheck
    from playground.launch.one_batch_check import shrink_layer
    from playground.options.loader import resolve_opts
    from playground.options.layers import OptsError
    from playground.options.registry import ComponentError
    from playground.launch.prepare import layers_from_args, prepare
    from playground.distribution.topology import topology_from

    started = time.monotonic()
    own_folder = args.run_dir is None
    run_dir = args.run_dir or tempfile.mkdtemp(prefix="playground-test-")
    try:
        layers = layers_from_args(args)
        resolved = resolve_opts(layers, strict=args.strict)
        world = topology_from(resolved.opts).world_size
        layers.append(("--test", shrink_layer(resolved.opts, world)))
        prepared = prepare(layers, run_dir=run_dir, strict=args.strict)
        check_input_forms(prepared.resolved, trial_for_checks)
    except (OptsError, ComponentError) as err:
        print(f"playground: error: {err}", file=sys.stderr)
        _remove(run_dir, own_folder)
        return EXIT_USAGE
    code = launch(prepared, OneBatchCheck())
    if code != EXIT_DONE:
        print(f"playground: test FAILED (exit code {code}; the first error is above). Run folder kept: {run_dir}",
              file=sys.stderr)
        return EXIT_USAGE if code == EXIT_USAGE else EXIT_FAILED
    print(_summary(prepared.opts, world, run_dir, time.monotonic() - started, own_folder))
    _remove(run_dir, own_folder)
    return EXIT_DONE


def _summary(opts: dict, world: int, run_dir: str, seconds: float, temporary: bool) -> str:
    from playground.outputs.run_folder import RunFolder
    e = opts["epoch_iter"]
    with open(RunFolder(run_dir).metrics, encoding="utf-8") as handle:
        record = json.loads(handle.read().splitlines()[-1])
    metrics = ", ".join(f"{m['name']} {record.get(m['name']):.4g}" for m in opts["output"]["metrics"]
                        if record.get(m["name"]) is not None)
    test_batch = e["test_batch_per_device"] or e["batch_per_device"]
    return (f"test passed in {seconds:.1f} s on {world} rank(s):\n"
            f"  1 training batch of {e['batch_per_device']} per rank x {opts['model_param']['grad_accum_steps']} "
            f"micro-batch(es), 1 validation batch of up to {test_batch} per rank\n"
            f"  metrics produced: {metrics or '(none declared)'}\n"
            "  checkpoint written, read back equal to the trainer, and resumed into a fresh trainer equal to the file\n"
            f"  run folder: {run_dir}{' (temporary, removed)' if temporary else ''}")


def _remove(folder: str, own: bool) -> None:
    if own:
        shutil.rmtree(folder, ignore_errors=True)

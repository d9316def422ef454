"""Convert an original Caffe2 Playground .pkl checkpoint into a weights file for model_param.pretrained_model.

The file holds `{"model": state_dict, "epoch": ..., "lr": ..., "best_metric": ...}` (the last three when the
original recorded them).

The pickle is read with an unpickler that allows only numpy arrays and plain containers. The blob names are
the forward pass's business: the component named by --forward-pass (default explicit_resnet_forward) must
define `caffe2_blobs_to_state_dict(blobs, opts) -> (state_dict, notes)`. With --parameters-file, the opts of
the experiment that will load the weights are checked against the checkpoint. Exit codes: 0 written, 2 the
input, the opts or the component are unusable (nothing written).
"""
from __future__ import annotations

import argparse
import sys


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("input", metavar="IN.pkl", help="a checkpoint written by the original Caffe2 Playground")
    parser.add_argument("output", metavar="OUT.pt", help="the state_dict file to write (weights only)")
    parser.add_argument("--forward-pass", default="explicit_resnet_forward", metavar="NAME",
                        help="the forward-pass component whose network the checkpoint holds "
                             "(default: explicit_resnet_forward)")
    parser.add_argument("--parameters-file", metavar="FILE",
                        help="opts blob of the experiment that will load the result; its model_param keys are "
                             "checked against the checkpoint")


def main(args: argparse.Namespace) -> int:
    import torch

    from playground.outputs.atomic_files import write_with
    from playground.checkpoints.caffe2_pickle import Caffe2PickleError, read_caffe2_checkpoint
    from playground.options.layers import OptsError, load_blob_file
    from playground.options.registry import ComponentError, resolve
    from playground.processes.exit_codes import EXIT_DONE, EXIT_USAGE

    try:
        component = resolve(args.forward_pass, "forward_pass", where="--forward-pass")
        convert = getattr(component.module, "caffe2_blobs_to_state_dict", None)
        if not callable(convert):
            raise ComponentError(f"--forward-pass: {args.forward_pass} ({component.file}) defines no "
                                 "caffe2_blobs_to_state_dict(blobs, opts), so it cannot read Caffe2 checkpoints")
        opts = load_blob_file(args.parameters_file) if args.parameters_file else None
        checkpoint = read_caffe2_checkpoint(args.input)
        state, notes = convert(checkpoint.blobs, opts)
    except (ComponentError, OptsError, Caffe2PickleError, ValueError) as err:
        print(f"playground convert-caffe2-checkpoint: error: {err}", file=sys.stderr)
        return EXIT_USAGE
    # The weights under "model", beside the original's epoch, lr and best_metric as plain numbers (a
    # weights_only load reads them; pretrained_model with reset_epoch false continues from the epoch).
    saved = {"model": state, **{k: _number(v) for k, v in checkpoint.metadata.items()}}
    write_with(args.output, lambda handle: torch.save(saved, handle))
    print(f"{args.input}: {len(checkpoint.blobs)} blobs -> {args.output}: {len(state)} tensors "
          f"({args.forward_pass})")
    if checkpoint.scopes:
        print(f"  device scopes stripped: {', '.join(checkpoint.scopes)}")
    if checkpoint.metadata:
        print("  kept from the checkpoint: "
              + ", ".join(f"{k} {v}" for k, v in sorted(checkpoint.metadata.items())))
    for note in notes:
        print(f"  {note}")
    return EXIT_DONE


def _number(value: object) -> object:
    """A numpy scalar or 0-d array as a Python int or float; anything else as it is."""
    item = getattr(value, "item", None)
    return item() if callable(item) and getattr(value, "size", 1) == 1 else value

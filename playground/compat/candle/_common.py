"""candle_lib's registered common parameters: name -> (converter, default, nargs), and its fixed defaults.

These are the names every CANDLE benchmark accepts on its command line (candle_lib's parsing_utils tables),
with the type argparse converts a token to and the default argparse gives when neither the defaults file nor
the command line sets the key (`UNSET`: the key stays absent, argparse's SUPPRESS).
"""
from __future__ import annotations

import argparse
from typing import Any, Callable

import numpy as np

UNSET: Any = argparse.SUPPRESS
DEFAULT_SEED = 7102
DEFAULT_TIMEOUT = -1           # no timeout
DEFAULT_DATATYPE = np.float32
DATA_TYPES = {"f16": np.float16, "f32": np.float32, "f64": np.float64}


def str2bool(v: str) -> bool:
    """'yes', 'true', 't', 'y', '1' -> True; 'no', 'false', 'f', 'n', '0' -> False (any case); else
    argparse.ArgumentTypeError, as candle_lib's."""
    if isinstance(v, bool):
        return v
    text = str(v).lower()
    if text in ("yes", "true", "t", "y", "1"):
        return True
    if text in ("no", "false", "f", "n", "0"):
        return False
    raise argparse.ArgumentTypeError("Boolean value expected.")


Converter = Callable[[str], Any]
_S, _I, _F, _B = str, int, float, str2bool

COMMON: dict[str, tuple[Converter, Any, str | None]] = {
    # basic
    "config_file": (_S, UNSET, None), "data_type": (_S, UNSET, None), "rng_seed": (_F, UNSET, None),
    "train_bool": (_B, True, None), "eval_bool": (_B, UNSET, None), "timeout": (_I, UNSET, None),
    "gpus": (_I, UNSET, "+"), "profiling": (_B, False, None),
    # input and output
    "save_path": (_S, UNSET, None), "model_name": (_S, UNSET, None), "home_dir": (_S, UNSET, None),
    "train_data": (_S, UNSET, None), "val_data": (_S, UNSET, None), "test_data": (_S, UNSET, None),
    "output_dir": (_S, UNSET, None), "data_url": (_S, UNSET, None), "experiment_id": (_S, "EXP000", None),
    "run_id": (_S, "RUN000", None),
    # logging, preprocessing
    "verbose": (_B, False, None), "logfile": (_S, None, None), "scaling": (_S, UNSET, None),
    "shuffle": (_B, False, None), "feature_subsample": (_I, UNSET, None),
    # model
    "dense": (_I, UNSET, "+"), "conv": (_I, UNSET, "+"), "locally_connected": (_B, UNSET, None),
    "activation": (_S, UNSET, None), "out_activation": (_S, UNSET, None), "lstm_size": (_I, UNSET, "+"),
    "recurrent_dropout": (_F, UNSET, None), "dropout": (_F, UNSET, None), "pool": (_I, UNSET, None),
    "batch_normalization": (_B, UNSET, None), "loss": (_S, UNSET, None), "optimizer": (_S, UNSET, None),
    "metrics": (_S, UNSET, None),
    # training
    "epochs": (_I, UNSET, None), "batch_size": (_I, UNSET, None), "learning_rate": (_F, UNSET, None),
    "early_stop": (_B, UNSET, None), "momentum": (_F, UNSET, None), "initialization": (_S, UNSET, None),
    "val_split": (_F, UNSET, None), "train_steps": (_I, UNSET, None), "val_steps": (_I, UNSET, None),
    "test_steps": (_I, UNSET, None), "train_samples": (_I, UNSET, None), "val_samples": (_I, UNSET, None),
    # cyclic learning rate
    "clr_flag": (_B, UNSET, None), "clr_mode": (_S, UNSET, None), "clr_base_lr": (_F, UNSET, None),
    "clr_max_lr": (_F, UNSET, None), "clr_gamma": (_F, UNSET, None),
    # checkpoints
    "ckpt_restart_mode": (_S, "auto", None), "ckpt_checksum": (_B, False, None), "ckpt_skip_epochs": (_I, 0, None),
    "ckpt_directory": (_S, None, None), "ckpt_save_best": (_B, True, None),
    "ckpt_save_best_metric": (_S, "val_loss", None), "ckpt_save_weights_only": (_B, False, None),
    "ckpt_save_interval": (_I, 0, None), "ckpt_keep_mode": (_S, "linear", None), "ckpt_keep_limit": (_I, 5, None),
}
CHOICES = {"data_type": ["f16", "f32", "f64"], "ckpt_restart_mode": ["off", "auto", "required"]}

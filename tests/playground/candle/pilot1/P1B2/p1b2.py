"""A benchmark module in the shape of CANDLE's Pilot1/P1B2/p1b2.py (written here): Benchmarks' `common/`
appended to sys.path at import, as its Keras-era benchmarks do (a `candle` there wins over playground's),
a Benchmark subclass, one-hot data through candle.load_Xy_one_hot_data2, an accuracy evaluation."""
import logging
import os
import sys

import numpy as np

file_path = os.path.dirname(os.path.realpath(__file__))
sys.path.append(os.path.abspath(os.path.join(file_path, "..", "common")))

import candle  # noqa: E402 - after the path, as in Benchmarks

logger = logging.getLogger(__name__)

additional_definitions = [
    {"name": "reg_l2", "type": float, "default": 0.0, "help": "weight of the l2 regularization"},
]
required = ["data_url", "train_data", "test_data", "activation", "batch_size", "dense", "epochs",
            "feature_subsample", "learning_rate", "loss", "optimizer", "rng_seed", "scaling", "val_split", "shuffle"]


class BenchmarkP1B2(candle.Benchmark):
    def set_locals(self):
        self.required = set(required)
        self.additional_definitions = additional_definitions


def extension_from_parameters(params, framework):
    ext = framework + ".A={}.B={}.E={}".format(params["activation"], params["batch_size"], params["epochs"])
    for i, n in enumerate(params["dense"]):
        ext += ".D{}={}".format(i + 1, n)
    return ext


def load_data_one_hot(params, seed):
    file_train = candle.fetch_file(params["data_url"] + params["train_data"], subdir="Pilot1")
    file_test = candle.fetch_file(params["data_url"] + params["test_data"], subdir="Pilot1")
    return candle.load_Xy_one_hot_data2(file_train, file_test, class_col=["cancer_type"],
                                        drop_cols=["case_id", "cancer_type"], n_cols=params["feature_subsample"],
                                        shuffle=params["shuffle"], scaling=params["scaling"],
                                        validation_split=params["val_split"], dtype=params["data_type"], seed=seed)


def evaluate_accuracy_one_hot(y_pred, y_test):
    return {"accuracy": float(np.mean(y_pred.argmax(axis=1) == y_test.argmax(axis=1)))}

"""A benchmark module in the shape of CANDLE's Pilot1/P1B1/p1b1.py (written here): threads set at import, a
Benchmark subclass with definitions and required keys, load_data through candle.fetch_file and
candle.load_csv_data, the file name built from the params."""
import logging
import os

import candle

file_path = os.path.dirname(os.path.realpath(__file__))
logger = logging.getLogger(__name__)
candle.set_parallelism_threads()

additional_definitions = [
    {"name": "latent_dim", "type": int, "help": "latent dimensions"},
    {"name": "model", "default": "ae", "choices": ["ae", "vae"], "help": "model to use"},
    {"name": "residual", "type": candle.str2bool, "default": False, "help": "skip connections"},
]
required = ["activation", "batch_size", "dense", "epochs", "initialization", "loss", "optimizer", "rng_seed",
            "scaling", "val_split", "latent_dim", "feature_subsample"]


class BenchmarkP1B1(candle.Benchmark):
    def set_locals(self):
        self.required = set(required)
        self.additional_definitions = additional_definitions


def extension_from_parameters(params, framework=""):
    ext = framework + ".{}".format(params["model"])
    for i, n in enumerate(params["dense"]):
        ext += ".D{}={}".format(i + 1, n)
    return ext + ".A={}.B={}.E={}.L={}".format(params["activation"], params["batch_size"], params["epochs"],
                                               params["latent_dim"])


def load_data(params, seed):
    train_path = candle.fetch_file(params["data_url"] + params["train_data"], "Pilot1")
    test_path = candle.fetch_file(params["data_url"] + params["test_data"], "Pilot1")
    return candle.load_csv_data(train_path, test_path, x_cols=None, y_cols=["cancer_type"], drop_cols=["case_id"],
                                onehot_cols=["cancer_type"], n_cols=params["feature_subsample"],
                                shuffle=params["shuffle"], scaling=params["scaling"], dtype=params["data_type"],
                                validation_split=params["val_split"], return_dataframe=False, return_header=True,
                                seed=seed)

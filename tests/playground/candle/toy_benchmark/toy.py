"""A CANDLE benchmark's module, written the candle_lib way (as Pilot1/P1B1/p1b1.py): definitions, required
keys and a Benchmark subclass."""
import os

import candle

file_path = os.path.dirname(os.path.realpath(__file__))

additional_definitions = [
    {"name": "hidden", "nargs": "+", "type": int, "help": "widths of the hidden layers"},
    {"name": "noise", "type": candle.str2bool, "default": False, "help": "add noise to the inputs"},
]
required = ["epochs", "batch_size", "learning_rate", "hidden", "activation", "optimizer", "loss", "rng_seed"]


class BenchmarkToy(candle.Benchmark):
    def set_locals(self):
        self.required = set(required)
        self.additional_definitions = additional_definitions

"""Determined experiments run locally, unchanged: the experiment configuration (YAML), trial classes
(PyTorchTrial), 0.38's Trainer API scripts and Core API scripts, as playground runs and sweeps.

The API their code imports (`import determined`) is playground/compat/determined/, put first on the path of
the processes playground starts for a Determined experiment; what it needs from playground lives here. This
floor sits above launch/ and candle/ and below sweeps/: the sweep layer may read the experiment configuration
(experiment_config.py imports nothing heavy) but never the parts that train: `trials/` (a PyTorchTrial and 0.38's
Trainer API in the AnyExp loop) and `trial_main.py` (the harness of `module:Class` entrypoints).
"""

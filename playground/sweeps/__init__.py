"""Many runs: sweeps and hyperparameter search, each trial an ordinary run in its own folder and process.

The layer talks to runs only through their files (opts.json, metrics.jsonl, results.json, checkpoints) and exit
codes; it may import the options layer to validate keys, never the trainer (anyexp, worker, launch). Importing
this package is cheap: optuna, torch and matplotlib are imported inside the functions that need them.
"""

"""Many runs: sweeps and hyperparameter search, each trial an ordinary run in its own folder and process.

The layer talks to runs only through their files (opts.json, metrics.jsonl, results.json, checkpoints) and exit
codes; it may import the options layer to validate keys, never the trainer (anyexp, worker, launch). Importing
this package is cheap: optuna, torch and matplotlib are imported inside the functions that need them.

Its floors, lowest first; a module imports its own floor and those below, never one above (a layout test checks):

    errors.py    SweepError: a sweep that cannot start (exit 2)
    inputs/      what a sweep is given: spec, space, upf lines, restart file, storage URL, opts checks, prepare
    files/       the sweep folder on disk (sweep.json, trial.json, attempts.jsonl) and the metrics tail
    search/      the Optuna study, ASHA, storages (journal, PostgreSQL, gRPC proxy client), retries, Optuna's private API
    results/     summary.csv/.md, best.json, output.csv, result.txt, and the plots
    agents/      `sweep run` / `sweep agent`: slots, the coordinator, trial processes, heartbeats, leases, pause, warm start
    operations/  the other commands on a sweep folder: status/summary/plots, rebuild, preview, selftest, submit, serve
"""

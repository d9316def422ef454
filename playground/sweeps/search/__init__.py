"""Where the search happens: the Optuna study of a sweep (its sampler or ASHA, planned trials enqueued once) and
where it lives (the journal in the sweep folder, PostgreSQL, or a `sweep serve` gRPC proxy), with retries through
brief outages.

The study is opened, created and planned here (`study.py`); the agents' coordinator asks and tells through it.
Optuna's private API is used only in `_optuna_private.py`, which says why each use is needed (a layout test keeps
it there). Imports `inputs`, `files` and `errors`, nothing above.
"""

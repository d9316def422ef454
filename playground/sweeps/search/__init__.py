"""Where the search happens: the Optuna study of a sweep (its sampler or ASHA, planned trials enqueued once) and
where it lives (the journal in the sweep folder, PostgreSQL, or a `sweep serve` gRPC proxy), with retries through
brief outages.

Every Optuna call of the sweep layer is made from here or through `study.py`; Optuna's private API is used only in
`_optuna_private.py`, which says why each use is needed. Imports `inputs`, `files` and `errors`, nothing above.
"""

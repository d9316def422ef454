"""Where the search happens: the Optuna study of a sweep (its sampler or ASHA, planned trials enqueued once) and
where it lives (the journal in the sweep folder, PostgreSQL, or a `sweep serve` gRPC proxy), with retries through
brief outages.

Optuna is imported here only: the study is opened, created and planned in `study.py`, which also builds the
distributions, the running trial a coordinator reports to, and the importances; the floors above work on the study
they are handed and read trial states (`optuna.trial.TrialState`). `sweep status` reads the journal's study
without Optuna (`journal_digest.py`, by the names of Optuna's Study and FrozenTrial), folding only the records
appended since its verified snapshot (`journal_snapshot.py`). Optuna's private API is
used only in `_optuna_private.py`, which says why each use is needed. Layout tests keep both rules. Imports
`inputs`, `files` and `errors`, nothing above.
"""

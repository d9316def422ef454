"""What a sweep is given, checked before anything runs: the spec, its search space, CANDLE's upf lines, mlrMBO's
restart file, the storage URL, and every trial's opts against the schema (`prepare.prepare_sweep`).

The lowest floor of the sweep layer: imports only `sweeps.errors` and the options, outputs and restarts layers;
writes nothing; raises `SweepError` (exit 2) for any problem.
"""

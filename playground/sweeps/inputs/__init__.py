"""What a sweep is given, checked before anything runs: the spec, its search space (or Supervisor's mlrMBO R
parameter set, `mlrmbo_params.py`), CANDLE's upf lines and list strings, mlrMBO's restart file, the storage URL,
the environment variables a sweep reads (`environment.py`), and every trial's opts against the schema
(`prepare.prepare_sweep`).

The lowest floor of the sweep layer: imports only `sweeps.errors` and the options, outputs, restarts and candle
(`candle.list_values`, CANDLE's list strings) layers;
writes nothing; raises `SweepError` (exit 2) for any problem.
"""

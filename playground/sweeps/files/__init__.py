"""The sweep folder on disk: where each file lives (sweep.json, trial.json, attempts.jsonl, control/, trials/)
and a trial's metrics.jsonl read as it grows.

Above `inputs` (sweep.json holds the resolved spec); below everything that reads or writes a sweep folder. Never
imports Optuna.
"""

"""What the pages show of a folder, kept in step with its files: a run (run_watch.py), a sweep's spec, trials,
rungs and state (sweep_spec.py, trial_watch.py, asha_rungs.py, sweep_watch.py), the opts of several runs side by
side (opts_diff.py). Imports `files`, and the sweep layer's parsers and arithmetic, nothing of `web`."""

"""Running trials: agent processes (`runner.py`: `sweep run`, `sweep agent`) with N slots (`agent.py`) that claim
trials from the study within the exact budget (`coordinator.py`), start each as a process (`trial_process.py`),
beat heartbeats (`heartbeat.py`), adopt the trials of dead agents (`lease.py`), obey the PAUSE flag
(`control.py`) and start continued trials from their source's checkpoint (`warm_start.py`); how an agent ended,
in its last line and exit code (`endings.py`).

Imports `results`, `search`, `files`, `inputs`; never the trainer: a trial is a process, seen through its files
and exit code.
"""

"""The sweep commands that act on a whole sweep folder from outside the agents: `status`, `summary` and `plots`
(`reports.py`), `summary --rebuild` (`rebuild.py`), `preview`, `run --test` (`selftest.py`), `submit --slurm`
(`slurm.py`) and `serve` (`serve.py`).

The top floor of the sweep layer: may import every package below it; only playground/commands/sweep.py imports it.
"""

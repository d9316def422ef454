"""Restarts: the one policy that decides whether an attempt of a run is run again (sweeps and single runs)."""

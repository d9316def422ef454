"""What a run leaves in its folder: its layout (run_folder.py), metrics.jsonl, results.json, plots, the log; atomic
file writes."""

"""What a run leaves in its folder: metrics.jsonl, results.json, plots, the log; atomic file writes."""

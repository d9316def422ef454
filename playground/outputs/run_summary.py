"""The lines printed when a run finishes: where its outputs are and how its test metrics ended."""
from __future__ import annotations

import os

from playground.outputs.run_folder import RunFolder


def summary_lines(result: dict, run_dir: str) -> list[str]:
    folder = RunFolder(run_dir)
    lines = [f"run finished: {run_dir}",
             f"  metrics:    {folder.metrics}",
             f"  results:    {folder.results}"]
    plots = folder.pictures()
    if plots:
        lines.append(f"  plots:      {', '.join(os.path.basename(p) for p in plots)}")
    if result.get("model"):
        lines.append(f"  checkpoint: {result['model']}")
    metrics = result.get("metrics") or {}
    for name, values in metrics.items():
        if name in ("epochs", "samples_per_sec", "secs_per_train") or not name.startswith("test"):
            continue
        final = next((v for v in reversed(values) if v is not None), None)
        if final is not None:
            lines.append(f"  final {name}: {final:.4f}")
    return lines

"""`make demo`: train a small network end to end and show where the metrics, plots and checkpoints are.

For now it runs experiments/smoke.json (synthetic data); the digits demo replaces it once the LMDB input and
the ResNet components land.
"""
from __future__ import annotations

import os
import sys

from playground.cli import run_main

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main() -> int:
    opts = os.path.join(REPO, "experiments", "smoke.json")
    return run_main(["--parameters-file", opts])


if __name__ == "__main__":
    sys.exit(main())

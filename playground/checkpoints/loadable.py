"""`python -m playground.checkpoints.loadable FILE`: whether a checkpoint loads as its run would load it, asked by the
sweep layer, which never imports torch (`sweep continue` checks the checkpoint a new trial is to continue from).

Exit 0 when it loads (files.load_state: torch.load with weights_only=True, then its format marker); else one line on
stderr saying why, exit 1.
"""
from __future__ import annotations

import re
import sys

from playground.checkpoints.files import CheckpointError, load_state
from playground.processes.exit_codes import EXIT_DONE, EXIT_FAILED, EXIT_USAGE


def why_not(path: str) -> str | None:
    """Why the checkpoint at `path` does not load as a run loads it, in one line; None when it loads."""
    try:
        load_state(path)
    except CheckpointError as err:
        text = str(err)
        refused = re.search(r"Unsupported global: GLOBAL [\w.]+", text)
        if refused:   # torch's message is a page of advice on loading it unsafely: the culprit is what matters
            return f"its pickle is refused by torch.load(weights_only=True) ({refused.group(0)})"
        return text.splitlines()[0].replace(f"could not read checkpoint {path}: ", "cannot be read: ")
    return None


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m playground.checkpoints.loadable CHECKPOINT", file=sys.stderr)
        return EXIT_USAGE
    problem = why_not(argv[0])
    if problem:
        print(problem, file=sys.stderr)
        return EXIT_FAILED
    return EXIT_DONE


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

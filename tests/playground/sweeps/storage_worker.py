"""One agent process of the storage matrix: opens the sweep's study through the sweep layer (load_study with
--storage) and claims, reports and finishes COUNT trials with the coordinator, as an agent does, without running
them. Trial k of this worker ends complete (value = f(params)), pruned (after one report), or failed, by k % 4.

    python -m tests.playground.sweeps.storage_worker SWEEP_DIR STORAGE COUNT
"""
from __future__ import annotations

import sys


def value_of(sets: dict) -> float:
    return round(sets["model_param.base_learning_rate"] * 1000.0, 9)


def ending(k: int) -> str:
    return {0: "complete", 1: "complete", 2: "pruned", 3: "fail"}[k % 4]


def main(sweep_dir: str, storage: str, count: int) -> int:
    from playground.sweeps.agents.coordinator import Coordinator
    from playground.sweeps.files.sweep_folder import SweepFolder
    from playground.sweeps.inputs.spec import parse_spec
    from playground.sweeps.search.study import load_study
    folder = SweepFolder(sweep_dir)
    spec = parse_spec(folder.read_spec()["spec"], folder.root, origin=folder.spec_file)
    study = load_study(folder, spec.searcher, spec.objectives, create=False, storage=storage)
    # adopt=False: the other workers' RUNNING trials are theirs, not orphans
    coordinator = Coordinator(study, spec, folder, total=10 ** 9, adopt=False)
    for k in range(count):
        ticket = coordinator.claim()
        value = value_of(ticket.sets)
        state = ending(k)
        if state == "pruned":
            coordinator.report(ticket, 100, 1.0, value)
        coordinator.finish(ticket, state, [value] if state == "complete" else None)
        print(f"{ticket.number} {state}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2], int(sys.argv[3])))

"""`sweep run --test`: the whole machinery (validation, study, slot, process, tailing, summary) on one tiny
trial in a temporary folder; checks that the objective and the time metric appear in full test passes.

The trial is the spec's first planned point shortened to one epoch of two global batches (the largest global
batch the space can give, so a sampled batch size fits); a Determined experiment's is its
`playground run EXPERIMENT --test`. A trial that fails is a failed test, with its output.
"""
from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from dataclasses import replace

from playground.processes.exit_codes import EXIT_DONE, EXIT_FAILED
from playground.sweeps.agents.runner import run_sweep
from playground.sweeps.files.metrics_tail import epoch_records
from playground.sweeps.files.sweep_folder import SweepFolder
from playground.sweeps.inputs.prepare import prepare_sweep
from playground.sweeps.inputs.space import Param
from playground.sweeps.inputs.spec import SweepSpec
from playground.sweeps.inputs.trial_length import EPOCH_SIZE_KEYS, global_batch_of


def self_test(spec: SweepSpec) -> int:
    started = time.time()
    shrink = [Param("epoch_iter.num_epochs", "const", val=1)]
    time_metric = spec.searcher.get("time_metric", "epochs")
    searcher = {"name": "single", "max_trials": 1, "seed": spec.searcher.get("seed", 0)}
    if spec.searcher_name in ("upf", "grid"):
        searcher = {**spec.searcher, "name": spec.searcher_name}
    test_spec = replace(spec, searcher=searcher, space=[p for p in spec.space if p.key != "epoch_iter.num_epochs"] + shrink,
                        raw={**spec.raw, "searcher": searcher}, max_restarts=0)  # report a failure at once
    if spec.experiment:    # a Determined experiment's trial shortens itself: `playground run EXPERIMENT --test`
        test_spec = replace(test_spec, space=spec.space,
                            trial_program=[*(spec.trial_program or [sys.executable, "-m", "playground", "run"]), "--test"])
    prepared = prepare_sweep(test_spec)
    if prepared.base_opts is not None:
        batch = _largest_global_batch(prepared.base_opts, prepared.spec.space)
        prepared.spec.space.append(Param("epoch_iter.num_train_sample_per_epoch", "const", val=2 * batch))
    prepared.upf_lines = [replace(line, params={k: v for k, v in line.params.items() if k != "epoch_iter.num_epochs"})
                          for line in prepared.upf_lines[:1]]
    with tempfile.TemporaryDirectory(prefix="sweep-test-") as folder:
        # a failed trial is this check's to report, with its output, not the temporary sweep's last line
        code = run_sweep(prepared, folder, workers=1, quiet=True, allow_failed=True)
        sweep = SweepFolder(folder)
        trials = sweep.trial_ids()
        records = epoch_records(sweep.run_folder(trials[0]).metrics) if trials else []
        problems = []
        state = _trial_state(folder, trials[0]) if trials else None
        if code != 0 or state != "complete":
            log = sweep.run_folder(trials[0]).terminal_log if trials else ""
            tail = open(log, encoding="utf-8", errors="replace").read()[-2000:] if os.path.isfile(log) else ""
            problems.append(f"the trial did not complete ({state or 'not started'}, sweep exit {code}); its output "
                            f"ends with:\n{tail}")
        if not records:
            problems.append("no full test pass (kind 'epoch') in metrics.jsonl")
        for objective in prepared.spec.objectives:
            if records and not isinstance(records[-1].get(objective.metric), (int, float)):
                problems.append(f"objective {objective.metric!r} missing from the full test passes "
                                f"(they have {', '.join(sorted(k for k, v in records[-1].items() if v is not None))})")
        if records and time_metric != "samples" and records[-1].get(time_metric) is None:
            problems.append(f"time metric {time_metric!r} missing from the full test passes")
        summary = os.path.join(folder, "summary.csv")
        if not os.path.isfile(summary):
            problems.append("summary.csv was not written")
    seconds = time.time() - started
    if problems:
        print("sweep --test FAILED:\n  " + "\n  ".join(problems), file=sys.stderr)
        return EXIT_FAILED
    values = json.dumps({o.metric: records[-1][o.metric] for o in prepared.spec.objectives})
    print(f"sweep --test passed in {seconds:.1f} s: one trial ran, full test pass has {values} and {time_metric}")
    return EXIT_DONE


def _largest_global_batch(base_opts: dict, space: list[Param]) -> int:
    """The largest global batch a trial of the space can have (the base's, or a sampled batch size's or device
    count's largest value): the test trial's epoch must hold two of them whatever it samples."""
    opts = {section: dict(values) if isinstance(values, dict) else values for section, values in base_opts.items()}
    for p in space:
        if p.key in EPOCH_SIZE_KEYS[1:]:
            section, _, name = p.key.partition(".")
            numbers = [v for v in p.corner_values() if isinstance(v, int) and not isinstance(v, bool)]
            if numbers:
                opts[section][name] = max(numbers)
    return max(global_batch_of(opts), 1)


def _trial_state(folder: str, trial_id: str) -> str | None:
    try:
        with open(SweepFolder(folder).run_folder(trial_id).trial, encoding="utf-8") as handle:
            return json.load(handle).get("state")
    except (OSError, ValueError):
        return None

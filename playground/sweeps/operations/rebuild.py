"""`sweep summary --rebuild`: the study rebuilt from the run folders alone, when study.journal is lost or damaged.

The caller holds the folder's run lock. An existing journal is kept, renamed `study.journal.replaced-<UTC time>`.
The planned trials (restart-file rows, upf lines, grid points) are stored again exactly as `sweep run` stores them
at the start, so trial numbers come out the same. Then each trial folder, in the order of its trial number,
fills one trial: trial.json gives the number, the run settings (`params`), the state and the objective values;
the full test passes of metrics.jsonl are reported again, up to the last one the agent had reported
(`last_reported_step`), so a pruned trial gets the value the study gave it; attempts.jsonl (wall times) and
metrics.jsonl (best, last) are read by the reports themselves. A trial that was running or paused stays RUNNING,
so the next `sweep run` resumes its folder. A trial added by `sweep continue` (warm_start.json) that never ran
is enqueued again. Trials that never got a folder are not rebuilt (the next `sweep run` asks again).
"""
from __future__ import annotations

import os
import time
from contextlib import nullcontext
from typing import Any

from playground.sweeps.agents.warm_start import WARM_START_FILE, contained, read_warm_start
from playground.sweeps.files.metrics_tail import MetricsTail
from playground.sweeps.files.sweep_folder import SweepFolder
from playground.sweeps.inputs.prepare import PreparedSweep
from playground.sweeps.inputs.storage_url import JOURNAL
from playground.sweeps.search._optuna_private import storage_of, storage_trial_id, study_id_of, tell_without_copy
from playground.sweeps.search.storages import buffered_journal, locate
from playground.sweeps.search.study import distributions, encoded, initialize, load_study

FINISHED = {"complete": "COMPLETE", "pruned": "PRUNED", "fail": "FAIL"}


def rebuild_study(folder: SweepFolder, prepared: PreparedSweep, epochs: dict[str, list[dict]] | None = None) -> Any:
    """A new study in `folder` holding what its trial folders record; returns it. A journal is written in one
    append at the end (buffered_journal): thousands of trials take seconds, not one locked fsync per change.
    `epochs`: filled with each trial's full test passes as read (trial id -> records), for the reports."""
    spec = prepared.spec
    set_aside_journal(folder)
    journal = locate(folder, None).storage.kind == JOURNAL
    with buffered_journal(folder.journal) if journal else nullcontext() as backend:
        study = load_study(folder, spec.searcher, spec.objectives, create=True, rebuilding=True, backend=backend)
        initialize(study, spec, prepared.upf_lines, prepared.priors)
        dists = distributions(spec.space, grid=spec.searcher_name == "grid")
        from optuna.trial import TrialState
        planned = {t.number: t for t in study.get_trials(deepcopy=False, states=(TrialState.WAITING,))}
        for record in trial_records(folder):
            if record.get("state") is None:   # added by `sweep continue`, never started
                _enqueue_warm_start(study, record)
                continue
            number = _open_trial(study, planned.pop(record["number"], None))
            records = _fill(study, folder, spec, dists, number, record)
            if epochs is not None:
                epochs[record["id"]] = records
    return study


def set_aside_journal(folder: SweepFolder) -> str | None:
    """Rename an existing journal to study.journal.replaced-<UTC time> (never over another); the new name."""
    lock = folder.journal + ".lock"
    if os.path.exists(lock):
        os.unlink(lock)   # the caller holds the run lock: no writer can hold the journal's
    if not os.path.exists(folder.journal):
        return None
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    target, n = f"{folder.journal}.replaced-{stamp}", 1
    while os.path.exists(target):
        n += 1
        target = f"{folder.journal}.replaced-{stamp}-{n}"
    os.replace(folder.journal, target)
    return target


def trial_records(folder: SweepFolder) -> list[dict]:
    """Each trial folder's trial.json (or, for a warm-started trial not yet run, its warm_start.json), by number."""
    out = []
    for trial_id in folder.trial_ids():
        record = folder.read_trial(trial_id)
        if not isinstance(record.get("number"), int):
            warm = read_warm_start(folder.trial_dir(trial_id))
            if warm is None:
                continue
            record = {"id": trial_id, "number": warm["number"], "params": warm["sets"], "state": None,
                      WARM_START_FILE: warm}
        out.append({**record, "id": trial_id})
    return sorted(out, key=lambda r: r["number"])


def _open_trial(study: Any, planned: Any) -> int:
    """The number of a RUNNING trial to fill: the `planned` (WAITING) trial of its number, else a new trial."""
    from optuna.trial import TrialState
    storage = storage_of(study)
    if planned is not None and storage.set_trial_state_values(storage_trial_id(planned), TrialState.RUNNING):
        return planned.number
    trial_id = storage.create_new_trial(study_id_of(study))
    return storage.get_trial(trial_id).number


def _fill(study: Any, folder: SweepFolder, spec: Any, dists: dict, number: int, record: dict) -> list[dict]:
    """Trial `number` made what `record` (its trial.json) says; its full test passes (metrics.jsonl) returned."""
    from optuna.trial import TrialState
    storage = storage_of(study)
    trial_id = storage.get_trial_id_from_study_id_trial_number(study_id_of(study), number)
    sets = record.get("params") or {}
    storage.set_trial_user_attr(trial_id, "trial_id", record["id"])
    storage.set_trial_user_attr(trial_id, "sets", sets)
    warm = read_warm_start(folder.trial_dir(record["id"]))
    if warm is not None:
        for key, value in warm.get("user_attrs", {}).items():
            storage.set_trial_user_attr(trial_id, key, value)
    for key, dist in dists.items():
        if key in sets and contained(dist, encoded(sets[key])):
            storage.set_trial_param(trial_id, key, dist.to_internal_repr(encoded(sets[key])), dist)
    state = record.get("state")
    passes = MetricsTail(folder.trial_dir(record["id"])).new_epoch_records()
    if not spec.multi_objective:
        last = record.get("last_reported_step")
        metric = spec.objectives[0].metric
        for row in passes:
            value = row.get(metric)
            # a finished trial: exactly the passes the study was told; an unfinished one: all, as its agent
            # will have told them by the time it resumes
            told = state not in FINISHED or (last is not None and row["samples"] <= last)
            if isinstance(value, (int, float)) and told:
                storage.set_trial_intermediate_value(trial_id, row["samples"], float(value))
    if state in FINISHED:
        values = record.get("values") if state == "complete" else None
        tell_without_copy(study, number, values, TrialState[FINISHED[state]])
    return passes


def _enqueue_warm_start(study: Any, record: dict) -> None:
    warm = record[WARM_START_FILE]
    study.enqueue_trial(warm.get("params", {}), user_attrs=warm.get("user_attrs", {}), skip_if_exists=False)


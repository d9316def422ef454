"""`sweep status`, `sweep summary` and `sweep plots` on an existing sweep folder (the study read, not changed;
`summary --rebuild` writes a new study from the run folders)."""
from __future__ import annotations

import os
import sys
from collections import Counter

from playground.outputs.run_folder import RunFolder
from playground.processes.exit_codes import EXIT_DONE
from playground.sweeps.errors import SweepError
from playground.sweeps.files.sweep_folder import SweepFolder
from playground.sweeps.inputs.spec import SweepSpec, parse_spec


def open_sweep(sweep_dir: str, storage: str | None = None):
    """(folder, spec, study) of an existing sweep; `storage`: --storage URL (default: what sweep.json recorded)."""
    return _opened(sweep_dir, storage)[:3]


def _opened(sweep_dir: str, storage: str | None = None, digest: bool = False):
    """(folder, spec, study, where the study lags the trial folders: search/lag.py's Lag). `digest`: the
    journal's digest where it vouches for it, which has what status reads of a study (search/study.py
    read_study), else Optuna's study."""
    from playground.sweeps.inputs.storage_url import JOURNAL
    from playground.sweeps.search.lag import lag_of, trial_folders
    from playground.sweeps.search.storages import locate
    from playground.sweeps.search.study import read_study
    folder = SweepFolder(sweep_dir)
    stored = folder.read_spec()
    spec: SweepSpec = parse_spec(stored["spec"], folder.root, origin=folder.spec_file)
    listed = trial_folders(folder)     # before the study is read: a trial started meanwhile is not taken for lag
    study = read_study(folder, spec.searcher, spec.objectives, storage, digest=digest)
    journal = locate(folder, storage).storage.kind == JOURNAL
    return folder, spec, study, lag_of(study, folder, listed, journal)


def status(sweep_dir: str, storage: str | None = None, digest: bool = True) -> int:
    """Print the sweep's state. `digest` False reads the journal through Optuna too (tests compare the two)."""
    from playground.sweeps.results.summary import ranked, study_rows
    folder, spec, study, lag = _opened(sweep_dir, storage, digest)
    rows = study_rows(study, spec.objectives)    # no trial folder read but running trials' trial.json
    for row in rows:
        row.state = _state_shown(folder, row.state, row.id)
    counts = Counter(r.state for r in rows)
    total = spec.max_trials if spec.searcher_name not in ("grid", "upf") else None
    print(f"sweep {folder.root} ({spec.searcher_name}): " + ", ".join(f"{n} {s}" for s, n in sorted(counts.items()))
          + (f"; budget {total}" if total else ""))
    for line in lag.lines:
        print(line)
    _print_agents(folder)
    if folder.paused():
        paused = [r.id for r in rows if r.state == "paused"]
        print(f"paused ({folder.pause_flag}): {len(paused)} trial(s) stopped after a checkpoint; "
              f"`playground sweep resume {folder.root}`, then re-run `sweep run` to continue")
    if spec.multi_objective:
        front = [r for r in ranked(rows, spec.objectives[0]) if r.pareto]
        print(f"pareto front: {len(front)} trial(s) that no other beats on every objective")
        for row in front:
            print(f"  {row.id} " + " ".join(f"{o.metric}={v:.6g}" for o, v in zip(spec.objectives, row.values or []))
                  + f" {row.params}")
    else:
        best = next((r for r in ranked(rows, spec.objectives[0]) if r.state == "complete"), None)
        if best is not None:
            print(f"best: {best.id} {spec.objectives[0].metric}={best.value:.6g} {best.params}")
    for row in sorted(rows, key=lambda r: r.number):
        values = row.values if spec.multi_objective and row.values else [row.value] if row.value is not None else []
        # a trial stopped as hung (no output for trial_stall_timeout, or past trial_timeout) says so while it is
        # retried and once it failed; trial.json is read only for those not ended well (cheap at any size)
        stopped = "" if row.state in ("complete", "pruned", "imported") else folder.read_trial(row.id).get("stopped")
        print(f"  {row.id:12s} {row.state:9s}" + "".join(f" {v:.6g}" for v in values)
              + (" pareto" if row.pareto else "") + (f"  {stopped}" if stopped else "")
              + (_last_output(folder, row.id) if row.state == "running" else ""))
    return EXIT_DONE


def _state_shown(folder: SweepFolder, state: str, trial_id: str) -> str:
    """The study says `running` for a trial whose run stopped after a checkpoint and waits for an agent: trial.json
    tells which: `paused` (sweep pause) or `released` (its agent was stopped, Ctrl-C or SIGTERM)."""
    if state != "running":
        return state
    written = folder.read_trial(trial_id).get("state")
    return {"paused": "paused", "interrupted": "released"}.get(written, state)


def _last_output(folder: SweepFolder, trial_id: str) -> str:
    """`  last output 12 min ago` for a running trial (its metrics, train.log or terminal output), else ''."""
    import time
    from playground.sweeps.agents.progress_watch import last_output, output_paths
    from playground.sweeps.inputs.trial_timeouts import in_words
    run_dir = folder.trial_dir(trial_id)
    written = last_output(output_paths(run_dir, RunFolder(run_dir).terminal_log))
    return "" if written is None else f"  last output {in_words(max(0.0, time.time() - written))} ago"


def _print_agents(folder: SweepFolder) -> None:
    """The agents whose heartbeat files exist, with their trials and how old their last beat is."""
    import time
    from playground.sweeps.agents.heartbeat import host_id, possibly_alive, read_heartbeats
    here = host_id()
    for beat in read_heartbeats(folder.control):
        age = time.time() - float(beat.get("clock", 0.0))
        gone = "" if possibly_alive(beat, here) else ", its process is gone"
        print(f"agent {beat.get('agent', '?')}: {', '.join(beat.get('trials') or []) or 'no trial'} "
              f"(last beat {age:.0f} s ago by its clock{gone})")


def summary(sweep_dir: str, rebuild: bool = False, storage: str | None = None) -> int:
    from playground.sweeps.results.summary import write_summary
    if rebuild:
        if storage not in (None, "auto", "journal"):
            raise SweepError("summary --rebuild writes the sweep folder's study.journal; --storage does not apply")
        return _rebuild(sweep_dir)
    folder, spec, study, lag = _opened(sweep_dir, storage)
    _refuse_a_lagging_study(folder, lag)
    rows = write_summary(study, folder, spec.objectives)
    print(f"wrote {os.path.join(folder.root, 'summary.md')} ({len(rows)} trials), summary.csv, output.csv"
          + (", best.json" if os.path.isfile(os.path.join(folder.root, "best.json")) else ""))
    for line in lag.lines:
        print(f"warning: {line}", file=sys.stderr)
    return EXIT_DONE


def _refuse_a_lagging_study(folder: SweepFolder, lag) -> None:
    """The reports are not rewritten from a study that lost what the trial folders hold (a journal cut or restored
    from an older copy): they would lose trials or their values. A study that does not know some folders lost
    records; trials that ended in their folder but run in the study are that too when no agent may be ending
    them now (else they show so briefly, and the reports are written with a warning, as the agents rewrite them)."""
    from playground.sweeps.agents.heartbeat import agents_maybe_alive
    from playground.sweeps.search.journal_file import repair_command
    if lag.unknown:
        what = f"it does not know {len(lag.unknown)} trial folder(s) ({', '.join(lag.unknown[:8])}" + (
            " ...)" if len(lag.unknown) > 8 else ")")
    elif lag.behind and not agents_maybe_alive(folder.control):
        what = "; ".join(lag.behind[:8]) + (f"; and {len(lag.behind) - 8} more" if len(lag.behind) > 8 else "")
    else:
        return
    raise SweepError(f"{folder.root}: the study lags the trial folders: {what}; summary.csv, summary.md, "
                     f"best.json and output.csv are left as they are, since rewritten from this study they would "
                     f"lose those trials. Rebuild the study and the reports from the folders with "
                     f"{repair_command(folder.journal)}")


def plots(sweep_dir: str, storage: str | None = None) -> int:
    from playground.sweeps.results.plots import draw_all
    folder, spec, study = open_sweep(sweep_dir, storage)
    for path, note in draw_all(study, folder, spec):
        print(path if not note else f"{path}: {note}", file=sys.stdout if not note else sys.stderr)
    return EXIT_DONE


def _rebuild(sweep_dir: str) -> int:
    """The study rebuilt from the run folders (under the folder's run lock), then the reports from it."""
    from playground.sweeps.inputs.prepare import prepare_sweep, resumed_sweep
    from playground.sweeps.operations.rebuild import rebuild_study
    from playground.sweeps.agents.runner import lock_folder
    from playground.sweeps.files.module_maps import use_sweep_module_map
    from playground.sweeps.results.summary import ReportCache, write_summary
    folder = SweepFolder(sweep_dir)
    spec = parse_spec(folder.read_spec()["spec"], folder.root, origin=folder.spec_file)
    use_sweep_module_map(folder, spec.base)
    lock = lock_folder(folder)
    try:
        # the opts were checked when the sweep began; upf lines need their bare names resolved again
        prepared = (resumed_sweep(spec, priors=True) if spec.searcher_name != "upf" else None) or prepare_sweep(spec)
        cache = ReportCache()
        study = rebuild_study(folder, prepared, cache.epochs)   # each metrics.jsonl read once
        rows = write_summary(study, folder, prepared.spec.objectives, cache)
    finally:
        lock.close()
    print(f"rebuilt {folder.journal} from {len(folder.trial_ids())} trial folder(s); wrote summary.csv, "
          f"summary.md, output.csv ({len(rows)} trials)")
    return EXIT_DONE

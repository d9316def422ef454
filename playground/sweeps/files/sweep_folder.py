"""The sweep folder: where each file lives, sweep.json (the resolved spec and its identity), and per trial
trial.json and attempts.jsonl. Writers replace files atomically; attempts.jsonl only grows.

    <sweep>/sweep.json  study.journal  searcher.json  control/  trials/<id>/  summary.*  best.json  output.csv  plots/
"""
from __future__ import annotations

import json
import os
import time
from typing import Any

from playground.outputs.atomic_files import write_json
from playground.outputs.run_folder import RunFolder
from playground.restarts.attempts import append_attempt, read_attempts, restarts_used
from playground.sweeps.errors import SweepError
from playground.sweeps.inputs.spec import identity_part


class SweepFolder:
    def __init__(self, root: str) -> None:
        self.root = os.path.abspath(root)
        self._restarts: dict[str, tuple] = {}    # trial id -> (attempts.jsonl's size and mtime, restarts it used)

    @property
    def spec_file(self) -> str:
        return os.path.join(self.root, "sweep.json")

    @property
    def journal(self) -> str:
        return os.path.join(self.root, "study.journal")

    @property
    def searcher_state(self) -> str:
        return os.path.join(self.root, "searcher.json")

    @property
    def control(self) -> str:
        return os.path.join(self.root, "control")

    @property
    def plots(self) -> str:
        return os.path.join(self.root, "plots")

    def trial_dir(self, trial_id: str) -> str:
        return os.path.join(self.root, "trials", trial_id)

    def run_folder(self, trial_id: str) -> RunFolder:
        """The files of trial `trial_id`'s run folder."""
        return RunFolder(self.trial_dir(trial_id))

    def trial_ids(self) -> list[str]:
        folder = os.path.join(self.root, "trials")
        return sorted(os.listdir(folder)) if os.path.isdir(folder) else []

    def exists(self) -> bool:
        return os.path.isfile(self.spec_file)

    def read_spec(self) -> dict:
        try:
            with open(self.spec_file, encoding="utf-8") as handle:
                return json.load(handle)
        except (OSError, json.JSONDecodeError) as err:
            raise SweepError(f"{self.root} is not a sweep folder: cannot read sweep.json ({err})") from None

    def write_spec(self, raw: dict, identity: str) -> None:
        from importlib.metadata import version   # Optuna's, without importing it (it is called in search/ only)

        from playground import __version__
        os.makedirs(self.control, exist_ok=True)
        os.makedirs(os.path.join(self.root, "trials"), exist_ok=True)
        write_json(self.spec_file, {"spec": raw, "identity": identity,
                                    "versions": {"playground": __version__, "optuna": version("optuna")}})

    def check_same_sweep(self, raw: dict, identity: str) -> None:
        """Resuming: only the budget may change; anything else is refused with the difference."""
        stored = self.read_spec()
        if stored.get("identity") == identity:
            return
        old, new = _flatten(identity_part(stored.get("spec", {}))), _flatten(identity_part(raw))
        diff = [f"{k}: {old.get(k, '(absent)')!r} -> {new.get(k, '(absent)')!r}"
                for k in sorted(set(old) | set(new)) if old.get(k) != new.get(k)]
        if not diff:  # the same sweep, its identity hashed by an older version
            return
        raise SweepError([f"{self.root} holds a different sweep; only the budget (searcher.max_trials, "
                          "max_concurrent_trials, max_restarts, log_policies, agents, trial_stall_timeout, trial_timeout, "
                          "trial_stop_grace) may change when resuming. Differences:"] + diff +
                         ["use another --sweep-dir for a new sweep"])

    def record_budget(self, raw: dict) -> None:
        """After check_same_sweep passed: sweep.json takes the spec as resumed (its budget may differ), so `sweep
        agent`, `sweep status` and `sweep submit` work to the budget the sweep was last given, not its first."""
        data = self.read_spec()
        if data.get("spec") != raw:
            data["spec"] = raw
            write_json(self.spec_file, data)

    def recorded_module_map(self) -> str | None:
        """The module map sweep.json recorded (an absolute path), None for none."""
        return self.read_spec().get("module_map") or None

    def record_module_map(self, path: str | None) -> None:
        """sweep.json's `module_map` becomes `path` (None: none), for every later agent."""
        data = self.read_spec()
        if data.get("module_map") != path:
            data["module_map"] = path
            write_json(self.spec_file, data)

    def write_trial(self, trial_id: str, record: dict[str, Any]) -> None:
        os.makedirs(self.trial_dir(trial_id), exist_ok=True)
        write_json(self.run_folder(trial_id).trial, record)

    def read_trial(self, trial_id: str) -> dict:
        try:
            with open(self.run_folder(trial_id).trial, encoding="utf-8") as handle:
                return json.load(handle)
        except (OSError, json.JSONDecodeError):
            return {}

    def append_attempt(self, trial_id: str, entry: dict[str, Any]) -> None:
        append_attempt(self.trial_dir(trial_id), entry)

    def read_attempts(self, trial_id: str) -> list[dict]:
        return read_attempts(self.trial_dir(trial_id))

    def restarts_used(self) -> int:
        """Units of max_restarts spent by every trial of the sweep. A trial's attempts.jsonl is read again only
        when it changed (file_stamp) since this object last read it: a failed attempt late in a sweep of
        thousands of trials reads its own file, not all of them."""
        total = 0
        for trial_id in self.trial_ids():
            run_dir = self.trial_dir(trial_id)
            stamp = file_stamp(RunFolder(run_dir).attempts)
            known = self._restarts.get(trial_id)
            if known is None or known[0] != stamp:
                known = self._restarts[trial_id] = (stamp, restarts_used([run_dir]))
            total += known[1]
        return total

    @property
    def pause_flag(self) -> str:
        return os.path.join(self.control, "PAUSE")

    def paused(self) -> bool:
        return os.path.exists(self.pause_flag)


def now() -> float:
    return time.time()


def file_stamp(path: str) -> tuple[int, int, int] | None:
    """What tells that a file was replaced, rewritten or appended to (inode, size, mtime: an atomic write makes a
    new inode); None when it is absent."""
    try:
        status = os.stat(path)
    except OSError:
        return None
    return status.st_ino, status.st_size, status.st_mtime_ns


def _flatten(tree: Any, prefix: str = "") -> dict[str, Any]:
    if not isinstance(tree, dict):
        return {prefix.rstrip("."): tree}
    out: dict[str, Any] = {}
    for key, value in tree.items():
        if isinstance(value, dict) and value and key != "space":
            out.update(_flatten(value, f"{prefix}{key}."))
        else:
            out[f"{prefix}{key}"] = value
    return out

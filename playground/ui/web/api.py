"""The JSON the pages ask for: the list of runs and sweeps, a run, a sweep (rows and curves changed since what the
page has), importances, a comparison, and the actions. Each function takes the request's query parameters and
returns the payload, or raises NotFound (answered 404) for a key that names nothing served.

Pages poll: they send what they have (`since`: the sweep's version, or the run's record count and generation,
`log`: the last log line seen) and get only what is new.
"""
from __future__ import annotations

import json
import math
import os
import threading
import time
from typing import Any

from playground.ui.views.opts_diff import opts_diff
from playground.ui.views.run_watch import LOGS, RunWatch
from playground.ui.web.catalog import Catalog

IMPORTANCE_SECONDS = 5.0     # importances are worked out again at most this often
MAX_COMPARED = 10


class NotFound(Exception):
    """The key names no run or sweep under the served folders."""


class Encoded(str):
    """JSON text already encoded, put into the answer as it is (a sweep's rows: each encoded once per change)."""


def encode(value: Any) -> str:
    """Compact JSON; an infinity or NaN left in a value becomes null, which JSON.parse reads."""
    try:
        return json.dumps(value, allow_nan=False, separators=(",", ":"))
    except ValueError:
        return json.dumps(_finite(value), separators=(",", ":"))


def _finite(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


class Api:
    def __init__(self, catalog: Catalog, allow_actions: bool) -> None:
        self.catalog, self.allow_actions = catalog, allow_actions
        self._importances: dict[str, tuple[float, tuple, dict]] = {}
        self._row_text: dict[str, dict[str, tuple[dict, str]]] = {}    # sweep -> trial -> (its row, the row's JSON)
        self._curve_text: dict[str, dict[str, tuple[tuple, str]]] = {}  # sweep -> trial -> (what it is of, JSON)
        self._importance_lock = threading.Lock()

    def _path(self, key: str | None, kind: str) -> str:
        path = self.catalog.roots.resolve(key or "")
        if path is None or not os.path.isdir(path) or \
                not (self.catalog.is_sweep(path) if kind == "sweep" else self.catalog.is_run(path)):
            raise NotFound(f"no {kind} folder {key!r} under the served folders")
        return path

    def listing(self, query: dict[str, str]) -> dict[str, Any]:
        sweeps, runs = self.catalog.found()
        pids = self.catalog.processes.runs()
        return {"roots": self.catalog.roots.paths, "allow_actions": self.allow_actions, "now": time.time(),
                "sweeps": [self._sweep_line(path) for path in sweeps],
                "runs": [self._run_line(path, pids.get(path)) for path in runs]}

    def _sweep_line(self, path: str) -> dict[str, Any]:
        watch = self.catalog.sweep(path)
        with watch.lock:
            watch.poll()
            header = watch.header()
            return {"key": self.catalog.roots.key_of(path), "path": path, "searcher": watch.spec.searcher.get("name"),
                    **{k: header[k] for k in ("name", "state", "started", "length", "best", "counts", "trials",
                                              "budget")}}

    def _run_line(self, path: str, pid: int | None) -> dict[str, Any]:
        lock, watch = self.catalog.run(path)
        with lock:
            watch.poll(checkpoints_allowed=self._checkpoints_served(watch))
            state, code = watch.state(pid)
            return {"key": self.catalog.roots.key_of(path), "path": path, "name": self._name(path),
                    "state": state, "exit": code, "pid": pid, "started": watch.started(),
                    "length": watch.length(pid is not None), "best": watch.best(),
                    "records": len(watch.records.records)}

    def _name(self, path: str) -> str:
        key = self.catalog.roots.key_of(path) or path
        index, _, rest = key.partition("/")
        return os.path.join(os.path.basename(self.catalog.roots.paths[int(index)]), rest) if rest else \
            os.path.basename(path)

    def _checkpoints_served(self, watch: RunWatch) -> bool:
        return self.catalog.roots.inside(watch.checkpoint_folder())

    def run(self, query: dict[str, str]) -> dict[str, Any]:
        path = self._path(query.get("key"), "run")
        pid = self.catalog.processes.runs().get(path)
        lock, watch = self.catalog.run(path)
        since, generation = _int(query.get("since"), 0), _int(query.get("gen"), -1)
        with lock:
            watch.poll(checkpoints_allowed=self._checkpoints_served(watch))
            watch.poll_logs()
            state, code = watch.state(pid)
            records = watch.records
            fresh = generation != records.generation or since > len(records.records)
            out: dict[str, Any] = {
                "key": query.get("key"), "path": path, "name": self._name(path), "state": state, "exit": code,
                "pid": pid, "started": watch.started(), "length": watch.length(pid is not None),
                "best": watch.best(), "version": watch.version, "generation": records.generation,
                "records_from": 0 if fresh else since, "records": records.records[0 if fresh else since:],
                "can_stop": self.allow_actions and pid is not None and self.catalog.sweep_of(path) is None,
                "allow_actions": self.allow_actions}
            if query.get("brief") == "1":      # the compare page: records only
                return out
            out["log"] = self._log(watch, query)
            if _int(query.get("v"), -1) != watch.version:
                out.update(self._run_files(path, watch))
        return out

    def _log(self, watch: RunWatch, query: dict[str, str]) -> dict[str, Any]:
        available = [name for name in LOGS if watch.logs[name].count or os.path.isfile(watch.logs[name].file.path)]
        name = query.get("logname") if query.get("logname") in available else next(iter(available), None)
        if name is None:
            return {"name": None, "available": [], "last": 0, "lines": []}
        last, lines = watch.logs[name].since(_int(query.get("log"), 0))
        return {"name": name, "available": available, "last": last, "lines": lines}

    def _run_files(self, path: str, watch: RunWatch) -> dict[str, Any]:
        sweep = self.catalog.sweep_of(path)
        served = self._checkpoints_served(watch)
        return {"opts": watch.opts.value, "results_best": (watch.results.value or {}).get("best")
                if isinstance(watch.results.value, dict) else None,
                "trial": watch.trial.value,
                "sweep": {"key": self.catalog.roots.key_of(sweep), "name": self._name(sweep)} if sweep else None,
                "checkpoints": {"folder": watch.checkpoints.folder if served else watch.checkpoint_folder(),
                                "key": self.catalog.roots.key_of(watch.checkpoint_folder()) if served else None,
                                "served": served, "items": watch.checkpoints.items},
                "images": sorted(n for n in os.listdir(path) if n.endswith(".png"))}

    def sweep(self, query: dict[str, str]) -> dict[str, Any]:
        path = self._path(query.get("key"), "sweep")
        watch = self.catalog.sweep(path)
        with watch.lock:
            watch.poll()
            since = _int(query.get("since"), 0)
            since = 0 if since > watch.version else since
            return {"key": query.get("key"), "path": path, "version": watch.version, "since": since,
                    "allow_actions": self.allow_actions, **watch.header(), "rows": self._rows(path, watch, since),
                    "curve_metrics": watch.curve_metrics(), "time_metric": watch.time_metric()}

    def _rows(self, path: str, watch: Any, since: int) -> Encoded:
        """The rows changed since `since` as JSON, each row encoded once until it changes (a sweep's first answer
        holds every row: 10,000 of them are 3 MB)."""
        known = self._row_text.setdefault(path, {})
        texts = []
        for row in watch.rows_since(since):
            cached = known.get(row["id"])
            if cached is None or cached[0] is not row:
                cached = known[row["id"]] = (row, encode(row))
            texts.append(cached[1])
        return Encoded("[" + ",".join(texts) + "]")

    def curves(self, query: dict[str, str]) -> dict[str, Any]:
        path = self._path(query.get("key"), "sweep")
        watch = self.catalog.sweep(path)
        with watch.lock:
            watch.poll()
            metric = query.get("metric") or next(iter(watch.curve_metrics()), "")
            since = _int(query.get("since"), 0)
            since = 0 if since > watch.version else since
            x = watch.time_metric()
            known = self._curve_text.setdefault(path, {})
            texts = []
            for trial in watch.curves_since(since):      # each curve encoded once per change (of it or the metric)
                of = (metric, x, trial.curve_version)
                cached = known.get(trial.id)
                if cached is None or cached[0] != of:
                    cached = known[trial.id] = (of, encode(trial.curve(metric, x)))
                texts.append(f"{json.dumps(trial.id)}:{cached[1]}")
            return {"version": watch.version, "since": since, "metric": metric, "x": x, "ids": watch.selected,
                    "trials": len(watch.rows), "curves": Encoded("{" + ",".join(texts) + "}")}

    def importances(self, query: dict[str, str]) -> dict[str, Any]:
        """Optuna's importances of the complete trials (at most once per IMPORTANCE_SECONDS, worked out outside
        the sweep's lock), or the reason there are none."""
        from playground.sweeps.search.point_importances import importances_of_points
        path = self._path(query.get("key"), "sweep")
        watch = self.catalog.sweep(path)
        with watch.lock:
            watch.poll()
            points, spec = watch.finished_points(), watch.spec
        with self._importance_lock:
            at, seen, known = self._importances.get(path, (0.0, (), {}))
            signature = (len(points), spec.name)
            if known and (seen == signature or time.monotonic() - at < IMPORTANCE_SECONDS):
                return known
            if not spec.objectives or not spec.sampled:
                result = {"importances": {}, "note": "no sampled parameter or no objective"}
            else:
                try:
                    scores = importances_of_points(spec.space, points, spec.objectives[0][1],
                                                   grid=spec.searcher.get("name") == "grid")
                    result = {"importances": scores, "note": "" if scores else "no sampled parameter"}
                except (RuntimeError, ValueError) as err:
                    result = {"importances": {}, "note": f"no importances: {err}"}
            result["trials"] = len(points)
            self._importances[path] = (time.monotonic(), signature, result)
            return result

    def compare(self, query: dict[str, str]) -> dict[str, Any]:
        keys = [k for k in (query.get("keys") or "").split(",") if k]
        if not 2 <= len(keys) <= MAX_COMPARED:
            raise NotFound(f"compare takes 2 to {MAX_COMPARED} runs, got {len(keys)}")
        runs = []
        for key in keys:
            path = self._path(key, "run")
            lock, watch = self.catalog.run(path)
            with lock:
                watch.poll(checkpoints_allowed=self._checkpoints_served(watch))
                runs.append({"key": key, "name": self._name(path), "opts": watch.opts_section,
                             "best": watch.best(), "metrics": watch.test_metrics()})
        rows, same = opts_diff([r.pop("opts") for r in runs])
        return {"runs": runs, "diff": rows, "same": same}


def _int(text: str | None, default: int) -> int:
    try:
        return int(text) if text is not None else default
    except ValueError:
        return default

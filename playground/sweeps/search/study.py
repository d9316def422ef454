"""The Optuna study of a sweep: its storage (storages.py: the journal file in the sweep folder, PostgreSQL, or the
`sweep serve` proxy), its sampler and pruner, and the trials planned up front (grid points, upf lines,
restart-file rows), enqueued exactly once.

Each trial's run settings live in its user attrs: `trial_id` (the folder name) and `sets` (dotted key ->
value, what the run gets as --set). Rows of a restart file are completed trials marked `imported`; they are
not part of the budget. Driven by ask/tell only, never study.optimize.
"""
from __future__ import annotations

import json
import os
from typing import Any

from playground.sweeps.errors import SweepError
from playground.sweeps.files.sweep_folder import SweepFolder
from playground.sweeps.inputs.space import Param, constants, grid_points, space_size
from playground.sweeps.inputs.spec import Objective, SweepSpec
from playground.sweeps.inputs.storage_url import JOURNAL
from playground.sweeps.search.trial_ids import trial_id_of  # noqa: F401  (its home for the sweep layer)

STUDY_NAME = "sweep"   # the journal's study; a shared database's has a name of its own (storages.locate)


def open_storage(folder: SweepFolder) -> Any:
    """The folder's journal storage (what `sweep summary --rebuild` writes)."""
    from playground.sweeps.search.storages import open_journal
    return open_journal(folder.journal)


def make_sampler(searcher: dict) -> Any:
    import optuna
    name, seed = searcher["name"], searcher.get("seed", 0)
    if name == "tpe" or (name == "hyperband" and searcher.get("sampler") == "tpe"):
        return optuna.samplers.TPESampler(seed=seed, multivariate=True, constant_liar=True)
    if name == "gp":
        return optuna.samplers.GPSampler(seed=seed)
    if name == "cmaes":
        try:
            import cmaes  # noqa: F401  optuna's CMA-ES sampler needs it at sampling time
        except ImportError:
            raise SweepError("searcher cmaes needs the `cmaes` package, which playground does not install; "
                             "pip install cmaes, or use tpe or gp") from None
        return optuna.samplers.CmaEsSampler(seed=seed)
    return optuna.samplers.RandomSampler(seed=seed)


def make_pruner(searcher: dict) -> Any:
    import optuna
    if searcher["name"] == "hyperband":
        return optuna.pruners.HyperbandPruner(min_resource=searcher.get("min_resource", 1),
                                              reduction_factor=searcher.get("reduction_factor", 3))
    return optuna.pruners.NopPruner()


def load_study(folder: SweepFolder, searcher: dict, objectives: list[Objective], create: bool,
               storage: str | None = None, rebuilding: bool = False, backend: Any = None) -> Any:
    """The sweep's study. `storage`: a URL from --storage (None: the spec's, as sweep.json recorded it, else the
    journal). Creating records the storage (password removed) and the study name in sweep.json, for every later
    `sweep status`, `sweep agent` and resumed `sweep run`. An unreachable storage or a damaged journal is a
    SweepError (exit 2); so is a study missing beside trial folders, or (`create`: an agent starting) one that
    does not know some of them (search/lag.py), unless `rebuilding` (`sweep summary --rebuild`) makes it anew.
    `backend`: an Optuna storage to use instead of opening the located one (`summary --rebuild`'s buffer)."""
    import optuna
    from playground.sweeps.search.lag import refuse_unknown, written
    from playground.sweeps.search.storages import check_owner, open_storage as open_located, record
    quiet_optuna()
    listed, size, stored, location = _where(folder, storage, rebuilding)
    backend = backend if backend is not None else open_located(folder, location.storage)
    kwargs = dict(storage=backend, sampler=make_sampler(searcher), pruner=make_pruner(searcher),
                  study_name=location.study_name)
    try:
        study = optuna.load_study(**kwargs)
    except KeyError:
        if not create or written(folder, listed):
            raise _no_study(folder, listed, size, location) from None
        try:
            study = optuna.create_study(directions=[o.direction for o in objectives], **kwargs)
        except optuna.exceptions.DuplicatedStudyError:  # another agent created it meanwhile
            study = optuna.load_study(**kwargs)
    if create and folder.exists():
        record(folder, location)
    check_owner(study, folder, stored.get("identity"), location, mark=create)
    if create and listed:
        refuse_unknown(folder, listed, study.get_trials(deepcopy=False))
    return study


def read_study(folder: SweepFolder, searcher: dict, objectives: list[Objective], storage: str | None = None,
               digest: bool = True) -> Any:
    """The sweep's study to read, not change (`sweep status`): on the folder's journal its digest
    (journal_digest.py: neither Optuna imported nor its trials built), else, or where the digest does not vouch
    for a record, load_study(create=False); with its checks and errors either way. `digest` False: always Optuna."""
    from playground.sweeps.search.journal_digest import read_digest
    from playground.sweeps.search.netfs import warn_if_network_filesystem
    from playground.sweeps.search.storages import check_owner
    listed, size, stored, location = _where(folder, storage)
    if not digest or location.storage.kind != JOURNAL:
        return load_study(folder, searcher, objectives, create=False, storage=storage)
    warn_if_network_filesystem(os.path.dirname(folder.journal))     # as opening it for Optuna does
    try:
        study = read_digest(folder.journal, location.study_name)
    except KeyError:
        raise _no_study(folder, listed, size, location) from None
    if study is None:
        return load_study(folder, searcher, objectives, create=False, storage=storage)
    check_owner(study, folder, stored.get("identity"), location, mark=False)
    return study


def _where(folder: SweepFolder, storage: str | None,
           rebuilding: bool = False) -> tuple[list[str], int | None, dict, Any]:
    """(trial folders, the journal's size or None, sweep.json, storages.Location) of the sweep's study; a
    SweepError where the journal is empty or missing beside trial folders (never a new study beside them)."""
    from playground.sweeps.search.lag import study_lost, trial_folders, written
    from playground.sweeps.search.storages import locate
    listed = [] if rebuilding else trial_folders(folder)    # before the study is read: see lag.py
    size = os.path.getsize(folder.journal) if os.path.isfile(folder.journal) else None
    stored = folder.read_spec() if folder.exists() else {}
    location = locate(folder, storage, stored.get("spec", {}).get("name") or "sweep", stored.get("identity", ""))
    if listed and location.storage.kind == JOURNAL and not size and written(folder, listed):
        raise study_lost(folder, folder.journal, written(folder, listed), size)
    return listed, size, stored, location


def _no_study(folder: SweepFolder, listed: list[str], size: int | None, location: Any) -> SweepError:
    """The error for a storage without the sweep's study: a lost one where trial folders exist."""
    from playground.sweeps.search.lag import study_lost, written
    if written(folder, listed):
        return study_lost(folder, folder.journal if location.storage.kind == JOURNAL else location.storage.shown,
                          written(folder, listed), size)
    return SweepError(f"{folder.root}: no study {location.study_name!r} in {location.storage.shown}")


def distributions(space: list[Param], grid: bool) -> dict[str, Any]:
    """What ask() samples: the sampled parameters; a grid's as categorical over its points."""
    import optuna
    out = {}
    for p in space:
        if p.sampled:
            out[p.key] = (optuna.distributions.CategoricalDistribution([encoded(v) for v in p.grid_values()])
                          if grid else _distribution(p))
    return out


def encoded(value: Any) -> Any:
    """A categorical choice as the study stores it: Optuna's choices are None, bool, int, float or str (others
    are not persistent and make optuna-dashboard fail), so a list or mapping is stored as its JSON text; the
    trial gets the value itself (trial_sets)."""
    return json.dumps(value) if isinstance(value, (list, tuple, dict)) else value


def encoded_point(point: dict[str, Any]) -> dict[str, Any]:
    return {key: encoded(value) for key, value in point.items()}


def trial_sets(space: list[Param], params: dict[str, Any]) -> dict[str, Any]:
    """A trial's run settings from its study params: the constants, then each param with a stored JSON text
    turned back into the space's list or mapping."""
    sets = {**constants(space), **params}
    for p in space:
        if p.type == "categorical" and isinstance(sets.get(p.key), str):
            sets[p.key] = {encoded(v): v for v in p.vals}.get(sets[p.key], sets[p.key])
    return sets


def _distribution(p: Param) -> Any:
    import optuna
    if p.type == "categorical":
        return optuna.distributions.CategoricalDistribution([encoded(v) for v in p.finite_values()])  # each once
    if p.type == "int":
        return optuna.distributions.IntDistribution(int(p.minval), int(p.maxval))
    if p.type == "double":
        return optuna.distributions.FloatDistribution(p.minval, p.maxval)
    if p.type == "log":
        return optuna.distributions.FloatDistribution(p.base ** p.minval, p.base ** p.maxval, log=True)
    raise ValueError(f"a constant has no distribution ({p.key})")


def quiet_optuna() -> None:
    """Optuna's own log lines (a trial finished, a study created) off: the sweep prints its own progress."""
    import optuna
    optuna.logging.set_verbosity(optuna.logging.WARNING)


def live_trial(study: Any, storage_id: int) -> Any:
    """The running trial `storage_id` (the storage's id, not its number) as an optuna Trial: report, should_prune."""
    import optuna
    return optuna.trial.Trial(study, storage_id)


def param_importances(study: Any) -> dict[str, float]:
    """Optuna's parameter importances of the finished trials (RuntimeError/ValueError when it cannot tell).

    Fewer than 2 completed trials is a ValueError in our words (Optuna would give equal importances and warn). Any
    other warning of its evaluator is a ValueError with its words: a result it warns about would read as a finding,
    and the warning would reach the user as a raw UserWarning line with a file path."""
    import warnings

    import optuna
    finished = len(study.get_trials(deepcopy=False, states=(optuna.trial.TrialState.COMPLETE,)))
    if finished < 2:
        raise ValueError(f"{finished} completed trial(s); importances need at least 2 to compare")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        scores = optuna.importance.get_param_importances(study)
    said = [str(w.message) for w in caught if issubclass(w.category, UserWarning)]
    if said:
        raise ValueError(said[0].rstrip("."))
    return scores


def initialize(study: Any, spec: SweepSpec, upf_lines: list, priors: list) -> None:
    """Enqueue the planned trials and import the priors, skipping any a killed earlier initialisation stored."""
    import optuna
    if study.user_attrs.get("initialized"):
        return
    existing = study.get_trials(deepcopy=False)
    known_ids = {t.user_attrs.get("trial_id") for t in existing}
    known_points = {json.dumps(t.user_attrs.get("sets", {}), sort_keys=True) for t in existing}
    known_points |= {json.dumps(t.system_attrs.get("fixed_params", {}), sort_keys=True) for t in existing}
    space_dists = distributions(spec.space, grid=spec.searcher_name == "grid")
    for index, prior in enumerate(priors):
        trial_id = f"prior{index:04d}"
        if trial_id not in known_ids:
            study.add_trial(optuna.trial.create_trial(
                params=encoded_point(prior.params), distributions={k: space_dists[k] for k in prior.params}, value=prior.y,
                user_attrs={"trial_id": trial_id, "imported": True, "sets": {**constants(spec.space), **prior.params}}))
    if spec.searcher_name == "upf":
        for line in upf_lines:
            if line.id not in known_ids:
                study.enqueue_trial({}, user_attrs={"trial_id": line.id, "sets": {**constants(spec.space), **line.params}})
    elif spec.searcher_name == "grid":
        for point in grid_points(spec.space):
            if not {json.dumps(point, sort_keys=True), json.dumps(encoded_point(point), sort_keys=True)} & known_points:
                study.enqueue_trial(encoded_point(point))
    study.set_user_attr("initialized", True)


def budget(spec: SweepSpec, upf_lines: list) -> int:
    if spec.searcher_name == "upf":
        return len(upf_lines)
    if spec.searcher_name == "grid":
        return len(grid_points(spec.space))
    return sampled_budget(spec.searcher, spec.space, distinct=not with_replacement(spec))


def sampled_budget(searcher: dict, space: list[Param], distinct: bool = True) -> int:
    """The budget of a searcher that samples (not grid, not upf): its max_trials, or, when points are `distinct`,
    the number of points of a space that has fewer (each point runs once)."""
    total, size = int(searcher.get("max_trials") or 1), space_size(space)
    return total if size is None or not distinct else min(total, size)


def with_replacement(spec: SweepSpec) -> bool:
    """Whether the sweep's trials draw their points with replacement: a Determined experiment's random or
    adaptive ASHA search, as Determined samples every trial's hyperparameters independently (sampleAll, in
    master/pkg/searcher/hyperparameters.go), so max_trials trials run however few points the space has. Every
    other sampling sweep runs distinct points (search/distinct.py)."""
    return bool(spec.experiment) and spec.searcher_name in ("random", "adaptive_asha")


def space_note(spec: SweepSpec) -> str | None:
    """The line said before a sampling sweep starts when its space has fewer points than max_trials."""
    size, total = space_size(spec.space), int(spec.searcher.get("max_trials") or 1)
    if spec.searcher_name in ("grid", "upf") or size is None or size >= total or with_replacement(spec):
        return None
    return (f"note: the space has {size} distinct points, fewer than max_trials {total}: the sweep runs {size} "
            f"trials, each point once")


def counted(trials: list) -> list:
    """The trials the budget counts: everything but imported priors and extra trials (`sweep continue`)."""
    return [t for t in trials if not t.user_attrs.get("imported") and not t.user_attrs.get("extra")]


def finished_in_budget(trials: list, total: int) -> int:
    """The budget's trials that reached a final state (complete, pruned, fail), never more than `total`: the
    count of the progress line. Extra and imported trials are not the budget's; a budget lowered below the trials
    already started (those still run to their end) shows as spent, not exceeded."""
    return min(total, sum(1 for t in counted(trials) if t.state.is_finished()))


class BudgetTally:
    """counted() and finished_in_budget() of a study's trial list, kept up as the list grows, so a claim or a
    trial's end looks only at new trials and at counted ones not yet finished, not at all of them: trials are
    only added, in number order; whether one counts (imported, extra) is fixed when it is created; a finished
    trial stays finished. A list not in that order (another storage's) is counted again from the start."""

    def __init__(self) -> None:
        self._seen: list = []           # [count, number of the last one] of the trials seen so far
        self.counted = 0                # the budget's trials (counted())
        self._finished = 0
        self._open: list[int] = []      # positions of counted trials not finished when last looked at
        self._waiting: list[int] = []   # positions of trials WAITING when last looked at (planned, or extra)
        self.extra: set[str] = set()    # ids of extra trials (`sweep continue`)
        self.waiting: list = []         # the WAITING trials of the list last given to update()

    def update(self, trials: list) -> "BudgetTally":
        if self._seen and (len(trials) < self._seen[0] or trials[self._seen[0] - 1].number != self._seen[1]):
            self.__init__()
        start = self._seen[0] if self._seen else 0
        for position in range(start, len(trials)):
            if trials[position].state.name == "WAITING":     # a trial is WAITING only from its creation on
                self._waiting.append(position)
            attrs = trials[position].user_attrs
            if attrs.get("extra"):
                self.extra.add(trial_id_of(trials[position]))
            elif not attrs.get("imported"):
                self.counted += 1
                self._open.append(position)
        if trials:
            self._seen = [len(trials), trials[-1].number]
        still = [p for p in self._open if not trials[p].state.is_finished()]
        self._finished += len(self._open) - len(still)
        self._open = still
        self._waiting = [p for p in self._waiting if trials[p].state.name == "WAITING"]
        self.waiting = [trials[p] for p in self._waiting]
        return self

    def finished_in_budget(self, total: int) -> int:
        """finished_in_budget(trials, total) of the trials last given to update()."""
        return min(total, self._finished)

"""SearcherContext as Determined 0.38.1 has it (deprecated there): operations() yields one SearcherOperation
whose length is the searcher's max_length for this trial (det_cluster.json's max_length; for adaptive ASHA
its top rung: the sweep ranks the trial at each rung from its validation records and prunes it by SIGTERM,
which should_preempt() reports). report_completed's metric goes to the run folder's det_searcher.jsonl; the
sweep itself reads the validation records of metrics.jsonl.
"""
from __future__ import annotations

import enum
import logging
import warnings
from typing import Any, Iterator, Optional

logger = logging.getLogger("determined.core")

DEPRECATED = ("SearcherContext.operations() was deprecated in Determined 0.38.0 and will be removed in a future "
              "version.  Instead, you should set your training length directly in your training code.")
MISSING = ("SearcherContext was not created because your experiment config does not have the searcher.max_length "
           "set.  Both the searcher.max_length and the SearcherContext are deprecated.  Instead, you should specify "
           "your training length directly in your training code and avoid all calls to core_context.searcher.")


class Unit(enum.Enum):
    EPOCHS = "EPOCHS"
    RECORDS = "RECORDS"
    BATCHES = "BATCHES"


def _parse_searcher_max_length(experiment_config: dict) -> Optional[int]:
    max_length = (experiment_config.get("searcher") or {}).get("max_length")
    if max_length is None or isinstance(max_length, int):
        return max_length
    values = list(max_length.values())
    return values[0] if values else None


def _parse_searcher_units(experiment_config: dict) -> Optional[Unit]:
    searcher = experiment_config.get("searcher") or {}
    names = {"records": Unit.RECORDS, "epochs": Unit.EPOCHS, "batches": Unit.BATCHES}
    if "unit" in searcher:
        return names.get(searcher["unit"])
    length = searcher.get("max_length")
    return names.get(next(iter(length))) if isinstance(length, dict) and len(length) == 1 else None


class SearcherMode(enum.Enum):
    WorkersAskChief = "WORKERS_ASK_CHIEF"
    ChiefOnly = "CHEIF_ONLY"       # sic: Determined's value


class SearcherOperation:
    """Train until `length` (absolute, in the searcher's unit), validate, then report_completed(metric)."""

    def __init__(self, length: int, is_chief: bool, trial_id: int = 1, _on_completed: Any = None) -> None:
        self._length, self._is_chief, self._trial_number = length, is_chief, trial_id
        self._completed = False
        self._on_completed = _on_completed

    @property
    def length(self) -> int:
        return self._length

    def report_progress(self, length: float) -> None:
        if not self._is_chief:
            raise RuntimeError("you must only call op.report_progress() from the chief worker")
        if self._completed and length != self._length:
            raise RuntimeError("you must not call op.report_progress() after op.report_completed()")
        logger.debug(f"op.report_progress({length}) of {self._length}")

    def report_completed(self, searcher_metric: Any) -> None:
        if not self._is_chief:
            raise RuntimeError("you must only call op.report_completed() from the chief worker")
        if self._completed:
            raise RuntimeError("you may only call op.report_completed() once")
        self._completed = True
        logger.info(f"SearcherOperation Complete: searcher_metric={searcher_metric!r}")
        if self._on_completed is not None:
            self._on_completed(self._length, searcher_metric)


class DummySearcherOperation(SearcherOperation):
    def __init__(self, length: int, is_chief: bool) -> None:
        super().__init__(length, is_chief)


class SearcherContext:
    def __init__(self, dist: Any, trial_id: int, max_length: int, units: Optional[Unit] = None,
                 _on_completed: Any = None) -> None:
        self._dist, self._trial_number, self._length, self._units = dist, trial_id, max_length, units
        self._on_completed = _on_completed

    def operations(self, searcher_mode: SearcherMode = SearcherMode.WorkersAskChief,
                   auto_ack: bool = True) -> Iterator[SearcherOperation]:
        warnings.warn(DEPRECATED, FutureWarning, stacklevel=2)
        yield from self._operations(searcher_mode)

    def _make_op(self, length: int, is_chief: bool) -> SearcherOperation:
        return SearcherOperation(length, is_chief, self._trial_number, self._on_completed)

    def _operations(self, searcher_mode: SearcherMode = SearcherMode.WorkersAskChief) -> Iterator[SearcherOperation]:
        searcher_mode = SearcherMode(searcher_mode)
        if self._dist.rank == 0:
            op = self._make_op(self._length, True)
            if searcher_mode == SearcherMode.WorkersAskChief:
                self._dist.broadcast(op.length)
            yield op
            if not op._completed:
                raise RuntimeError("you must call op.report_completed() on each operation")
            if searcher_mode == SearcherMode.WorkersAskChief:
                self._dist.broadcast(None)
        else:
            if searcher_mode != SearcherMode.WorkersAskChief:
                raise RuntimeError("you cannot call searcher.operations(searcher_mode=ChiefOnly) from a non-chief "
                                   "worker.")
            while True:
                length = self._dist.broadcast(None)
                if length is None:
                    break
                yield self._make_op(length, False)

    def acknowledge_out_of_ops(self) -> None:
        pass

    def get_configured_units(self) -> Optional[Unit]:
        return self._units


class DummySearcherContext(SearcherContext):
    """Off-cluster: one operation of `length` (1) in epochs."""

    def __init__(self, dist: Any, length: int = 1) -> None:
        super().__init__(dist, 1, length, Unit.EPOCHS)

    def _make_op(self, length: int, is_chief: bool) -> SearcherOperation:
        return DummySearcherOperation(length, is_chief)


class SearcherContextMissing(SearcherContext):
    """The experiment gives no max_length (0.38's max_time configurations): every call says so."""

    def __init__(self) -> None:
        pass

    def operations(self, searcher_mode: SearcherMode = SearcherMode.WorkersAskChief,
                   auto_ack: bool = True) -> Iterator[SearcherOperation]:
        raise ValueError(MISSING)

    def acknowledge_out_of_ops(self) -> None:
        raise ValueError(MISSING)

    def get_configured_units(self) -> Optional[Unit]:
        raise ValueError(MISSING)

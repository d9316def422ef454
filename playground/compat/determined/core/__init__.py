"""Determined 0.38.1's Core API (`determined.core`) on playground: `core.init()` and the contexts it gives
(checkpoint, distributed, preempt, searcher, train, profiler), with Determined's signatures. What each writes
in the run folder is said in its module; docs/determined.md has the table of members.
"""
from playground.compat.determined.core._distributed import (DistributedContext, DummyDistributedContext,
                                                            _run_on_rank_0_and_broadcast)
from playground.compat.determined.core._checkpoint import CheckpointContext, DownloadMode, DummyCheckpointContext
from playground.compat.determined.core._train import DummyTrainContext, EarlyExitReason, TensorboardMode, TrainContext
from playground.compat.determined.core._searcher import (DummySearcherContext, DummySearcherOperation, SearcherContext,
                                                         SearcherContextMissing, SearcherMode, SearcherOperation,
                                                         Unit, _parse_searcher_max_length, _parse_searcher_units)
from playground.compat.determined.core._preempt import (DummyPreemptContext, PreemptContext, PreemptMode,
                                                        _PreemptionWatcher)
from playground.compat.determined.core._context import (Context, DummyExperimentalCoreContext,
                                                        DummyProfilerContext, ExperimentalCoreContext,
                                                        ProfilerContext, _dummy_init, init)

__all__ = ["CheckpointContext", "Context", "DistributedContext", "DownloadMode", "DummyCheckpointContext",
           "DummyDistributedContext", "DummyExperimentalCoreContext", "DummyPreemptContext", "DummyProfilerContext",
           "DummySearcherContext", "DummySearcherOperation", "DummyTrainContext", "EarlyExitReason",
           "ExperimentalCoreContext", "PreemptContext", "PreemptMode", "ProfilerContext", "SearcherContext",
           "SearcherContextMissing", "SearcherMode", "SearcherOperation", "TensorboardMode", "TrainContext", "Unit",
           "init"]

"""How long adaptive ASHA's trials train: max_time in the searcher's time_metric, turned into the run's
`epoch_iter.num_epochs`, or refused (SweepError) when the base opts cannot make a run that long.

A run's length is a whole number of epochs; an epoch is num_train_sample_per_epoch // global batch iterations
(the trainer's arithmetic), each of global batch samples. So max_time in iterations or samples must be a whole
number of epochs of the base opts, and the keys that size an epoch may not vary across trials. A space that sets
`epoch_iter.num_epochs` itself keeps it, whatever the time metric.
"""
from __future__ import annotations

from dataclasses import replace

from playground.sweeps.errors import SweepError
from playground.sweeps.inputs.space import Param
from playground.sweeps.inputs.spec import SweepSpec

EPOCHS_KEY = "epoch_iter.num_epochs"
EPOCH_SIZE_KEYS = ("epoch_iter.num_train_sample_per_epoch", "epoch_iter.batch_per_device", "distributed.num_gpus",
                   "distributed.num_cpus", "distributed.num_shards")


def global_batch_of(opts: dict) -> int:
    """Samples per training iteration: batch_per_device x devices (num_gpus, else num_cpus, else 1) x shards;
    0 when the opts have no batch_per_device (not a playground run's opts)."""
    dist = opts.get("distributed") or {}
    devices = dist.get("num_gpus") or dist.get("num_cpus") or 1
    batch = (opts.get("epoch_iter") or {}).get("batch_per_device") or 0
    return int(batch) * int(devices) * int(dist.get("num_shards") or 1)


def needs_base_opts(spec: SweepSpec) -> bool:
    """Whether the trial length comes from the base opts (ASHA in iterations or samples, no num_epochs given)."""
    return (spec.searcher_name == "adaptive_asha" and spec.searcher.get("time_metric") in ("iteration", "samples")
            and not _sets_epochs(spec))


def asha_length(spec: SweepSpec, base_opts: dict | None) -> SweepSpec:
    """`spec` with `epoch_iter.num_epochs` a constant of its space, so each trial trains max_time; unchanged for
    other searchers or a space that sets the epochs itself. `base_opts` (resolved) is needed when needs_base_opts."""
    s = spec.searcher
    if spec.searcher_name != "adaptive_asha" or _sets_epochs(spec):
        return spec
    if s.get("time_metric") == "epochs":
        epochs = s["max_time"]
    else:
        epochs = _epochs_for(spec, base_opts)
    return replace(spec, space=[*spec.space, Param(EPOCHS_KEY, "const", val=epochs)])


def _sets_epochs(spec: SweepSpec) -> bool:
    return any(p.key == EPOCHS_KEY for p in spec.space)


def _epochs_for(spec: SweepSpec, base_opts: dict | None) -> int:
    s = spec.searcher
    unit, max_time = s["time_metric"], s["max_time"]
    where = f"searcher: adaptive_asha with time_metric {unit} (max_time {max_time})"
    if base_opts is None:
        raise SweepError(f"{where}: a CANDLE script's run length is its own; use time_metric epochs")
    varied = [p.key for p in spec.space if p.key in EPOCH_SIZE_KEYS and p.sampled]
    if varied:
        raise SweepError(f"{where}: the space varies {', '.join(varied)}, so trials' epochs differ in length and "
                         f"no one num_epochs trains each for max_time; fix them, or set {EPOCHS_KEY} in the space")
    opts = _with_constants(base_opts, spec.space)
    samples = int(opts["epoch_iter"].get("num_train_sample_per_epoch") or 0)
    batch = global_batch_of(opts)
    if samples <= 0 or batch <= 0:
        raise SweepError(f"{where}: the base opts' epoch_iter.num_train_sample_per_epoch is {samples} (one pass "
                         f"over the training set, whose size is known only when a run loads it), so the sweep "
                         f"cannot tell how many epochs make max_time; set it, or set {EPOCHS_KEY} in the space")
    iterations = samples // batch
    per_epoch = iterations if unit == "iteration" else iterations * batch
    if per_epoch <= 0 or max_time % per_epoch:
        raise SweepError(f"{where}: an epoch of the base opts is {per_epoch} {unit} ({samples} samples per epoch, "
                         f"global batch {batch}); max_time must be a whole number of epochs, e.g. "
                         f"{max(round(max_time / per_epoch), 1) * per_epoch if per_epoch else 'a multiple'}")
    return max_time // per_epoch


def _with_constants(opts: dict, space: list[Param]) -> dict:
    """The base opts with the space's constants among the epoch-size keys applied."""
    out = {section: dict(values) if isinstance(values, dict) else values for section, values in opts.items()}
    for p in space:
        if p.key in EPOCH_SIZE_KEYS and p.type == "const":
            section, _, name = p.key.partition(".")
            out.setdefault(section, {})[name] = p.val
    return out

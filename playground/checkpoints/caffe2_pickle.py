"""Reads the original Caffe2 Playground's `.pkl` checkpoints without running anything from the file.

The original saved `pickle.dump({"blobs": {...}, "epoch": ..., "lr": ..., "best_metric": ...})` where the blobs
are numpy arrays by unscoped name (`conv1_w`, ...); `epoch`, `best_metric` and `lr` may also be among the
blobs (read from either place, the top level winning); older files may be a bare blob dict or keep device
scopes (`gpu_0/conv1_w`). Python 2 pickles (protocol 2, byte strings) and Python 3 ones are both read. The
unpickler resolves only numpy's array/scalar/dtype reconstruction and plain containers; any other global in
the file is refused with `Caffe2PickleError`, so a malicious file cannot execute code.
"""
from __future__ import annotations

import collections
import os
import pickle
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from playground.processes.exit_codes import UserError


class Caffe2PickleError(UserError, ValueError):
    """The file is not a readable Caffe2 Playground checkpoint (or holds something other than arrays)."""


class _Refused(pickle.UnpicklingError):
    """Raised by the unpickler for content it does not allow (as opposed to a damaged file)."""


def _latin1_encode(text: str, encoding: str = "latin1") -> bytes:
    # Python 3 pickles of bytes at protocol <= 2 call _codecs.encode(text, "latin1"); allow that codec only.
    if encoding.replace("-", "").lower() not in ("latin1", "iso88591"):
        raise _Refused(f"_codecs.encode with encoding {encoding!r} is not allowed")
    return text.encode("latin1")


def _numpy_globals() -> dict[str, Any]:
    # Found through the objects themselves, so both numpy.core (numpy 1) and numpy._core (numpy 2) names work.
    reconstruct = np.ndarray((0,)).__reduce__()[0]
    scalar = np.float32(0).__reduce__()[0]
    frombuffer = np.zeros(1).__reduce_ex__(5)[0]
    allowed: dict[str, Any] = {}
    for package in ("numpy.core", "numpy._core"):
        allowed[f"{package}.multiarray._reconstruct"] = reconstruct
        allowed[f"{package}.multiarray.scalar"] = scalar
        allowed[f"{package}.numeric._frombuffer"] = frombuffer
    allowed.update({"numpy.ndarray": np.ndarray, "numpy.dtype": np.dtype, "_codecs.encode": _latin1_encode,
                    "collections.OrderedDict": collections.OrderedDict})
    for builtin in (dict, list, tuple, set, frozenset, bytearray, complex):
        allowed[f"builtins.{builtin.__name__}"] = builtin
        allowed[f"__builtin__.{builtin.__name__}"] = builtin
    return allowed


class _ArraysOnlyUnpickler(pickle.Unpickler):
    allowed = _numpy_globals()

    def find_class(self, module: str, name: str) -> Any:
        found = self.allowed.get(f"{module}.{name}")
        if found is None:
            raise _Refused(f"the file wants to create {module}.{name}; only numpy arrays and plain "
                                         "containers are allowed in a checkpoint")
        return found

    def persistent_load(self, pid: Any) -> Any:
        raise _Refused("the file refers to external (persistent) objects; not allowed")


@dataclass
class Caffe2Checkpoint:
    blobs: dict[str, np.ndarray]                         # unscoped name -> array
    metadata: dict[str, Any] = field(default_factory=dict)   # epoch, best_metric, lr when present
    scopes: list[str] = field(default_factory=list)      # device scopes that were stripped, e.g. ["gpu_0"]


METADATA_KEYS = ("epoch", "best_metric", "lr")


def read_pickle(path: str) -> Any:
    """Unpickle `path` allowing numpy arrays and plain containers only (Python 2 strings read as latin-1)."""
    if not os.path.isfile(path):
        raise Caffe2PickleError(f"{path}: no such file")
    try:
        with open(path, "rb") as handle:
            return _ArraysOnlyUnpickler(handle, encoding="latin1").load()
    except _Refused as err:
        raise Caffe2PickleError(f"{path}: refused: {err}") from None
    except (pickle.UnpicklingError, EOFError, ValueError, TypeError, AttributeError, IndexError, KeyError,
            OSError) as err:
        raise Caffe2PickleError(f"{path}: not a readable pickle ({type(err).__name__}: {err}); is it an original "
                                "Caffe2 Playground checkpoint?") from None


def read_caffe2_checkpoint(path: str) -> Caffe2Checkpoint:
    """The blobs of an original Playground checkpoint, device scopes stripped, metadata set apart."""
    data = read_pickle(path)
    beside: dict[str, Any] = {}
    if isinstance(data, dict) and "blobs" in data:
        # the original pickled {"blobs": {...}, "epoch": e, "lr": lr, "best_metric": m}: metadata beside the blobs
        beside = {_text(k): _plain(v) for k, v in data.items() if _text(k) in METADATA_KEYS}
        data = data["blobs"]
    if not isinstance(data, dict):
        raise Caffe2PickleError(f"{path}: holds a {type(data).__name__}; a Caffe2 Playground checkpoint is a dict "
                                "of blobs (optionally under 'blobs')")
    checkpoint = Caffe2Checkpoint(blobs={})
    # Sorted, so that with several device copies (gpu_0/x, gpu_1/x) the first device's copy is kept.
    for raw_name in sorted(data, key=_text):
        name, value = _text(raw_name), data[raw_name]
        scope, _, unscoped = name.rpartition("/")
        if unscoped in METADATA_KEYS and not scope:
            checkpoint.metadata[unscoped] = _plain(value)
            continue
        if scope and scope not in checkpoint.scopes:
            checkpoint.scopes.append(scope)
        if not isinstance(value, np.ndarray):
            raise Caffe2PickleError(f"{path}: blob {name!r} is a {type(value).__name__}, not an array")
        checkpoint.blobs.setdefault(unscoped, value)
    if not checkpoint.blobs:
        raise Caffe2PickleError(f"{path}: holds no blobs")
    checkpoint.metadata.update(beside)
    return checkpoint


def _text(name: Any) -> str:
    return name.decode("latin1") if isinstance(name, bytes) else str(name)


def _plain(value: Any) -> Any:
    if isinstance(value, np.ndarray) and value.size == 1:
        return value.reshape(()).item()
    return value.item() if isinstance(value, np.generic) else value

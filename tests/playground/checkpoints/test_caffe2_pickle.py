"""Reading original Caffe2 Playground checkpoints safely (playground/checkpoints/caffe2_pickle.py)."""
from __future__ import annotations

import collections
import pickle
import struct

import numpy as np
import pytest

from playground.checkpoints.caffe2_pickle import Caffe2PickleError, read_caffe2_checkpoint, read_pickle


def _py2_str(data: bytes) -> bytes:
    return b"T" + struct.pack("<I", len(data)) + data           # BINSTRING: a Python 2 byte string


def _py2_unicode(text: str) -> bytes:
    data = text.encode("utf-8")
    return b"X" + struct.pack("<I", len(data)) + data           # BINUNICODE


def _py2_int(value: int) -> bytes:
    return b"J" + struct.pack("<i", value)                       # BININT


def _py2_array(array: np.ndarray) -> bytes:
    """The opcodes Python 2's cPickle (protocol 2) wrote for a numpy array."""
    dtype = (b"cnumpy\ndtype\n(" + _py2_str(array.dtype.str[1:].encode()) + _py2_int(0) + _py2_int(1) + b"tR("
             + _py2_int(3) + _py2_str(b"<") + b"NNN" + _py2_int(-1) + _py2_int(-1) + _py2_int(0) + b"tb")
    shape = b"(" + b"".join(_py2_int(s) for s in array.shape) + b"t"
    data = array.astype("<" + array.dtype.str[1:]).tobytes()
    return (b"cnumpy.core.multiarray\n_reconstruct\n(cnumpy\nndarray\n(" + _py2_int(0) + b"t" + _py2_str(b"b")
            + b"tR(" + _py2_int(1) + shape + dtype + b"\x89" + _py2_str(data) + b"tb")


def py2_checkpoint(blobs: dict[str, np.ndarray], epoch: int) -> bytes:
    """A checkpoint as the original wrote it under Python 2: {u"blobs": {u"epoch": 3, u"conv1_w": array, ...}}."""
    items = _py2_unicode("epoch") + _py2_int(epoch)
    for name, array in blobs.items():
        items += _py2_unicode(name) + _py2_array(array)
    return b"\x80\x02}(" + _py2_unicode("blobs") + b"}(" + items + b"uu."


def arrays() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(0)
    return {"conv1_w": rng.standard_normal((4, 3, 3, 3)).astype(np.float32),
            "res_conv1_bn_riv": rng.random(4).astype(np.float32),
            "pred_b": np.arange(5, dtype=np.float64)}


def test_a_python2_checkpoint_reads_back_the_same_arrays(tmp_path):
    path = tmp_path / "py2.pkl"
    path.write_bytes(py2_checkpoint(arrays(), epoch=3))
    checkpoint = read_caffe2_checkpoint(str(path))
    assert checkpoint.metadata == {"epoch": 3}
    assert sorted(checkpoint.blobs) == sorted(arrays())
    for name, array in arrays().items():
        np.testing.assert_array_equal(checkpoint.blobs[name], array)
        assert checkpoint.blobs[name].dtype == array.dtype


@pytest.mark.parametrize("protocol", [2, 4, pickle.HIGHEST_PROTOCOL])
def test_python3_checkpoints_with_device_scopes_and_metadata(tmp_path, protocol):
    blobs = {f"gpu_0/{k}": v for k, v in arrays().items()}
    blobs.update({"gpu_1/conv1_w": np.zeros((4, 3, 3, 3), np.float32), "epoch": 7, "best_metric": float("-inf"),
                  "lr": np.array([0.05], np.float32)})
    path = tmp_path / "py3.pkl"
    path.write_bytes(pickle.dumps({"blobs": collections.OrderedDict(blobs)}, protocol=protocol))
    checkpoint = read_caffe2_checkpoint(str(path))
    assert checkpoint.scopes == ["gpu_0", "gpu_1"]
    np.testing.assert_array_equal(checkpoint.blobs["conv1_w"], arrays()["conv1_w"])   # the first device's copy
    assert checkpoint.metadata["epoch"] == 7 and checkpoint.metadata["lr"] == pytest.approx(0.05)


class _Evil:
    def __reduce__(self):
        import os
        return (os.system, ("echo owned > owned.txt",))


def test_anything_but_arrays_and_containers_is_refused_before_it_runs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "evil.pkl"
    path.write_bytes(pickle.dumps({"blobs": {"conv1_w": np.zeros(2), "x": _Evil()}}, protocol=2))
    with pytest.raises(Caffe2PickleError, match=r"evil.pkl: refused: the file wants to create (posix|os)\.system"):
        read_pickle(str(path))
    assert not (tmp_path / "owned.txt").exists()


def test_object_arrays_cannot_smuggle_objects_in(tmp_path):
    path = tmp_path / "objects.pkl"
    path.write_bytes(pickle.dumps({"w": np.array([_Evil()], dtype=object)}, protocol=2))
    with pytest.raises(Caffe2PickleError, match="refused"):
        read_pickle(str(path))


def test_files_that_are_not_checkpoints_say_so(tmp_path):
    garbage = tmp_path / "garbage.pkl"
    garbage.write_bytes(b"not a pickle at all")
    with pytest.raises(Caffe2PickleError, match="garbage.pkl: not a readable pickle"):
        read_caffe2_checkpoint(str(garbage))
    listing = tmp_path / "list.pkl"
    listing.write_bytes(pickle.dumps([1, 2]))
    with pytest.raises(Caffe2PickleError, match="holds a list"):
        read_caffe2_checkpoint(str(listing))
    with pytest.raises(Caffe2PickleError, match="no such file"):
        read_caffe2_checkpoint(str(tmp_path / "missing.pkl"))

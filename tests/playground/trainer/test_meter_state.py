"""Meter state (playground/trainer/meter_state.py, metrics_book.py): named tensors of any shape, added over ranks,
checkpointed per rank and restored exactly; the complete example of docs/components.md is the meter used."""
from __future__ import annotations

import os
import re
import sys

import pytest
import torch

from playground.api import prepare_opts, run
from playground.options.layers import OptsError
from tests.conftest import REPO, tiny_opts


@pytest.fixture
def confusion_meter(tmp_path, monkeypatch):
    """The docs' confusion-matrix meter, written exactly as docs/components.md shows it."""
    docs = (REPO / "docs" / "components.md").read_text()
    code = re.search(r"A meter whose state is a matrix, complete \(mylab/confusion.py\):\n\n```python\n(.*?)```",
                     docs, re.S).group(1)
    (tmp_path / "doc_confusion.py").write_text(code)    # a name no other test imports (sys.modules is shared)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    yield "doc_confusion.ConfusionRecall"
    sys.modules.pop("doc_confusion", None)


def recall_opts(meter: str, **epoch_iter) -> dict:
    opts = tiny_opts(model={"forward_pass_py": "mlp_forward"}, model_param={"mlp_hidden": [16]},
                     epoch_iter=epoch_iter)
    opts["output"]["plots"] = []
    opts["output"]["metrics"] += [{"name": "train_recall", "meter_py": meter, "meter_kargs": {}, "is_train": True},
                                  {"name": "test_recall", "meter_py": meter, "meter_kargs": {}, "is_train": False}]
    return opts


def test_a_matrix_state_is_checkpointed_mid_interval_and_restored_exactly(tmp_path, confusion_meter):
    opts = recall_opts(confusion_meter)
    opts["output"]["ckpt_every_n_iters"] = 3        # between the record points at iterations 2 and 4
    whole = run(opts, run_dir=str(tmp_path))
    mid = tmp_path / "checkpoints" / "model_checkpoint_epoch0_iter3.pt"
    saved = torch.load(mid, weights_only=True)["ranks"][0]["meters"]["train_recall"]["matrix"]
    assert saved.shape == (10, 10) and int(saved.sum()) == 16    # one iteration of 16 since the last point
    os.replace(tmp_path / "metrics.jsonl", tmp_path / "whole.jsonl")
    os.symlink(mid.name, tmp_path / "checkpoints" / "last.new")
    os.replace(tmp_path / "checkpoints" / "last.new", tmp_path / "checkpoints" / "last")
    again = run(opts, run_dir=str(tmp_path))
    assert again["metrics"]["train_recall"] == whole["metrics"]["train_recall"]
    assert again["metrics"]["test_recall"] == whole["metrics"]["test_recall"]
    assert all(v is not None for v in whole["metrics"]["test_recall"])


@pytest.mark.slow
def test_a_matrix_state_is_added_over_two_ranks(tmp_path, confusion_meter):
    results = {1: run(recall_opts(confusion_meter), run_dir=str(tmp_path / "1"))["metrics"]}
    opts = recall_opts(confusion_meter, batch_per_device=8)
    opts["distributed"]["num_cpus"] = 2
    results[2] = run(opts, run_dir=str(tmp_path / "2"))["metrics"]     # two spawned rank processes
    for name in ("train_recall", "test_recall"):
        assert results[2][name] == pytest.approx(results[1][name], abs=1e-12), name


def test_a_meter_that_raises_while_being_built_is_an_opts_error(tmp_path, monkeypatch):
    (tmp_path / "broken_meter.py").write_text(
        "class Broken:\n    def __init__(self, opts=None):\n        raise KeyError('input.classes')\n"
        "    def Reset(self): pass\n    def Add(self, blobs): pass\n    def Compute(self): return None\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    opts = tiny_opts()
    opts["output"]["metrics"].append({"name": "test_broken", "meter_py": "broken_meter.Broken", "meter_kargs": {},
                                      "is_train": False})
    with pytest.raises(OptsError, match=r"opts.output.metrics\[4\]: broken_meter.Broken raised KeyError while being "
                                        r"built with meter_kargs \{\}: 'input.classes'"):
        prepare_opts(opts, run_dir=str(tmp_path / "never"))
    assert not (tmp_path / "never").exists()

"""The original AnyExp's set-up and output methods (init_metrics, getMeterClass, add_metric, init_plots, add_plot,
init_logs, extendMetricsOutput), called where Caffe2's AnyExp called them so that an override of any of them
works, and the two timings of interval record points (epoch_iter.record_points_at)."""
from __future__ import annotations

import json
import logging
import sys

import pytest

from playground.api import run
from tests.conftest import tiny_opts
from tests.playground.trainer.test_anyexp import user_modules  # noqa: F401 - the fixture: modules outside the repository

# Written as for Caffe2's Playground: its own meter, plot and log set-up, and an extra output list.
ORIGINAL_OVERRIDE = '''
CALLS = []


class CountBatches:
    """An original-style meter: Reset, Add, Compute."""
    def __init__(self, opts=None):
        self.Reset()

    def Reset(self):
        self.n = 0

    def Add(self, *args):
        self.n += 1

    def Compute(self):
        return float(self.n)


def init_metrics(self):
    CALLS.append("init_metrics")
    super(type(self), self).init_metrics()
    self.add_metric("train_batches", CountBatches(self.opts), True)


def getMeterClass(self, meterName):
    CALLS.append("getMeterClass " + meterName)
    return super(type(self), self).getMeterClass(meterName)


def add_metric(self, name, calculator, is_train):
    CALLS.append("add_metric " + name)
    super(type(self), self).add_metric(name, calculator, is_train)


def init_plots(self):
    CALLS.append("init_plots")
    self.add_plot("epochs", "epochs", ["train_batches"], "batches per record point")


def add_plot(self, x, x_title, ys, y_title):
    CALLS.append("add_plot " + y_title)
    super(type(self), self).add_plot(x, x_title, ys, y_title)


def init_logs(self):
    CALLS.append("init_logs")
    super(type(self), self).init_logs()


def extendMetricsOutput(self):
    CALLS.append("extendMetricsOutput")
    super(type(self), self).extendMetricsOutput()
    self.metrics_output["train_batches_total"] = [sum(v for v in self.metrics_output["train_batches"] if v)]
'''


def one_epoch_of_4_iterations(override: str) -> dict:
    """Tiny opts with `override` as additional_override_py: one epoch, a record point every 2 iterations."""
    return tiny_opts(model={"additional_override_py": override},
                     epoch_iter={"num_epochs": 1, "num_train_sample_per_epoch": 64, "batch_per_device": 16,
                                 "num_train_iteration_per_test": 2})


def test_an_original_override_of_each_set_up_and_output_method_is_called_where_the_original_called_it(
        tmp_path, user_modules, caplog):
    module = user_modules("original_override", ORIGINAL_OVERRIDE)
    opts = one_epoch_of_4_iterations(module)
    with caplog.at_level(logging.WARNING, logger="playground"):
        result = run(opts, run_dir=str(tmp_path / "run"))
    assert "not a trainer method" not in caplog.text
    names = [m["name"] for m in opts["output"]["metrics"]]
    meters = [f"getMeterClass {m['meter_py']}" for m in opts["output"]["metrics"]]
    assert sys.modules[module].CALLS == (
        ["init_metrics"] + [call for pair in zip(meters, (f"add_metric {n}" for n in names)) for call in pair]
        + ["add_metric train_batches", "init_plots", "add_plot batches per record point", "init_logs",
           "extendMetricsOutput"])
    # 4 iterations: points after iterations 2 and 4, and the epoch's end (no batch since the last point)
    assert result["metrics"]["train_batches"] == [2.0, 2.0, 0.0]
    assert result["metrics"]["train_batches_total"] == [4.0]
    assert len(list((tmp_path / "run").glob("plot*.png"))) == 1     # the override's plot, not the opts' two
    records = [json.loads(x) for x in (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()]
    assert [r["train_batches"] for r in records] == [2.0, 2.0, 0.0]
    results = json.loads((tmp_path / "run" / "results.json").read_text())
    assert results["metrics"]["train_batches_total"] == [4.0]       # what the override added is kept
    assert results["metrics"]["train_batches"] == [2.0, 2.0, 0.0]


# Caffe2's metrics_output started as a dict ({} from initOpts): an override may add to it before calling super,
# or instead of calling it (the result then holds its entries alone, the results.json lists stay complete).
ADD_FIRST = """
import numpy
def extendMetricsOutput(self):
    self.metrics_output["points"] = [len(self.record_epochs)]
    self.metrics_output["as_array"] = numpy.array([0.5, 1.5])
    super(type(self), self).extendMetricsOutput()
"""
WITHOUT_SUPER = """
def extendMetricsOutput(self):
    self.metrics_output["points"] = [len(self.record_epochs)]
"""


@pytest.mark.parametrize("code", [ADD_FIRST, WITHOUT_SUPER], ids=["adds-then-super", "never-calls-super"])
def test_an_extendMetricsOutput_that_adds_before_or_without_super_runs_and_results_json_keeps_its_lists(
        tmp_path, user_modules, code):
    opts = one_epoch_of_4_iterations(user_modules("extend_first", code))
    result = run(opts, run_dir=str(tmp_path / "run"))
    results = json.loads((tmp_path / "run" / "results.json").read_text())
    assert result["metrics"]["points"] == results["metrics"]["points"] == [3]    # 2 interval points + the epoch end
    assert len(results["metrics"]["epochs"]) == len(results["metrics"]["test_loss"]) == 3
    if code == ADD_FIRST:
        assert result["metrics"]["epochs"] == results["metrics"]["epochs"]
        assert results["metrics"]["as_array"] == [0.5, 1.5]
    else:
        assert set(result["metrics"]) == {"points"}       # as in Caffe2: only what the override put there


# epochs of the records of an epoch of 8 iterations, points every 4: iterations done / 8, or Caffe2's fract_epoch
# epoch + epoch_iter / 8 with epoch_iter the 0-based iteration of the point (0 and 4), so plots line up with its runs'
@pytest.mark.parametrize("timing, interval_points, fractions", [("interval_end", [4, 8], [0.5, 1.0, 1.0]),
                                                                ("caffe2", [1, 5], [0.0, 0.5, 1.0])])
def test_interval_record_points_close_n_iterations_or_fire_at_the_originals_iterations(tmp_path, timing,
                                                                                      interval_points, fractions):
    opts = tiny_opts(epoch_iter={"num_epochs": 2, "num_train_sample_per_epoch": 128, "batch_per_device": 16,
                                 "num_train_iteration_per_test": 4, "num_test_iter": 1,
                                 "record_points_at": timing})
    opts["output"]["plots"] = []
    run(opts, run_dir=str(tmp_path / "run"))
    records = [json.loads(x) for x in (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()]
    # a record's epoch_iter counts the epoch's iterations done: i + 1 after 0-based iteration i
    expected = [(epoch, "interval", done) for epoch in (0, 1) for done in interval_points]
    expected += [(0, "epoch", 8), (1, "epoch", 8)]
    assert sorted((r["epoch"], r["kind"], r["epoch_iter"]) for r in records) == sorted(expected)
    assert [r["kind"] for r in records] == ["interval", "interval", "epoch"] * 2
    assert [r["epochs"] for r in records] == [epoch + f for epoch in (0, 1) for f in fractions]
    results = json.loads((tmp_path / "run" / "results.json").read_text())
    assert results["metrics"]["epochs"] == [r["epochs"] for r in records]
